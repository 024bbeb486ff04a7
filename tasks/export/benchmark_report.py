"""benchmark_report: each selected run as one llm-d ``benchmark_report`` v0.2 document (schemas/benchmark_report.py).

A run's figures come from view run_summary (counts, percentiles, rates) and macro export_figures (means, standard
deviations, extremes, input and request rates); its provenance from the run row. A figure the run does not have
(no ok request, no GPU, no parallel sizes) is left out of the document, never filled in. The whole run row, raw units,
goes in ``scenario.load.native.config.run``: an importer finds there what the store keeps.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb

from tcobench.schemas.benchmark_report import (
    BenchmarkReport,
    BrAccelerator,
    BrAggregate,
    BrComponent,
    BrComponentMetadata,
    BrEngine,
    BrGeneric,
    BrHost,
    BrLatency,
    BrLoad,
    BrLoadMetadata,
    BrLoadStandardized,
    BrModel,
    BrNative,
    BrParallelism,
    BrRequestPerformance,
    BrRequests,
    BrResults,
    BrRun,
    BrRunTime,
    BrScenario,
    BrSequenceLength,
    BrStatistics,
    BrThroughput,
    BrUnits,
)
from tcobench.tasks.export.write_tables import table_rows
from tcobench.tasks.store.rows import IDS, arrow_of, id_list

__all__ = ["FIGURES_SQL", "benchmark_reports", "report_of", "write_benchmark_reports"]

Row = Mapping[str, Any]

FIGURES_SQL = "SELECT * FROM export_figures(" + IDS + ")"  # macro export_figures (tcobench/sql/macros)


def _stats(units: BrUnits, row: Row, name: str, unit: str = "", percentiles: str | None = None) -> BrStatistics | None:
    """Statistics of figure ``name`` (export_figures' ``<name>_mean<unit>``, ``_std``, ``_min``, ``_max``; run_summary's
    ``<percentiles>_p50<unit>``, ``_p90``, ``_p99`` where it has them); None without a mean."""
    mean = row.get(f"{name}_mean{unit}")
    if mean is None:
        return None
    p = percentiles or name

    def pick(key: str) -> float | None:
        value = row.get(key)
        return None if value is None else float(value)

    return BrStatistics(
        units=units,
        mean=float(mean),
        stddev=pick(f"{name}_std{unit}"),
        min=pick(f"{name}_min{unit}"),
        p50=pick(f"{p}_p50{unit}"),
        p90=pick(f"{p}_p90{unit}"),
        p99=pick(f"{p}_p99{unit}"),
        max=pick(f"{name}_max{unit}"),
    )


def _rate(units: BrUnits, value: float | None) -> BrStatistics | None:
    """A rate over the run: the schema's statistics with that one value as the mean."""
    return None if value is None else BrStatistics(units=units, mean=float(value))


def _results(row: Row) -> BrResults:
    """The run's figures; empty where it has no run_summary row."""
    if row.get("n") is None:
        return BrResults()
    requests = BrRequests(
        total=int(row["n"]),
        failures=row.get("errors"),
        incomplete=row.get("in_flight_at_stop"),
        input_length=_stats(BrUnits.quantity, row, "isl"),
        output_length=_stats(BrUnits.quantity, row, "osl"),
    )
    latency = BrLatency(
        time_to_first_token=_stats(BrUnits.ms, row, "ttft", "_ms"),
        time_per_output_token=_stats(BrUnits.ms_per_token, row, "tpot", "_ms"),
        inter_token_latency=_stats(BrUnits.ms_per_token, row, "itl", "_ms"),
        request_latency=_stats(BrUnits.ms, row, "e2e", "_ms"),
    )
    throughput = BrThroughput(
        input_token_rate=_rate(BrUnits.tokens_per_s, row.get("input_tok_s")),
        output_token_rate=_rate(BrUnits.tokens_per_s, row.get("output_tok_s")),
        total_token_rate=_rate(BrUnits.tokens_per_s, row.get("total_tok_s")),
        request_rate=_rate(BrUnits.queries_per_s, row.get("request_rate_qps")),
    )
    aggregate = BrAggregate(
        requests=requests,
        latency=latency if any(v is not None for v in latency.__dict__.values()) else None,
        throughput=throughput if any(v is not None for v in throughput.__dict__.values()) else None,
    )
    return BrResults(request_performance=BrRequestPerformance(aggregate=aggregate))


def _engine(run: Row, row: Row) -> BrComponent:
    """The engine: inference_engine where the accelerator is known, generic on a CPU host."""
    count = row.get("gpus_counted") if row.get("gpus_counted") is not None else run.get("gpu_count")
    standardized: BrEngine | BrGeneric
    if run.get("gpu_name") and count is not None:
        parallelism = BrParallelism(
            tp=run.get("tensor_parallel"), dp=run.get("data_parallel"), pp=run.get("pipeline_parallel")
        )
        accelerator = BrAccelerator(model=str(run["gpu_name"]), count=int(count), parallelism=parallelism)
        standardized = BrEngine(
            tool=run["engine_name"],
            tool_version=run["engine_version"],
            model=BrModel(name=run["model_name"]),
            accelerator=accelerator,
        )
    else:
        standardized = BrGeneric(
            tool=run["engine_name"], tool_version=run["engine_version"], model_name=run["model_name"]
        )
    metadata = BrComponentMetadata(
        label=str(run.get("engine_label") or run["engine_name"]),
        cfg_id=str(run.get("config_id") or run["config_hash"]),
        description=f"{run['engine_kind']} engine at {run['engine_url']}",
    )
    return BrComponent(metadata=metadata, standardized=standardized, native=BrNative(config=_settings(run)))


def _settings(run: Row) -> dict[str, Any]:
    """The engine's settings as the run row stores them (JSON text), parsed; a text that is not an object as is."""
    text = run.get("engine_settings")
    try:
        value = json.loads(text) if text else None
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"engine_settings": text}


def _host(run: Row) -> BrComponent:
    """The measured host, from the run row's facts."""
    host = BrHost(
        tool_version=run["host_os"],
        hardware_key=run["hardware_key"],
        host_kernel=run["host_kernel"],
        host_arch=run["host_arch"],
        host_cpu=run["host_cpu"],
        host_cpu_count=run["host_cpu_count"],
        host_mem_bytes=run["host_mem_bytes"],
        gpu_vendor=run.get("gpu_vendor"),
        gpu_name=run.get("gpu_name"),
        gpu_count=run.get("gpu_count"),
        driver_version=run.get("driver_version"),
        cuda_version=run.get("cuda_version"),
        rocm_version=run.get("rocm_version"),
    )
    metadata = BrComponentMetadata(label=run["host"], cfg_id=run["hardware_key"], description="the measured host")
    return BrComponent(metadata=metadata, standardized=host, native=BrNative())


def _load(run: Row, row: Row) -> BrLoad | None:
    """The workload; None where the run served no ok request (the schema needs the input length)."""
    if row.get("isl_mean") is None:
        return None
    output = None
    if run.get("ignore_eos"):
        output = BrSequenceLength(distribution="fixed", value=float(run["max_tokens"]))
    standardized = BrLoadStandardized(
        tool_version=run["tool_version"],
        parallelism=run.get("client_procs") or 1,
        source="sampled" if run.get("prompt_source") else "unknown",
        input_seq_len=BrSequenceLength(
            distribution="other", value=float(row["isl_mean"]), min=row.get("isl_min"), max=row.get("isl_max") or None
        ),
        output_seq_len=output,
        rate_qps=run.get("rate_rps") or None,
        concurrency=run.get("concurrency") or None,
    )
    metadata = BrLoadMetadata(cfg_id=run.get("prompt_set_hash"), description=run.get("workload"))
    return BrLoad(metadata=metadata, standardized=standardized, native=BrNative(config={"run": _jsonable(run)}))


def _jsonable(run: Row) -> dict[str, Any]:
    """The run row with every value JSON can hold as is (dates and times as ISO text)."""
    return {k: v.isoformat() if isinstance(v, dt.date | dt.datetime) else v for k, v in run.items()}


def _utc(ns: int | None) -> dt.datetime | None:
    return None if ns is None else dt.datetime.fromtimestamp(ns / 1e9, tz=dt.UTC)


def report_of(run: Row, row: Row) -> BenchmarkReport:
    """One run (its runs row, and its run_summary row merged with its export_figures row; empty without them)."""
    start, end = run["started_ns"], run["finished_ns"]
    time = BrRunTime(start=_utc(start), end=_utc(end), duration=f"PT{(end - start) / 1e9:.9f}S")
    keys = ("host", "engine_name", "model_name", "workload", "status")
    described = f"tcobench run of {run['model_name']} on {run['engine_name']} at {run['host']}: {run['status']}"
    return BenchmarkReport(
        run=BrRun(
            uid=run["run_id"],
            eid=run["batch_id"],
            time=time,
            description=described + (f" ({run['error']})" if run.get("error") else ""),
            keywords=[f"{k}:{run[k]}" for k in keys],
        ),
        scenario=BrScenario(stack=[_engine(run, row), _host(run)], load=_load(run, row)),
        results=_results(row),
    )


def benchmark_reports(con: duckdb.DuckDBPyConnection, ids: list[str]) -> list[BenchmarkReport]:
    """One report per run of ``ids``, in that order."""
    runs = {r["run_id"]: r for r in table_rows(con, "runs", ids).to_pylist()}
    summary = {r["run_id"]: r for r in table_rows(con, "run_summary", ids).to_pylist()}
    figures = {r["run_id"]: r for r in arrow_of(con, FIGURES_SQL, {"ids": id_list(ids)}).to_pylist()}
    return [report_of(runs[i], {**summary.get(i, {}), **figures.get(i, {})}) for i in ids]


def write_benchmark_reports(con: duckdb.DuckDBPyConnection, ids: list[str], folder: Path) -> list[Path]:
    """Write ``<run_id>.json`` for each run of ``ids`` into ``folder``; the paths."""
    written = []
    for report in benchmark_reports(con, ids):
        path = folder / f"{report.run.uid}.json"
        text = report.model_dump_json(exclude_none=True, indent=2)
        path.write_text(text + "\n", encoding="utf-8")
        written.append(path)
    return written
