"""aiperf: a `aiperf profile` run's ``profile_export_aiperf.json`` (its summary, settings and version), with the
per-record export ``profile_export.jsonl`` beside it read for the request rows (warm-up records left out); the
fields read: docs/dev/architecture/store.md#tasks-imports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tcobench.schemas.imports import ImportFormat, ParsedFile, ParsedRequest, ParsedRun
from tcobench.tasks.imports.base import Importer, bad, load_json, number, register, utc_ns

__all__ = ["RECORDS_FILE", "SCHEMA_VERSIONS", "AiperfImporter"]

RECORDS_FILE = "profile_export.jsonl"
SCHEMA_VERSIONS = ("1.4",)  # the summary schema this importer was written against (aiperf 0.13.0)
_ISO = ("%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S")
_SUMMARY_FIGURES = ("request_throughput", "output_token_throughput", "benchmark_duration", "request_count")


def _ms_ns(metrics: dict[str, Any], name: str) -> int | None:
    found = metrics.get(name)
    value = found.get("value") if isinstance(found, dict) else None
    return round(float(value) * 1e6) if isinstance(value, int | float) else None


def _tokens(metrics: dict[str, Any], *names: str) -> int | None:
    for name in names:
        found = metrics.get(name)
        if isinstance(found, dict) and isinstance(found.get("value"), int | float):
            return int(found["value"])
    return None


def _record(path: Path, line: int, record: dict[str, Any]) -> ParsedRequest | None:
    """One profiling record as a request (None for a warm-up record)."""
    meta, metrics = record.get("metadata") or {}, record.get("metrics") or {}
    if meta.get("benchmark_phase", "profiling") != "profiling":
        return None
    start = meta.get("request_start_ns")
    if not isinstance(start, int):
        raise bad(path, f"line {line}: metadata.request_start_ns", f"{start!r} is missing", "ns since the epoch")
    gaps = (metrics.get("inter_chunk_latency") or {}).get("value") or []
    error = record.get("error")
    return ParsedRequest(
        start_ns=start,
        ttft_ns=_ms_ns(metrics, "time_to_first_token"),
        e2e_ns=_ms_ns(metrics, "request_latency"),
        itl_ns=[round(float(g) * 1e6) for g in gaps] if isinstance(gaps, list) else [],
        prompt_tokens=_tokens(metrics, "usage_prompt_tokens", "input_sequence_length"),
        output_tokens=_tokens(metrics, "usage_completion_tokens", "output_sequence_length"),
        error=None if not error else json.dumps(error, sort_keys=True)[:500],
    )


def _records(path: Path) -> list[ParsedRequest]:
    found = []
    for line, text in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError:
            raise bad(
                path, f"line {line}", "not a complete JSON record (truncated?)", "one JSON record a line"
            ) from None
        request = _record(path, line, record)
        if request is not None:
            found.append(request)
    return found


def _phase(config: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((p for p in config.get("phases") or [] if p.get("kind") == kind), {})


@register(ImportFormat.aiperf)
class AiperfImporter(Importer):
    def parse(self, path: Path, data: bytes) -> ParsedFile:
        summary = load_json(path, data, self.fmt)
        if not isinstance(summary, dict) or "aiperf_version" not in summary:
            raise bad(path, "aiperf_version", "missing: not an aiperf summary", "profile_export_aiperf.json of aiperf")
        version = str(summary["aiperf_version"])
        schema = str(summary.get("schema_version"))
        if schema not in SCHEMA_VERSIONS:
            raise bad(path, "schema_version", f"{schema!r} is not known", ", ".join(SCHEMA_VERSIONS))
        for field in ("start_time", "end_time"):
            if not summary.get(field):
                raise bad(path, field, "missing: the file has no timestamps", "an ISO timestamp")
        started = utc_ns(path, "start_time", summary["start_time"], _ISO)
        finished = utc_ns(path, "end_time", summary["end_time"], _ISO)
        config = summary.get("input_config") or {}
        profiling, warmup = _phase(config, "profiling"), _phase(config, "warmup")
        dataset = (config.get("datasets") or [{}])[0]
        prompts = dataset.get("prompts") or {}
        isl, osl = (prompts.get("isl") or {}).get("mean"), (prompts.get("osl") or {}).get("mean")
        records = path.with_name(RECORDS_FILE)
        requests = _records(records) if records.is_file() else []
        notes = [] if requests else [f"no {RECORDS_FILE} beside the file: the run carries the summary only"]
        total = number(path, summary.get("request_count") or {}, "avg", "request_count.")
        failed = sum(r.error is not None for r in requests) if requests else len(summary.get("error_summary") or [])
        rate = profiling.get("rate")
        models = (config.get("models") or {}).get("items") or [{}]
        endpoint = config.get("endpoint") or {}
        run = ParsedRun(
            started_ns=started,
            finished_ns=finished,
            model=models[0].get("name"),
            api=str(endpoint.get("type") or "unknown"),
            url=str((endpoint.get("urls") or [""])[0]),
            load_mode="poisson" if rate else "closed",
            concurrency=int(profiling.get("concurrency") or 1),
            rate_rps=float(rate) if rate else None,
            requests=len(requests) if requests else int(total or 0),
            failed=failed,
            warmup_requests=int(warmup.get("requests") or 0),
            max_tokens=round(osl) if isinstance(osl, int | float) else None,
            seed=dataset.get("random_seed"),
            workload=f"aiperf:{dataset.get('type', 'unknown')}",
            input_tokens_spec=f"{isl:g}" if isinstance(isl, int | float) else None,
            output_tokens_spec=f"{osl:g}" if isinstance(osl, int | float) else None,
            tokenizer=(config.get("tokenizer") or {}).get("name"),
            per_request=requests,
            aggregates={f: number(path, summary.get(f) or {}, "avg", f"{f}.") for f in _SUMMARY_FIGURES},
        )
        return ParsedFile(tool=self.tool, version=version, runs=[run], notes=notes)
