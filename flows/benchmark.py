"""Flow ``benchmark``: engine up -> health -> per concurrency (telemetry idle baseline -> warm-up -> measure
-> write) -> summarise.

Wiring only: every step is a function from ``tasks``; this module decides the order and what
happens when a step fails (the store is checked before the engine starts; the engine is always stopped;
each run is committed as soon as it is measured, so a later failure loses nothing already measured; an
engine that died during a run ends the batch with an EngineError once that run is stored as failed; a
store that refuses a write, a full disk say, ends the batch with a StoreError that carries the summary of
the runs already stored).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tcobench.errors import StoreError
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
from tcobench.tasks.measure import OnRequest, RunContext, measure
from tcobench.tasks.protocols import adapter_for
from tcobench.tasks.runs import describe_run, finish_run, new_id
from tcobench.tasks.store import StoreRef, check_store, write_results
from tcobench.tasks.summarise import Summary, summarise
from tcobench.tasks.telemetry import start_telemetry, stop_telemetry

from ._orchestrator import flow, task

__all__ = ["BenchmarkResult", "benchmark"]

launch_engine_task = task(launch_engine, name="launch_engine")
stop_engine_task = task(stop_engine, name="stop_engine")
measure_task = task(measure, name="measure")
check_store_task = task(check_store, name="check_store")
write_results_task = task(write_results, name="write_results")
summarise_task = task(summarise, name="summarise")
publish_summary_task = task(publish_run_summary, name="publish_summary")
start_telemetry_task = task(start_telemetry, name="start_telemetry")
stop_telemetry_task = task(stop_telemetry, name="stop_telemetry")


@dataclass(frozen=True)
class BenchmarkResult:
    batch_id: str
    run_ids: list[str]
    summary: Summary


@flow(name="benchmark")
def benchmark(
    config: BenchmarkConfig,
    prices: PriceTable,
    store: StoreRef,
    host: str,
    model_cache: Path,
    on_request: OnRequest | None = None,
    on_event: OnEvent | None = None,
    batch_id: str | None = None,
    cell: str | None = None,
) -> BenchmarkResult:
    batch_id = batch_id or new_id()  # the nightly flow shares one batch id across all its cells
    run_ids: list[str] = []
    store = check_store_task(store)  # writable, not a file, free space above the floor: before the engine starts
    stopped: StoreError | None = None
    engine = launch_engine_task(config, store.location.log_dir, model_cache, batch_id, on_event)
    try:
        target = target_of(config, engine.base_url)
        api = adapter_for(config.engine.protocol).path(config.engine.chat)
        for concurrency in config.workload.concurrency:
            run = describe_run(config, engine, api, host, batch_id, concurrency, cell=cell)
            ctx = RunContext(run.run_id, run.date, run.host)
            access = telemetry_access(config, engine)
            telemetry = start_telemetry_task(config.telemetry, run.run_id, run.date, run.host, access)
            result = measure_task(target, config.workload, ctx, concurrency, on_request, telemetry.set_phase)
            samples = stop_telemetry_task(telemetry)
            died = engine_error(config, engine)
            finished = finish_run(run, result, died, telemetry.facts)
            try:
                write_results_task(store, finished, result.warmup + result.measured, samples)
            except StoreError as exc:
                stopped = exc
                break
            run_ids.append(run.run_id)
            ensure_engine_alive(died)  # a dead engine ends the batch: its run is stored as failed first
    finally:
        stop_engine_task(config, engine)
    summary = summarise_task(store, prices, run_ids)
    if stopped is not None:
        stopped.stored = BenchmarkResult(batch_id, run_ids, summary)
        raise stopped
    publish_summary_task(store, prices, run_ids)  # a Prefect artifact; nothing when Prefect is off
    return BenchmarkResult(batch_id, run_ids, summary)
