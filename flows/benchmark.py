"""Flow ``benchmark``: dataset check -> engine up -> health -> workload plan (tokenizer, prompt overhead, context
check) -> per concurrency (telemetry idle baseline -> engine metrics scrape -> warm-up -> measure -> write -> sweep
verdict) -> summarise (and the summary artifact, from the same connection), unless the caller summarises itself.

Wiring only: every step is a function from ``tasks``; this module decides their order and what a failure does
(the engine is always stopped; each run is committed as soon as it is measured, so a later failure loses nothing
already measured).

Design notes: docs/dev/architecture/flows-and-fleet.md#flows-benchmark.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from pydantic import SecretStr

from tcobench.errors import StoreError
from tcobench.flows._orchestrator import flow, task
from tcobench.schemas import BenchmarkConfig, PriceTable, RunRecord
from tcobench.tasks.analysis.summarise import Summary, run_summaries
from tcobench.tasks.analysis.sweep import sweep_verdict
from tcobench.tasks.engine import (
    OnEvent,
    engine_error,
    ensure_engine_alive,
    launch_engine,
    stop_engine,
    target_of,
    telemetry_access,
)
from tcobench.tasks.host.engine_metrics import start_engine_metrics, stop_engine_metrics
from tcobench.tasks.host.telemetry import start_telemetry, stop_telemetry
from tcobench.tasks.load.measure import measure
from tcobench.tasks.load.pacing import OnRequest
from tcobench.tasks.load.protocols import adapter_for
from tcobench.tasks.load.record import RunContext
from tcobench.tasks.load.shutdown import check_stop, deferred, listening, stop_requested
from tcobench.tasks.prepare import open_workload_dataset, open_workload_trace, prepare_workload
from tcobench.tasks.progress import RunWatcher
from tcobench.tasks.report.artifacts import summarise_and_publish
from tcobench.tasks.runs import describe_run, finish_run, new_id
from tcobench.tasks.store.store import StoreRef, WriterPreparation, check_store, write_results

__all__ = ["BenchmarkResult", "benchmark"]

launch_engine_task = task(launch_engine, name="launch_engine")
stop_engine_task = task(stop_engine, name="stop_engine")
measure_task = task(measure, name="measure")
check_store_task = task(check_store, name="check_store")
write_results_task = task(write_results, name="write_results")
summarise_task = task(summarise_and_publish, name="summarise")  # and the summary artifact, from one connection
open_dataset_task = task(open_workload_dataset, name="open_dataset")
open_trace_task = task(open_workload_trace, name="open_trace")
prepare_workload_task = task(prepare_workload, name="prepare_workload")


def _in_background(fn: Callable[..., None], *args: object) -> Future[None]:
    """``fn(*args)`` in a thread of its own, now; its outcome in the future returned."""
    done: Future[None] = Future()

    def run() -> None:
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, who raises it
            done.set_exception(exc)
        else:
            done.set_result(None)

    threading.Thread(target=run, name="tcobench-engine-stop", daemon=True).start()
    return done


@dataclass(frozen=True)
class BenchmarkResult:
    batch_id: str
    run_ids: list[str]
    summary: Summary | None  # None when the caller summarises (``summarise=False``)
    runs: list[RunRecord]  # the stored run rows, in order
    run_rows: pa.Table  # view run_summary of these runs (status, n, errors, ...), oldest first
    sweep_stop: str | None = None  # why a self-stopping sweep skipped its remaining levels


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
    watcher: RunWatcher | None = None,
    summarise: bool = True,
    api_key: SecretStr | None = None,
) -> BenchmarkResult:
    batch_id = batch_id or new_id()  # the nightly flow shares one batch id across all its cells
    runs: list[RunRecord] = []
    stop: str | None = None
    store = check_store_task(store)  # writable, not a file, free space above the floor: before the engine starts
    stopped: StoreError | None = None
    dataset = open_dataset_task(config)  # a bad file stops here, before the engine starts
    replay = open_trace_task(config)  # so does a bad trace line
    # api_key: an endpoint's key as `tcobench run --api-key` gave it (masked in what Prefect keeps of the parameters)
    engine = launch_engine_task(config, store.location.log_dir, model_cache, batch_id, on_event, api_key)
    engine_stop: Future[None] | None = None
    writer = WriterPreparation(store)  # the first commit's set-up, in a thread: a signal's exit waits less for it
    try:
        plan = prepare_workload_task(config, engine, model_cache, dataset, replay)
        target = target_of(config, engine.base_url, api_key)
        api = adapter_for(config.engine.protocol).path(config.engine.chat)
        # a signal stops the run in progress gracefully (stored before check_stop ends it); the store's writer
        # prepares during its grace period
        with deferred(), listening(writer.stopping):
            for concurrency in config.workload.concurrency:
                run = describe_run(config, engine, api, host, batch_id, concurrency, plan=plan, cell=cell)
                if watcher is not None:
                    watcher.start_level(concurrency)
                ctx = RunContext(run.run_id, run.date, run.host)
                access = telemetry_access(config, engine)
                telemetry = start_telemetry(config.telemetry, run.run_id, run.date, run.host, access)
                scrape = start_engine_metrics(config.telemetry, engine.base_url, ctx)
                result = measure_task(
                    target, config.workload, ctx, concurrency, on_request, telemetry.set_phase, plan=plan
                )
                samples, scraped = stop_telemetry(telemetry), stop_engine_metrics(scrape)
                # after a signal nothing more is measured and the user waits for the exit: the engine stops now (its
                # threads no longer compete with the write; no wait for a death behind failed requests, the run is
                # interrupted either way), and the run is written without a task run's own work
                stopping = stop_requested() is not None
                failures = any(r.error is not None for r in result.measured)
                died = engine_error(config, engine, failures and not stopping)
                if stopping and engine_stop is None:
                    engine_stop = _in_background(stop_engine, config, engine)
                finished = finish_run(run, result, died, telemetry.facts | scrape.facts)
                try:
                    if stopping:  # the last write of this process
                        write_results(store, finished, result.warmup + result.measured, samples, scraped, exiting=True)
                    else:
                        write_results_task(store, finished, result.warmup + result.measured, samples, scraped)
                except StoreError as exc:
                    stopped = exc
                    break
                runs.append(finished)
                if watcher is not None:
                    watcher.on_run(finished)  # progress: the level's result line
                check_stop()  # a signal ends the batch: the run in progress is stored (interrupted) first
                ensure_engine_alive(died)  # a dead engine ends the batch: its run is stored as failed first
                stop = sweep_verdict(store, prices, config.workload, [r.run_id for r in runs])
                if stop is not None:
                    break
    finally:
        writer.close()
        if engine_stop is not None:
            engine_stop.result()
        elif stop_requested() is not None:
            stop_engine(config, engine)
        else:
            stop_engine_task(config, engine)
    run_ids = [r.run_id for r in runs]
    # the summary, and its Prefect artifact unless the store refused a write (nothing is published when Prefect is off)
    summary = summarise_task(store, prices, run_ids, publish=stopped is None) if summarise else None
    rows = summary.runs if summary is not None else run_summaries(store, prices, run_ids)
    if stopped is not None:
        stopped.stored = BenchmarkResult(batch_id, run_ids, summary, runs, rows)
        raise stopped
    return BenchmarkResult(batch_id, run_ids, summary, runs, rows, stop)
