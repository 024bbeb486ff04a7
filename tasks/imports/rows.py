"""imported_rows: the RunRecord and RequestRecord rows of a parsed result file (schemas.ParsedFile).

What the file says fills the rows; what the command line says fills the labels the file lacks (host, hardware key,
GPU count, vendor, engine); every other figure stays NULL. A run row says ``source = imported:<tool> <version>`` and
keeps the file's sha256 and path; an imported run has no telemetry (the power rule of the claim-grade stamp then
falls back to the price table's estimate, and says so).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

from tcobench import __version__
from tcobench.errors import ConfigError
from tcobench.schemas import (
    GpusSource,
    GpuVendor,
    Phase,
    RequestRecord,
    RunRecord,
    RunStatus,
    ServingConfig,
)
from tcobench.schemas.imports import ImportLabels, ParsedFile, ParsedRequest, ParsedRun
from tcobench.tasks.runs import git_revision, new_id

__all__ = ["REQUIRED_LABELS", "imported_rows", "missing_labels", "source_label"]

# labels a result file never carries, so the command line must give them (option names, as the error names them)
REQUIRED_LABELS = {"host": "--host", "hardware": "--hardware", "gpus": "--gpus", "vendor": "--vendor"}


def source_label(parsed: ParsedFile, labels: ImportLabels) -> str:
    """``imported:<tool> <version>``: the file's version, else --tool-version, else ``unknown``."""
    return f"imported:{parsed.tool} {parsed.version or labels.tool_version or 'unknown'}"


def missing_labels(parsed: ParsedFile, labels: ImportLabels) -> list[str]:
    """The options the command line must still give: the labels no file carries, and the model where it lacks one."""
    missing = [flag for name, flag in REQUIRED_LABELS.items() if getattr(labels, name) is None]
    if labels.model is None and any(run.model is None for run in parsed.runs):
        missing.append("--model")
    return missing


def _date(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns / 1e9, dt.UTC).date().isoformat()


def _status(run: ParsedRun) -> tuple[RunStatus, str | None]:
    if run.requests == 0 or run.failed >= run.requests:
        return RunStatus.failed, f"all {run.requests} requests failed in the imported file"
    if run.failed:
        return RunStatus.partial, f"{run.failed} of {run.requests} requests failed in the imported file"
    return RunStatus.ok, None


def _sha(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _hardware(labels: ImportLabels) -> dict[str, Any]:
    """The accelerator columns, from the labels (declared: nothing was detected by tcobench)."""
    vendor = labels.vendor or GpuVendor.cpu
    gpu = vendor is not GpuVendor.cpu
    return {
        "gpu_vendor": vendor if gpu else None,
        "gpu_name": labels.gpu_model if gpu else None,
        "gpu_count": labels.gpus if gpu else None,
        "gpu_source": "declared" if gpu else None,
        "declared_vendor": vendor,
        "declared_gpu_model": labels.gpu_model,
        "declared_gpu_count": labels.gpus,
        "gpus_given": labels.gpus,
        "gpus_given_source": GpusSource.declared.value,
    }


def _run_record(
    parsed: ParsedFile, run: ParsedRun, labels: ImportLabels, batch_id: str, where: tuple[Path, str], run_id: str
) -> RunRecord:
    path, sha = where
    model = run.model or labels.model or ""
    engine, version = labels.engine or "unknown", labels.engine_version or "unknown"
    serving = ServingConfig(engine=engine, engine_version=version, model=model, gpus=labels.gpus)
    status, error = _status(run)
    first = min((r.start_ns for r in run.per_request), default=run.started_ns)
    last = max((r.start_ns + (r.e2e_ns or 0) for r in run.per_request), default=run.finished_ns)
    summary = {"figures": run.aggregates, "notes": parsed.notes}
    return RunRecord(
        run_id=run_id,
        batch_id=batch_id,
        date=_date(run.started_ns),
        host=labels.host or "",
        started_ns=run.started_ns,
        finished_ns=run.finished_ns,
        measure_start_ns=first if run.per_request else None,
        measure_end_ns=last if run.per_request else None,
        status=status,
        error=error,
        host_os="unknown",
        host_kernel="unknown",
        host_arch="unknown",
        host_cpu="unknown",
        host_cpu_count=None,
        host_mem_bytes=None,
        python_version="unknown",
        engine_kind="endpoint",
        engine_name=engine,
        engine_version=version,
        engine_detected_from=f"given to tcobench import (file: {parsed.tool})",
        engine_url=run.url,
        protocol="openai",
        api=run.api,
        model_name=model,
        model_digest=None,
        engine_settings="{}",
        config_id=serving.config_id,
        serving_config=serving.canonical(),
        **_hardware(labels),
        telemetry_note=f"imported from {parsed.tool}: no telemetry, so no measured power",
        workload=run.workload,
        load_mode=run.load_mode,
        concurrency=run.concurrency,
        rate_rps=run.rate_rps,
        warmup_requests=run.warmup_requests,
        measured_requests=run.requests,
        max_tokens=run.max_tokens,
        num_ctx=None,
        temperature=run.temperature,
        seed=run.seed,
        ignore_eos=run.ignore_eos,
        prompt_set_hash=_sha([parsed.tool, run.workload, run.input_tokens_spec, run.output_tokens_spec, run.seed]),
        input_tokens_spec=run.input_tokens_spec,
        output_tokens_spec=run.output_tokens_spec,
        tokenizer=run.tokenizer,
        config_hash=sha,
        hardware_key=labels.hardware or "",
        site_key=labels.site,
        ops_key=labels.ops,
        utilisation=labels.utilisation,
        tool_version=__version__,
        git_revision=git_revision(),
        source=source_label(parsed, labels),
        source_sha256=sha,
        source_file=str(path),
        source_summary=json.dumps(summary, sort_keys=True),
    )


def _request(run: RunRecord, index: int, found: ParsedRequest) -> RequestRecord:
    decode = sum(found.itl_ns) if found.itl_ns else None
    return RequestRecord(
        run_id=run.run_id,
        date=run.date,
        host=run.host,
        phase=Phase.measure,
        request_index=index,
        prompt_index=index,
        seed=None,
        start_ns=found.start_ns,
        ttft_ns=found.ttft_ns,
        e2e_ns=found.e2e_ns,
        decode_ns=decode if found.error is None else None,
        chunks=len(found.itl_ns) + 1 if found.ttft_ns is not None else 0,
        itl_ns=found.itl_ns,
        prompt_tokens=found.prompt_tokens,
        output_tokens=found.output_tokens,
        cached_tokens=None,
        token_count_source="imported" if found.output_tokens is not None else "none",
        finish_reason=None,
        server_load_ns=None,
        server_prompt_eval_count=None,
        server_prompt_eval_ns=None,
        server_eval_count=None,
        server_eval_ns=None,
        server_total_ns=None,
        counter_note=None,
        http_status=None,
        error=found.error,
    )


def imported_rows(
    parsed: ParsedFile, labels: ImportLabels, path: Path, sha: str, run_ids: list[str] | None = None
) -> list[tuple[RunRecord, list[RequestRecord]]]:
    """Each parsed run as (run row, its request rows). ``run_ids``: the ids to reuse (--replace), else new ones."""
    if missing_labels(parsed, labels):
        raise ConfigError(f"{path}: labels missing: {', '.join(missing_labels(parsed, labels))}")
    ids = list(run_ids or [])
    ids += [new_id() for _ in range(len(parsed.runs) - len(ids))]
    batch_id = new_id()
    rows = []
    for run, run_id in zip(parsed.runs, ids, strict=False):
        record = _run_record(parsed, run, labels, batch_id, (path, sha), run_id)
        rows.append((record, [_request(record, i, r) for i, r in enumerate(run.per_request)]))
    return rows
