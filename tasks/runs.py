"""describe_run / finish_run: build the RunRecord (provenance) around a measurement."""

from __future__ import annotations

import datetime as dt
import json
import math
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from tcobench import __version__
from tcobench.errors import ExitCode, RunError
from tcobench.schemas import BenchmarkConfig, LoadMode, Protocol, RequestRecord, RunRecord, RunStatus
from tcobench.tasks.analysis.classify_failure import classify_failure
from tcobench.tasks.engine.base import RunningEngine
from tcobench.tasks.engine.serving import serving_columns
from tcobench.tasks.host.identity import declared_columns, host_identity, reconcile
from tcobench.tasks.load.limits import reached
from tcobench.tasks.load.protocols import EngineInfo, adapter_for
from tcobench.tasks.load.record import MeasureResult
from tcobench.tasks.load.selfcheck import run_fields
from tcobench.tasks.redact import redact
from tcobench.tasks.workload import WorkloadPlan
from tcobench.tasks.workload.plan import sha256_json
from tcobench.tasks.workload.profiles import claim_shortfalls

__all__ = [
    "PARTIAL_THRESHOLD",
    "check_runs",
    "check_shapes",
    "config_hash",
    "describe_run",
    "failed_run_record",
    "finish_run",
    "git_revision",
    "new_id",
    "prompt_set_hash",
    "run_verdict",
    "worst_exit",
]

# A run whose failed share of measured requests is above this makes the command exit 4 (partial); at or below it
# the run is still stored as partial, but the command exits 0. `--partial-threshold` changes it.
PARTIAL_THRESHOLD = 0.05


def new_id() -> str:
    return uuid.uuid4().hex


def prompt_set_hash(plan: WorkloadPlan) -> str:
    return sha256_json(plan.prompt_set_key())


def config_hash(config: BenchmarkConfig) -> str:
    return sha256_json(config.model_dump(mode="json"))


@cache
def git_revision() -> str | None:
    """Commit of the tcobench source tree, when it runs from a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def describe_run(
    config: BenchmarkConfig,
    engine: RunningEngine,
    api: str,
    host: str,
    batch_id: str,
    concurrency: int,
    device_facts: Mapping[str, Any] | None = None,
    plan: WorkloadPlan | None = None,
    cell: str | None = None,
) -> RunRecord:
    """A RunRecord for a run about to start (status failed until finish_run says otherwise).

    ``cell`` is the nightly cell label (host/engine/model/workload) the run belongs to, if any.

    ``device_facts`` fills the accelerator/telemetry provenance columns (RunRecord field names); the engine's
    own ``provenance`` (image, image_digest, container_settings of a container) fills its columns; ``plan`` the
    workload's shape (tokenizer, prompt overhead, dataset). Host facts say where they were read and the declared
    hardware is stored beside them (``tasks.host.identity``); ``finish_run`` reconciles it with what was detected.
    """
    now = dt.datetime.now(dt.UTC)
    w = config.workload
    started = int(now.timestamp() * 1e9)
    return RunRecord(
        run_id=new_id(),
        batch_id=batch_id,
        date=now.date().isoformat(),
        host=host,
        started_ns=started,
        finished_ns=started,
        measure_start_ns=None,
        measure_end_ns=None,
        status=RunStatus.failed,
        error="run did not finish",
        cell=cell,
        **host_identity(config, engine),
        engine_kind=config.engine.kind.value,
        engine_name=engine.info.name,
        engine_version=engine.info.version,
        engine_detected_from=engine.info.detected_from,
        engine_url=engine.base_url,
        engine_label=config.engine.label,
        **declared_columns(config),
        protocol=config.engine.protocol.value,
        api=api,
        model_name=config.model.name,
        model_digest=engine.info.model_digest,
        synthetic_model=config.model.synthetic or engine.info.synthetic,
        engine_settings=json.dumps(redact(engine.settings), sort_keys=True, default=str),
        **serving_columns(config, engine.info.name, engine.info.version, engine.serving, _detected_gpus(device_facts)),
        workload=w.name,
        load_mode=w.mode.value,
        concurrency=concurrency,
        rate_rps=w.rate,
        warmup_requests=w.warmup_requests,
        measured_requests=plan.measured_requests if plan is not None else w.requests,
        max_tokens=w.max_tokens,
        num_ctx=w.num_ctx,
        temperature=w.temperature,
        seed=w.seed,
        ignore_eos=w.ignore_eos,
        extra_body=json.dumps(redact(w.extra_body), sort_keys=True) if w.extra_body else None,
        prompt_set_hash=prompt_set_hash(plan or WorkloadPlan(w)),
        config_hash=config_hash(config),
        **_shape(config, plan),
        **_profile(config, concurrency),
        hardware_key=config.pricing.hardware,
        site_key=config.pricing.site,
        ops_key=config.pricing.ops,
        utilisation=config.pricing.utilisation,
        tool_version=__version__,
        git_revision=git_revision(),
        **{**engine.provenance, **dict(device_facts or {})},
    )


def _detected_gpus(device_facts: Mapping[str, Any] | None) -> int | None:
    """The GPU count a sampler detected where the engine runs (device facts' gpu_count), if any."""
    found = (device_facts or {}).get("gpu_count")
    return int(found) if found else None


def _profile(config: BenchmarkConfig, concurrency: int) -> dict[str, Any]:
    """The run profile's columns: under the claim profile, whether the settings met its minimums and why not."""
    w = config.workload
    if w.profile != "claim":
        return {"profile": w.profile}
    short = claim_shortfalls(w, concurrency)
    return {"profile": w.profile, "claim_grade": not short, "claim_note": "; ".join(short) or None}


def _source_path(config: BenchmarkConfig) -> str | None:
    """The file the requests came from: the dataset, or the replayed trace."""
    w = config.workload
    source = w.dataset.path if w.dataset is not None else (w.trace.path if w.trace is not None else None)
    return str(source) if source is not None else None


def _source_records(plan: WorkloadPlan | None) -> int | None:
    """Records of that file the run draws on: the dataset's, or the replayed trace's requests (its window)."""
    if plan is None:
        return None
    if plan.dataset is not None:
        return plan.dataset.records
    return len(plan.replay.requests) if plan.replay is not None else None


def _shape(config: BenchmarkConfig, plan: WorkloadPlan | None) -> dict[str, Any]:
    """The workload-shape columns of a run row."""
    w = config.workload
    return {
        "preset": w.preset,
        "prompt_source": w.prompt_source,
        "input_tokens_spec": w.input_tokens.describe() if w.input_tokens is not None else None,
        "output_tokens_spec": w.output_tokens.describe() if w.output_tokens is not None else None,
        "time_scale": w.trace.time_scale if w.mode is LoadMode.replay and w.trace is not None else None,
        "dataset_path": _source_path(config),
        "dataset_records": _source_records(plan),
        "shared_prefix_tokens": w.shared_prefix_tokens,
        "turns": w.turns,
        "tokenizer": plan.tokenizer.name if plan is not None and plan.tokenizer is not None else None,
        "prompt_overhead_tokens": plan.overhead if plan is not None and plan.overhead_source else None,
        "prompt_overhead_source": plan.overhead_source if plan is not None else None,
        "duration_s": w.duration_s,
        "min_requests": w.min_requests if w.duration_s is not None else None,
        "slo_ttft_ms": w.slo.ttft_ms,
        "slo_tpot_ms": w.slo.tpot_ms,
        "slo_itl_ms": w.slo.itl_ms,
        "slo_quantile": w.slo.quantile,
        "sweep_margin": w.sweep.margin if w.sweep is not None else None,
        "sweep_stop_on_slo": w.sweep.stop_on_slo if w.sweep is not None else None,
    }


def _output_length(run: RunRecord, measured: list[RequestRecord]) -> dict[str, Any]:
    """Whether every ok request got exactly its requested output tokens, and how that was asked for."""
    if run.output_tokens_spec is None and not run.ignore_eos:
        return {"output_len_enforced": None, "output_len_note": None}
    how = adapter_for(Protocol(run.protocol)).output_enforcement
    if run.protocol == Protocol.openai.value and not run.ignore_eos:
        how = "max_tokens only (ignore_eos off): the model may stop before the requested length"
    ok = [r for r in measured if r.error is None]
    short = [r for r in ok if r.output_tokens is not None and r.output_tokens != r.requested_output_tokens]
    uncounted = sum(r.output_tokens is None for r in ok)
    if short:
        note = f"{how}; {len(short)} of {len(ok)} ok requests got another length than requested"
        return {"output_len_enforced": False, "output_len_note": note}
    if uncounted:
        return {"output_len_enforced": None, "output_len_note": f"{how}; {uncounted} requests were not counted"}
    return {"output_len_enforced": bool(ok), "output_len_note": how}


def _status(measured: list[RequestRecord]) -> tuple[RunStatus, str | None]:
    failed = [r for r in measured if r.error is not None]
    if not measured or len(failed) == len(measured):
        first = failed[0].error if failed else "no request was measured"
        return RunStatus.failed, f"all {len(measured)} measured requests failed; first error: {first}"
    if failed:
        return (
            RunStatus.partial,
            f"{len(failed)} of {len(measured)} measured requests failed; first: {failed[0].error}",
        )
    return RunStatus.ok, None


def _stopped(run: RunRecord, result: MeasureResult) -> str:
    """Why a run stopped early and what of it is kept."""
    ok = sum(r.error is None for r in result.measured)
    kept = f"{result.stopped}: kept {len(result.measured)} of {run.measured_requests} measured requests ({ok} ok)"
    if result.cancelled:
        kept += f"; {result.cancelled} in flight cancelled after the grace period (not stored)"
    return kept


def finish_run(
    run: RunRecord, result: MeasureResult, error: str | None = None, facts: Mapping[str, Any] | None = None
) -> RunRecord:
    """The run row after measuring: window, status, error and device/telemetry provenance filled in, the detected
    hardware reconciled with the declared (``tasks.host.identity.reconcile``), and a run that is not ok given its
    failure class (``tasks.analysis.classify_failure``).

    A run stopped early (a signal, its deadline) is ``interrupted``; an engine that died makes it ``failed``.
    """
    status, why = _status(result.measured)
    if result.stopped is not None:
        status, why = RunStatus.interrupted, _stopped(run, result)
    if error is not None:
        status, why = RunStatus.failed, error
    finished = run.model_copy(
        update={
            "finished_ns": int(dt.datetime.now(dt.UTC).timestamp() * 1e9),
            "measure_start_ns": result.measure_start_ns,
            "measure_end_ns": result.measure_end_ns,
            "measured_requests": len(result.measured),
            "concurrency_reached": reached([*result.warmup, *result.measured]),
            "stop_rule": result.stop_rule,
            "status": status,
            "error": why,
            **_output_length(run, result.measured),
            **run_fields(result.client, _send_lags(run, result.measured)),
            **dict(facts or {}),
        }
    )
    return classify_failure(reconcile(finished))


def _send_lags(run: RunRecord, measured: Sequence[RequestRecord]) -> list[int]:
    """A replay's send lags (sent - scheduled, ns), which the run's client check bounds; none for other modes."""
    if run.load_mode != LoadMode.replay.value:
        return []
    return [r.send_lateness_ns for r in measured if r.send_lateness_ns is not None]


def failed_run_record(
    config: BenchmarkConfig,
    host: str,
    batch_id: str,
    error: str,
    cell: str | None = None,
    concurrency: int | None = None,
) -> RunRecord:
    """A runs row for a run that never ran (engine never came up, daemon down, host offline...).

    Default concurrency: the cell's highest level (one row stands for the whole cell). The row gets its failure
    class from ``error`` (``tasks.analysis.classify_failure``).
    """
    engine = RunningEngine(base_url="", info=EngineInfo("unknown", "unknown", None))
    api = config.engine.kind.value
    level = concurrency if concurrency is not None else max(config.workload.concurrency)
    run = describe_run(config, engine, api, host, batch_id, level, cell=cell)
    return classify_failure(reconcile(run.model_copy(update={"status": RunStatus.failed, "error": error})))


_SEVERITY = (ExitCode.ok, ExitCode.partial, ExitCode.failed)  # least to most severe


def worst_exit(codes: list[ExitCode]) -> ExitCode:
    """The most severe of some exit statuses (failed over partial over ok)."""
    return max(codes, key=_SEVERITY.index, default=ExitCode.ok)


def run_verdict(status: str, measured: int, failed: int, threshold: float = PARTIAL_THRESHOLD) -> ExitCode:
    """Exit status a stored run calls for: failed (3) when it failed or no measured request of it succeeded,
    partial (4) when it was cut short or more than ``threshold`` of its measured requests failed, else ok (0)."""
    if status == RunStatus.failed or measured - failed <= 0:
        return ExitCode.failed
    if status == RunStatus.interrupted or (status == RunStatus.partial and failed / measured > threshold):
        return ExitCode.partial
    return ExitCode.ok


def check_runs(runs: list[RunRecord], counts: Mapping[str, tuple[int, int]], threshold: float) -> None:
    """Raise RunError (exit 3 or 4) naming the worst stored run; ``counts``: run id -> (measured, failed)."""
    verdicts = [(run_verdict(r.status, *counts.get(r.run_id, (0, 0)), threshold), r) for r in runs]
    code = worst_exit([v for v, _ in verdicts])
    if code is ExitCode.ok:
        return
    bad = [r for v, r in verdicts if v is code]
    run = bad[0]
    measured, failed = counts.get(run.run_id, (0, 0))
    what = f"run {run.run_id[:8]} (concurrency {run.concurrency}) {run.status.value}: {run.error}"
    if code is ExitCode.partial and run.status is RunStatus.partial:
        what += f" ({failed / measured:.0%} failed, over the {threshold:.0%} partial threshold)"
    more = f"; {len(bad) - 1} more run(s) like it" if len(bad) > 1 else ""
    raise RunError(f"{what}{more}", code)


def _off_by(run: RunRecord, shape: Mapping[str, Any]) -> float:
    """How far a flagged run's served shape is from the asked, as view run_shape judges it: the input's relative
    error, and the output's where it counts (both ways with ignore_eos; without it, only serving more)."""
    errors = [abs(shape["isl_error"])] if shape.get("isl_error") is not None else []
    osl = shape.get("osl_error")
    if osl is not None and (run.ignore_eos or osl > 0):
        errors.append(abs(osl))
    return max(errors, default=0.0)


def check_shapes(runs: Sequence[RunRecord], shapes: Sequence[Mapping[str, Any]]) -> None:
    """Raise RunError (exit 4, partial) naming the first run whose served input or output lengths missed the asked by
    more than the shape tolerance (view run_shape's ``shape_mismatch``), with the ``--shape-tolerance`` that accepts
    every such run; ``shapes``: the runs' rows of view run_shape."""
    flagged = {row["run_id"]: row for row in shapes if row.get("shape_mismatch")}
    bad = [r for r in runs if r.run_id in flagged]
    if not bad:
        return
    run, shape = bad[0], flagged[bad[0].run_id]
    more = f"; {len(bad) - 1} more run(s) like it" if len(bad) > 1 else ""
    needed = math.ceil(max(_off_by(r, flagged[r.run_id]) for r in bad) * 100) / 100
    accept = f"--shape-tolerance {needed:.2f} accepts it" if needed <= 10 else "no --shape-tolerance accepts it"
    raise RunError(
        f"run {run.run_id[:8]} (concurrency {run.concurrency}) served another shape than asked: "
        f"{shape['shape_note']}{more}; over the shape tolerance {shape['shape_tolerance']:.2f} ({accept})",
        ExitCode.partial,
    )
