"""Flow ``benchmark``: engine up -> health -> per concurrency (telemetry idle baseline -> engine metrics scrape ->
warm-up -> measure -> write) -> summarise.

Wiring only: every step is a function from ``tasks``; this module decides the order and what
happens when a step fails (the engine is always stopped; each run is written as soon as it is
measured, so a later failure loses nothing already measured; an engine that died during a run
ends the batch with an EngineError once that run is stored as failed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tcobench.schemas import BenchmarkConfig, PriceTable
from tcobench.tasks.artifacts import publish_run_summary
from tcobench.tasks.engine import (
    OnEvent,
    engine_error,
    ensure_engine_alive,
    launch_engine,
    stop_engine,
    target_of,
    telemetry_access,
)
from tcobench.tasks.engine_metrics import start_engine_metrics, stop_engine_metrics
from tcobench.tasks.measure import OnRequest, RunContext, measure
from tcobench.tasks.protocols import adapter_for
from tcobench.tasks.runs import describe_run, finish_run, new_id
from tcobench.tasks.store import write_results
from tcobench.tasks.summarise import Summary, summarise
from tcobench.tasks.telemetry import start_telemetry, stop_telemetry

from ._orchestrator import flow, task

__all__ = ["BenchmarkResult", "benchmark"]

launch_engine_task = task(launch_engine, name="launch_engine")
stop_engine_task = task(stop_engine, name="stop_engine")
measure_task = task(measure, name="measure")
write_results_task = task(write_results, name="write_results")
summarise_task = task(summarise, name="summarise")
publish_summary_task = task(publish_run_summary, name="publish_summary")
start_telemetry_task = task(start_telemetry, name="start_telemetry")
stop_telemetry_task = task(stop_telemetry, name="stop_telemetry")
start_engine_metrics_task = task(start_engine_metrics, name="start_engine_metrics")
stop_engine_metrics_task = task(stop_engine_metrics, name="stop_engine_metrics")


@dataclass(frozen=True)
class BenchmarkResult:
    batch_id: str
    run_ids: list[str]
    summary: Summary


@flow(name="benchmark")
def benchmark(
    config: BenchmarkConfig,
    prices: PriceTable,
    store: Path,
    host: str,
    model_cache: Path,
    on_request: OnRequest | None = None,
    on_event: OnEvent | None = None,
    batch_id: str | None = None,
) -> BenchmarkResult:
    batch_id = batch_id or new_id()  # the nightly flow shares one batch id across all its cells
    run_ids: list[str] = []
    engine = launch_engine_task(config, store / "logs", model_cache, batch_id, on_event)
    try:
        target = target_of(config, engine.base_url)
        api = adapter_for(config.engine.protocol).path(config.engine.chat)
        for concurrency in config.workload.concurrency:
            run = describe_run(config, engine, api, host, batch_id, concurrency)
            ctx = RunContext(run.run_id, run.date, run.host)
            access = telemetry_access(config, engine)
            telemetry = start_telemetry_task(config.telemetry, run.run_id, run.date, run.host, access)
            scrape = start_engine_metrics_task(config.telemetry, engine.base_url, ctx)
            result = measure_task(target, config.workload, ctx, concurrency, on_request, telemetry.set_phase)
            samples, scraped = stop_telemetry_task(telemetry), stop_engine_metrics_task(scrape)
            died = engine_error(config, engine)
            finished = finish_run(run, result, died, telemetry.facts | scrape.facts)
            write_results_task(store, finished, result.warmup + result.measured, samples, scraped)
            run_ids.append(run.run_id)
            ensure_engine_alive(died)  # a dead engine ends the batch: its run is stored as failed first
    finally:
        stop_engine_task(config, engine)
    summary = summarise_task(store, prices, run_ids)
    publish_summary_task(store, prices, run_ids)  # a Prefect artifact; nothing when Prefect is off
    return BenchmarkResult(batch_id, run_ids, summary)
