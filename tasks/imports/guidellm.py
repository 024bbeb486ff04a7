"""guidellm: the JSON report `guidellm run --output kind=json` writes (report ``metadata.version`` 2, guidellm 0.8.1);
each benchmark of the report (one per strategy: synchronous, concurrent@N, constant@R...) is one run, its stored
requests (successful, errored, incomplete) the request rows; the fields read:
docs/dev/architecture/store.md#tasks-imports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tcobench.schemas.imports import ImportFormat, ParsedFile, ParsedRequest, ParsedRun
from tcobench.tasks.imports.base import Importer, bad, load_json, number, register

__all__ = ["REPORT_VERSIONS", "STRATEGIES", "GuidellmImporter"]

REPORT_VERSIONS = ("2",)  # the report schema this importer was written against (guidellm 0.8.1)
# guidellm's strategy types and the load mode each is: a concurrency limit (closed) or a request rate
STRATEGIES = {
    "synchronous": "closed",
    "concurrent": "closed",
    "throughput": "closed",
    "poisson": "poisson",
    "constant": "constant",
    "async": "constant",
}
_STATUSES = ("successful", "errored", "incomplete")
# the report's own summary figures kept in runs.source_summary: metric, then the statistic of its successful requests
_SUMMARY = {
    "request_latency": ("mean", "median"),
    "time_to_first_token_ms": ("mean", "median"),
    "inter_token_latency_ms": ("mean", "median"),
    "time_per_output_token_ms": ("mean", "median"),
    "requests_per_second": ("mean",),
    "output_tokens_per_second": ("mean",),
    "tokens_per_second": ("mean",),
    "prompt_token_count": ("total_sum",),
    "output_token_count": ("total_sum",),
}


def _ns(path: Path, where: str, value: Any, scale: float) -> int | None:
    """A number of seconds (scale 1e9) or ms (scale 1e6) as ns; None when null; ``bad`` when not a number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad(path, where, f"{value!r} is not a number", "a number or null")
    return round(float(value) * scale)


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _request(path: Path, where: str, found: dict[str, Any], status: str) -> ParsedRequest:
    """One stored request of a benchmark (its status list: successful, errored or incomplete)."""
    start = _ns(path, f"{where}.request_start_time", found.get("request_start_time"), 1e9)
    if start is None:
        raise bad(path, f"{where}.request_start_time", "missing: the request has no timestamp", "s since the epoch")
    info = found.get("info") or {}
    ok = status == "successful"
    error = None if ok else str(info.get("error") or f"{status} in the guidellm report")[:500]
    return ParsedRequest(
        start_ns=start,
        ttft_ns=_ns(path, f"{where}.time_to_first_token_ms", found.get("time_to_first_token_ms"), 1e6) if ok else None,
        e2e_ns=_ns(path, f"{where}.request_latency", found.get("request_latency"), 1e9),
        prompt_tokens=_count(found.get("prompt_tokens")),
        output_tokens=_count(found.get("output_tokens")) if ok else None,
        error=error,
    )


def _requests(path: Path, where: str, stored: Any) -> list[ParsedRequest]:
    if not isinstance(stored, dict):
        raise bad(path, f"{where}.requests", f"{type(stored).__name__} is not an object", ", ".join(_STATUSES))
    found = []
    for status in _STATUSES:
        for i, request in enumerate(stored.get(status) or []):
            found.append(_request(path, f"{where}.requests.{status}[{i}]", request, status))
    return sorted(found, key=lambda r: r.start_ns)


def _ignore_eos(requests: Any) -> bool:
    """Whether the stored requests asked for exactly their output length (the body's ``ignore_eos``)."""
    stored = requests.get("successful") if isinstance(requests, dict) else None
    first: dict[str, Any] = stored[0] if isinstance(stored, list) and stored and isinstance(stored[0], dict) else {}
    try:
        body = json.loads(first.get("request_args") or "{}").get("body") or {}
    except (json.JSONDecodeError, AttributeError):
        return False
    return bool(body.get("ignore_eos", False)) if isinstance(body, dict) else False


def _aggregates(path: Path, where: str, metrics: dict[str, Any]) -> dict[str, float | None]:
    figures: dict[str, float | None] = {}
    for metric, statistics in _SUMMARY.items():
        successful = (metrics.get(metric) or {}).get("successful") or {}
        for statistic in statistics:
            figures[f"{metric}.{statistic}"] = number(path, successful, statistic, f"{where}.metrics.{metric}.")
    totals = metrics.get("request_totals") or {}
    for status in (*_STATUSES, "total"):
        figures[f"request_totals.{status}"] = number(path, totals, status, f"{where}.metrics.request_totals.")
    return figures


def _run(path: Path, index: int, benchmark: Any, spec: dict[str, Any]) -> tuple[ParsedRun, str | None]:
    """One benchmark as a run, and a note when the report stored only a sample of its requests."""
    where = f"benchmarks[{index}]"
    if not isinstance(benchmark, dict) or benchmark.get("type_") != "generative_benchmark":
        kind = benchmark.get("type_") if isinstance(benchmark, dict) else type(benchmark).__name__
        raise bad(path, f"{where}.type_", f"{kind!r} is not read", "generative_benchmark")
    started = _ns(path, f"{where}.start_time", benchmark.get("start_time"), 1e9)
    finished = _ns(path, f"{where}.end_time", benchmark.get("end_time"), 1e9)
    if started is None or finished is None:
        field = "start_time" if started is None else "end_time"
        raise bad(path, f"{where}.{field}", "missing: the benchmark has no timestamps", "s since the epoch")
    config = benchmark.get("config") or {}
    strategy = config.get("strategy") or {}
    kind = strategy.get("type_")
    if kind not in STRATEGIES:
        raise bad(path, f"{where}.config.strategy.type_", f"{kind!r} is not known", ", ".join(STRATEGIES))
    requests = _requests(path, where, benchmark.get("requests"))
    metrics = benchmark.get("metrics") or {}
    total = _count((metrics.get("request_totals") or {}).get("total"))
    note = None
    if total is not None and total != len(requests):
        note = f"{where} ({kind}): the report stores {len(requests)} of its {total} requests (a sample)"
    backend = config.get("backend") or spec.get("backend") or {}
    data = (spec.get("data") or [{}])[0]
    prompt, output = data.get("prompt_tokens"), data.get("output_tokens")
    rate = strategy.get("rate")
    limit = strategy.get("max_concurrency") or strategy.get("streams") or 1
    run = ParsedRun(
        started_ns=started,
        finished_ns=finished,
        model=backend.get("model"),
        api=str(backend.get("request_format") or backend.get("kind") or "unknown"),
        url=str(backend.get("target") or ""),
        load_mode=STRATEGIES[kind],
        concurrency=int(limit),
        rate_rps=float(rate) if isinstance(rate, int | float) and rate > 0 else None,
        requests=len(requests),
        failed=sum(r.error is not None for r in requests),
        max_tokens=int(output) if isinstance(output, int) else None,
        ignore_eos=_ignore_eos(benchmark.get("requests")),
        seed=(spec.get("seed") or {}).get("value"),
        workload=f"guidellm:{data.get('kind', 'unknown')}",
        input_tokens_spec=str(prompt) if prompt is not None else None,
        output_tokens_spec=str(output) if output is not None else None,
        tokenizer=(spec.get("tokenizer") or {}).get("model"),
        per_request=requests,
        aggregates=_aggregates(path, where, metrics),
    )
    return run, note


@register(ImportFormat.guidellm)
class GuidellmImporter(Importer):
    def parse(self, path: Path, data: bytes) -> ParsedFile:
        report = load_json(path, data, self.fmt)
        meta = report.get("metadata") if isinstance(report, dict) else None
        if not isinstance(meta, dict) or "guidellm_version" not in meta:
            raise bad(
                path,
                "metadata.guidellm_version",
                "missing: not a guidellm report",
                "the JSON of guidellm run --output kind=json",
            )
        schema = str(meta.get("version"))
        if schema not in REPORT_VERSIONS:
            raise bad(path, "metadata.version", f"{schema!r} is not known", ", ".join(REPORT_VERSIONS))
        benchmarks = report.get("benchmarks")
        if not isinstance(benchmarks, list) or not benchmarks:
            raise bad(path, "benchmarks", "missing or empty: the report has no benchmark", "a list of benchmarks")
        spec = (report.get("config") or {}).get("spec") or {}
        parsed = [_run(path, i, b, spec) for i, b in enumerate(benchmarks)]
        notes = [note for _, note in parsed if note is not None]
        notes.append("guidellm stores each request's mean inter-token latency, not its gaps: no itl_ns per request")
        return ParsedFile(
            tool=self.tool, version=str(meta["guidellm_version"]), runs=[run for run, _ in parsed], notes=notes
        )
