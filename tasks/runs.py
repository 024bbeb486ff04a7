"""describe_run / finish_run: build the RunRecord (provenance) around a measurement."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import uuid
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from tcobench import __version__
from tcobench.schemas import BenchmarkConfig, RequestRecord, RunRecord, RunStatus

from .engine.base import RunningEngine
from .hostinfo import collect_host_facts
from .measure import MeasureResult
from .protocols import EngineInfo

__all__ = [
    "config_hash",
    "describe_run",
    "failed_run_record",
    "finish_run",
    "git_revision",
    "new_id",
    "prompt_set_hash",
]


def new_id() -> str:
    return uuid.uuid4().hex


def _sha256_json(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prompt_set_hash(prompts: tuple[str, ...]) -> str:
    return _sha256_json(list(prompts))


def config_hash(config: BenchmarkConfig) -> str:
    return _sha256_json(config.model_dump(mode="json"))


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
    cell: str | None = None,
) -> RunRecord:
    """A RunRecord for a run about to start (status failed until finish_run says otherwise).

    ``cell`` is the nightly cell label (host/engine/model/workload) the run belongs to, if any.

    ``device_facts`` fills the accelerator/telemetry provenance columns (RunRecord field names); the engine's
    own ``provenance`` (image, image_digest, container_settings of a container) fills its columns.
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
        **collect_host_facts(),
        engine_kind=config.engine.kind.value,
        engine_name=engine.info.name,
        engine_version=engine.info.version,
        engine_url=engine.base_url,
        protocol=config.engine.protocol.value,
        api=api,
        model_name=config.model.name,
        model_digest=engine.info.model_digest,
        synthetic_model=config.model.synthetic or engine.info.synthetic,
        engine_settings=json.dumps(engine.settings, sort_keys=True, default=str),
        workload=w.name,
        load_mode=w.mode.value,
        concurrency=concurrency,
        rate_rps=w.rate,
        warmup_requests=w.warmup_requests,
        measured_requests=w.requests,
        max_tokens=w.max_tokens,
        num_ctx=w.num_ctx,
        temperature=w.temperature,
        seed=w.seed,
        ignore_eos=w.ignore_eos,
        extra_body=json.dumps(w.extra_body, sort_keys=True) if w.extra_body else None,
        prompt_set_hash=prompt_set_hash(w.prompts),
        config_hash=config_hash(config),
        hardware_key=config.pricing.hardware,
        site_key=config.pricing.site,
        ops_key=config.pricing.ops,
        utilisation=config.pricing.utilisation,
        tool_version=__version__,
        git_revision=git_revision(),
        **{**engine.provenance, **dict(device_facts or {})},
    )


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


def finish_run(
    run: RunRecord, result: MeasureResult, error: str | None = None, facts: Mapping[str, Any] | None = None
) -> RunRecord:
    """The run row after measuring: window, status, error and device/telemetry provenance filled in."""
    status, why = _status(result.measured)
    if error is not None:
        status, why = RunStatus.failed, error
    return run.model_copy(
        update={
            "finished_ns": int(dt.datetime.now(dt.UTC).timestamp() * 1e9),
            "measure_start_ns": result.measure_start_ns,
            "measure_end_ns": result.measure_end_ns,
            "status": status,
            "error": why,
            **dict(facts or {}),
        }
    )


def failed_run_record(
    config: BenchmarkConfig,
    host: str,
    batch_id: str,
    error: str,
    cell: str | None = None,
    concurrency: int | None = None,
) -> RunRecord:
    """A runs row for a run that never ran (engine never came up, daemon down, host offline...).

    Default concurrency: the cell's highest level (one row stands for the whole cell).
    """
    engine = RunningEngine(base_url="", info=EngineInfo("unknown", "unknown", None))
    api = config.engine.kind.value
    level = concurrency if concurrency is not None else max(config.workload.concurrency)
    run = describe_run(config, engine, api, host, batch_id, level, cell=cell)
    return run.model_copy(update={"status": RunStatus.failed, "error": error})
