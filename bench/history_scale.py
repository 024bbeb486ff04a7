"""History at scale: one year of synthetic nightly runs, imported into the store, then the history queries timed.

``generate`` writes the folder layout of tcobench < 0.2 (what `tcobench store migrate` imports) with the store's
schemas: by default 20 hosts x 365 nights x 5 runs (workloads short/long x concurrency), each a nightly cell, with
environment changes (driver, kernel, ROCm) and failed nights of every class (``_environment``). A run at concurrency
c is a closed loop of c streams, so its throughput grows with c while each stream slows, and each side of compare has
a frontier to compare at equal interactivity. ``lake`` imports it; ``time`` times the history queries
(``--operations-only``: `history --availability` and `--changes` only).

Design notes: docs/dev/architecture/bench-and-build.md#bench-history-scale.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tcobench.schemas.serving import ServingConfig
from tcobench.tasks.store.store import table_schema

HOSTS = 20
DAYS = 365
RUNS = (("short", 1), ("short", 4), ("short", 16), ("long", 1), ("long", 4))
REQUESTS_PER_RUN = 274
WARMUP = 2
FIRST_DAY = dt.date(2025, 12, 1)
SLOT_NS = 10**9  # a stream's request per slot: each finishes inside it (16 tokens at >= 20 tok/s, with its TTFT)
HARDWARE = ("nvidia-h100-sxm", "nvidia-h200-sxm", "amd-mi300x", "amd-mi325x", "nvidia-b200")


def _folder_schema(table: str) -> pa.Schema:
    """The folder layout's file schema: the store's, less the hive partition columns (date, host)."""
    schema = table_schema(table)
    return pa.schema([f for f in schema if f.name not in ("date", "host")])


def _host(i: int) -> str:
    return f"gpu-{i:02d}"


def _run_rows(host: int, day: dt.date, night_start_ns: int, n_requests: int, configs: int) -> list[dict[str, Any]]:
    hw = HARDWARE[host % len(HARDWARE)]
    version = "0.32.0" if day.month < 6 else "0.33.1"
    serving = _serving(host, configs, version)
    vendor = "amd" if hw.startswith("amd") else "nvidia"
    batch = uuid.uuid4().hex[:12]
    env, failure = _environment(host, day, vendor)
    rows = []
    for k, (workload, conc) in enumerate(RUNS):
        start = night_start_ns + k * 600 * 10**9
        end = start + _slots(n_requests, conc) * SLOT_NS  # the measured window: the run's slots (_requests)
        failed = failure is not None and (failure == "platform" or k == 0)  # a platform failure: the whole night
        rows.append(
            {
                "run_id": uuid.uuid4().hex,
                "batch_id": batch,
                "started_ns": start,
                "finished_ns": end + 40 * 10**9,
                "measure_start_ns": start,
                "measure_end_ns": end,
                "status": "failed" if failed else "ok",
                "error": f"simulated {failure} failure" if failed else None,
                "failure_class": failure if failed else None,
                "cell": f"{_host(host)}/ollama/llama3.2:3b/{workload}-c{conc}",
                "host_os": "Linux",
                "host_kernel": env["kernel"],
                "host_arch": "x86_64",
                "host_cpu": "AMD EPYC 9654",
                "host_cpu_count": 192,
                "host_mem_bytes": 2 * 10**12,
                "python_version": "3.11.7",
                "engine_kind": "container",
                "engine_name": "ollama",
                "engine_version": version,
                "engine_url": "http://127.0.0.1:11434",
                "protocol": "ollama",
                "api": "generate",
                "model_name": "llama3.2:3b",
                "model_digest": "sha256:" + "a" * 64,
                "synthetic_model": False,
                "engine_settings": "{}",
                "image": f"ollama-{vendor}",
                "image_digest": "sha256:" + "b" * 64,
                "container_settings": "{}",
                "gpu_vendor": vendor,
                "gpu_name": hw,
                "gpu_count": 1,
                "gpu_uuids": f'["GPU-{host}"]',
                "driver_version": env["driver"],
                "cuda_version": "13.0" if vendor == "nvidia" else None,
                "rocm_version": env["rocm"] if vendor == "amd" else None,
                "gpu_power_limit_mw": 700_000,
                "gpu_max_sm_clock_mhz": 1980,
                "telemetry_source": None,
                "telemetry_note": "not generated",
                "workload": workload,
                "load_mode": "closed",
                "concurrency": conc,
                "rate_rps": None,
                "warmup_requests": WARMUP,
                "measured_requests": n_requests - WARMUP,
                "max_tokens": 128,
                "num_ctx": 4096,
                "temperature": 0.0,
                "seed": 42,
                "ignore_eos": True,
                "prompt_set_hash": "c" * 16,
                "config_hash": f"{workload}-{conc}",
                "hardware_key": hw,
                "site_key": "datacenter",
                "ops_key": "default",
                "utilisation": 0.5,
                "tool_version": "0.1.0",
                "git_revision": None,
                **serving,
            }
        )
    return rows


_CLASSES = ("engine", "harness", "infrastructure", "unknown")  # the other classes, in turn


def _environment(host: int, day: dt.date, vendor: str) -> tuple[dict[str, str], str | None]:
    """The host's driver, ROCm and kernel on ``day``, and the failure class of its night (None: ok). Each host
    updates its driver on day 100 + host and its kernel on day 200 + host (AMD hosts: ROCm 7.2 -> 7.3 on day
    250 + host); every fourth host's driver update breaks it for 2 nights (class platform); one night in 30 a
    run fails with one of the other classes, in turn."""
    d = (day - FIRST_DAY).days
    driver_day, kernel_day, rocm_day = 100 + host, 200 + host, 250 + host
    env = {
        "driver": "580.1" if d < driver_day else "580.2",
        "kernel": "6.8.0" if d < kernel_day else "6.11.0",
        "rocm": "7.2" if d < rocm_day else "7.3",
    }
    if host % 4 == 0 and driver_day <= d < driver_day + 2:
        return env, "platform"
    if (d + host) % 30 == 0:
        return env, _CLASSES[(d + host) // 30 % len(_CLASSES)]
    return env, None


def _config_index(host: int, configs: int) -> int:
    """The serving configuration of a host's runs (0 without --configs): the hosts of one hardware key take turns."""
    return (host // len(HARDWARE)) % configs if configs else 0


def _serving(host: int, configs: int, version: str) -> dict[str, Any]:
    """The run columns of a serving configuration with --configs N (tensor parallel 1, 2, 4, 8, ... on 8-GPU hosts,
    declared), else none: the runs of tcobench < 0.5 whose configuration run_summary derives (legacy-...)."""
    if not configs:
        return {}
    tp = 2 ** _config_index(host, configs)
    config = ServingConfig(engine="ollama", engine_version=version, model="llama3.2:3b", tensor_parallel=tp, gpus=tp)
    return {
        "config_id": config.config_id,
        "serving_config": config.canonical(),
        "gpus_given": tp,
        "gpus_given_source": "declared",
        "tensor_parallel": tp,
        "gpu_count": 8,
    }


def _slots(n: int, conc: int) -> int:
    """Slots a closed loop of ``conc`` streams takes for n requests (``conc`` requests start in each)."""
    return -(-n // conc)


def _requests(
    rng: np.random.Generator, run_id: str, start_ns: int, n: int, tokens: int, speed: float, conc: int
) -> pa.Table:
    gaps = rng.gamma(20.0, 1.0 / 20.0, size=(n, tokens - 1)) * (1e9 / speed)
    itl = gaps.astype(np.int64)
    ttft = rng.gamma(10.0, 2e6, size=n).astype(np.int64)
    decode = itl.sum(axis=1)
    idx = np.arange(n)
    offsets = pa.array(np.arange(0, n * (tokens - 1) + 1, tokens - 1, dtype=np.int32))
    columns = {
        "run_id": pa.array([run_id] * n),
        "phase": pa.array(["warmup"] * WARMUP + ["measure"] * (n - WARMUP)),
        "request_index": pa.array(np.where(idx < WARMUP, idx, idx - WARMUP)),
        "prompt_index": pa.array(idx % 5),
        "seed": pa.array(42 + idx),
        "start_ns": pa.array(start_ns + idx // conc * SLOT_NS + ttft // 7),
        "ttft_ns": pa.array(ttft),
        "e2e_ns": pa.array(ttft + decode + 200_000),
        "decode_ns": pa.array(decode),
        "chunks": pa.array(np.full(n, tokens)),
        "itl_ns": pa.ListArray.from_arrays(offsets, pa.array(itl.ravel())),
        "prompt_tokens": pa.array(np.full(n, 24)),
        "output_tokens": pa.array(np.full(n, tokens)),
        "token_count_source": pa.array(["server_counters"] * n),
        "finish_reason": pa.array(["length"] * n),
        "server_eval_count": pa.array(np.full(n, tokens)),
        "server_eval_ns": pa.array(decode + 50_000),
        "http_status": pa.array(np.full(n, 200)),
        "retries": pa.array(np.zeros(n, dtype=np.int64)),
    }
    schema = _folder_schema("requests")
    arrays = [columns[f.name].cast(f.type) if f.name in columns else pa.nulls(n, f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def _write(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd")


def _host_year(args: tuple[Path, str, int, int, int, int, int]) -> int:
    out, layout, host, days, per_run, tokens, configs = args
    rng = np.random.default_rng(host)
    rows = 0
    for d in range(days):
        day = FIRST_DAY + dt.timedelta(days=d)
        night = int(dt.datetime(day.year, day.month, day.day, 1, tzinfo=dt.UTC).timestamp()) * 10**9
        runs = _run_rows(host, day, night, per_run, configs)
        speed = (60.0 + 10 * (host % 5) + (5.0 if day.month >= 6 else 0.0)) * (1 + 0.4 * _config_index(host, configs))
        reqs = [
            _requests(
                rng,
                r["run_id"],
                r["started_ns"],
                per_run,
                tokens,
                speed / (1 + 0.1 * r["concurrency"]),
                r["concurrency"],
            )
            for r in runs
        ]
        part = Path(f"date={day.isoformat()}") / f"host={_host(host)}"
        if layout == "per-run":
            for r, q in zip(runs, reqs, strict=True):
                _write(q, out / "requests" / part / f"run-{r['run_id']}.parquet")
                _write(
                    pa.Table.from_pylist([r], schema=_folder_schema("runs")),
                    out / "runs" / part / f"run-{r['run_id']}.parquet",
                )
        else:
            _write(pa.concat_tables(reqs), out / "requests" / part / "night.parquet")
            _write(pa.Table.from_pylist(runs, schema=_folder_schema("runs")), out / "runs" / part / "night.parquet")
        rows += sum(q.num_rows for q in reqs)
    return rows


def generate(
    out: Path, layout: str, hosts: int, days: int, per_run: int, tokens: int, procs: int, configs: int = 0
) -> None:
    t0 = time.monotonic()
    jobs = [(out, layout, h, days, per_run, tokens, configs) for h in range(hosts)]
    with Pool(procs) as pool:
        rows = sum(pool.imap_unordered(_host_year, jobs))
    files = sum(1 for _ in out.rglob("*.parquet"))
    size = sum(p.stat().st_size for p in out.rglob("*.parquet"))
    print(
        f"generated {rows:,} request rows, {hosts * days * len(RUNS):,} runs, {files:,} files, "
        f"{size / 2**30:.2f} GiB in {time.monotonic() - t0:.0f} s -> {out}"
    )


QUERIES: dict[str, str] = {
    "tco_host_model_month": (
        "SELECT host, model_name, date_trunc('month', started) AS month, median(output_tok_s) AS tok_s, "
        "median(usd_per_m_output_tokens) AS usd_per_m FROM tco GROUP BY ALL ORDER BY ALL"
    ),
    "nightly_trend": "SELECT * FROM nightly_trend ORDER BY ALL",
}
# March to May 2026: one engine version throughout (compare refuses to mix versions unless told to)
_QUARTER = "since=2026-03-01,until=2026-05-29"
QUARTER = (
    f"workload=short,concurrency=4,vendor=nvidia,{_QUARTER}",
    f"workload=short,concurrency=4,vendor=amd,{_QUARTER}",
)
# every concurrency level of the short workload: a frontier per side, for compare at equal interactivity
QUARTER_SWEEP = (f"workload=short,vendor=nvidia,{_QUARTER}", f"workload=short,vendor=amd,{_QUARTER}")


def _host_tables(host: int, days: int, per_run: int, tokens: int) -> dict[str, pa.Table]:
    """A host's year as the store's runs and requests tables (date and host columns included)."""
    rng = np.random.default_rng(host)
    runs: list[dict[str, Any]] = []
    reqs = []
    for d in range(days):
        day = FIRST_DAY + dt.timedelta(days=d)
        night = int(dt.datetime(day.year, day.month, day.day, 1, tzinfo=dt.UTC).timestamp()) * 10**9
        speed = 60.0 + 10 * (host % 5) + (5.0 if day.month >= 6 else 0.0)
        for r in _run_rows(host, day, night, per_run, 0):
            runs.append({**r, "date": day.isoformat(), "host": _host(host)})
            q = _requests(
                rng,
                r["run_id"],
                r["started_ns"],
                per_run,
                tokens,
                speed / (1 + 0.1 * r["concurrency"]),
                r["concurrency"],
            )
            reqs.append(
                q.append_column("date", pa.array([day.isoformat()] * q.num_rows)).append_column(
                    "host", pa.array([_host(host)] * q.num_rows)
                )
            )
    return {"runs": pa.Table.from_pylist(runs), "requests": pa.concat_tables(reqs)}


def direct(store: str, hosts: int, days: int, per_run: int, tokens: int) -> None:
    """Write the generated history straight into a store (a commit per host, the store's own writer), then compact
    it: no folder layout, no import (what `lake` measures)."""
    from tcobench.tasks.store.compact import compact_store
    from tcobench.tasks.store.store import commit_tables

    t0 = time.monotonic()
    for h in range(hosts):
        commit_tables(store, _host_tables(h, days, per_run, tokens), writer="bench")
        print(f"  host {h + 1}/{hosts} written ({time.monotonic() - t0:.0f} s, load {_load()})", flush=True)
    compacted = compact_store(store, keep_days=0)
    print(f"written in {time.monotonic() - t0:.0f} s; change tests stored for {compacted.tested_runs:,} runs")


def to_lake(folder: Path, store: str, batch: int) -> None:
    """Import a generated folder store (per-run layout) with `store migrate`'s code, then `store compact`'s."""
    from tcobench.tasks.store.compact import compact_store
    from tcobench.tasks.store.inspect import describe_store
    from tcobench.tasks.store.migrate import migrate_folder

    print(f"load {_load()}", flush=True)
    t0 = time.monotonic()
    result = migrate_folder(folder, store, None, batch=batch, on_progress=lambda m: print(f"  {m}", flush=True))
    t1 = time.monotonic()
    print(f"imported {result.runs:,} runs, {result.requests:,} requests in {t1 - t0:.0f} s", flush=True)
    compacted = compact_store(store, keep_days=0)
    print(
        f"compacted in {time.monotonic() - t1:.0f} s: {compacted.files_before:,} -> {compacted.files_after:,} "
        f"data files; change tests stored for {compacted.tested_runs:,} runs",
        flush=True,
    )
    for table, (rows, files) in describe_store(store).tables.items():
        print(f"  {table:32s} {rows:>12,} rows {files:>8,} files")
    print(f"load after {_load()}", flush=True)


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _note(results: dict[str, list[float]], name: str, seconds: float) -> None:
    """Keep a timing and print it at once (a long run that is stopped still shows what it measured)."""
    results.setdefault(name, []).append(seconds)
    print(f"    {name:22s} {seconds:7.3f} s   load {_load()}", flush=True)


def _middle_target(store: str, prices: Any) -> float | None:
    """The middle of the sides' overlap of interactivity over QUARTER_SWEEP (the target compare picks by default),
    printed with both sides' ranges; None (and why) when there is no overlap to compare at."""
    from tcobench.tasks.analysis.compare import CompareOptions, compare

    found = compare(store, prices, *QUARTER_SWEEP, CompareOptions(resamples=100)).frontier
    if found is None or len(found.targets) < 2 or found.targets[1].ratio is None:
        print(f"    compare_interactivity: no target inside both ranges ({found.notes if found else 'no frontier'})")
        return None
    print(f"    frontier A {found.a.range_text()}, B {found.b.range_text()}; target {found.targets[1].target:.1f}")
    return float(found.targets[1].target)


def time_store(store: str, repeat: int, report_repeat: int) -> dict[str, list[float]]:
    """Time the issue's history queries over a store: each a fresh connection, ``repeat`` times."""
    from tcobench.tasks.analysis import operations
    from tcobench.tasks.analysis.compare import CompareOptions, compare
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.report.report import write_report
    from tcobench.tasks.store.query import connect, views_named

    prices = load_prices(None)
    print(f"store {store}: load {_load()}", flush=True)
    results: dict[str, list[float]] = {}
    middle = _middle_target(store, prices)
    targets = [middle] if middle is not None else []
    for _ in range(repeat):
        for name, sql in QUERIES.items():

            def one(sql: str = sql) -> None:
                con = connect(store, prices, needs=views_named(sql))  # as `tcobench query` does
                try:
                    con.sql(sql).to_arrow_table()
                finally:
                    con.close()

            _note(results, name, _timed(one))
        _note(results, "history_availability", _timed(lambda: operations.availability(store, prices)))
        _note(results, "history_changes", _timed(lambda: operations.environment_changes(store, prices)))
        quarter = _timed(lambda: compare(store, prices, QUARTER[0], QUARTER[1], CompareOptions(resamples=2000)))
        _note(results, "compare_quarter", quarter)
        if targets:  # as `compare --interactivity T` (default resamples) over every level of a quarter
            at = _timed(lambda: compare(store, prices, *QUARTER_SWEEP, CompareOptions(interactivity=tuple(targets))))
            _note(results, "compare_interactivity", at)
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(report_repeat):
            _note(
                results,
                "report_year",
                _timed(lambda: write_report(store, prices, Path(tmp) / "report.html", resamples=1000)),
            )
    for name, times in results.items():
        print(f"  {name:22s} best {min(times):7.3f} s   median {statistics.median(times):7.3f} s   (n={len(times)})")
    print(f"  load after: {_load()}", flush=True)
    return results


def time_operations(store: str, repeat: int) -> dict[str, list[float]]:
    """Time `history --availability` and `history --changes`' queries: each a fresh connection, ``repeat`` times."""
    from tcobench.tasks.analysis import operations
    from tcobench.tasks.prices import load_prices

    prices = load_prices(None)
    print(f"store {store}: load {_load()}", flush=True)
    results: dict[str, list[float]] = {}
    for _ in range(repeat):
        _note(results, "history_availability", _timed(lambda: operations.availability(store, prices)))
        _note(results, "history_changes", _timed(lambda: operations.environment_changes(store, prices)))
    for name, times in results.items():
        print(f"  {name:22s} best {min(times):7.3f} s   median {statistics.median(times):7.3f} s   (n={len(times)})")
    print(f"  load after: {_load()}", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--out", type=Path, default=Path("/tmp/tcob-hist"))
    g.add_argument("--layout", choices=("per-run", "per-night"), default="per-run")
    g.add_argument("--hosts", type=int, default=HOSTS)
    g.add_argument("--days", type=int, default=DAYS)
    g.add_argument("--requests-per-run", type=int, default=REQUESTS_PER_RUN)
    g.add_argument("--tokens", type=int, default=16, help="output tokens per request (gaps = tokens - 1)")
    g.add_argument("--procs", type=int, default=os.cpu_count() or 1)
    g.add_argument(
        "--configs",
        type=int,
        default=0,
        help="serving configurations per platform (the hosts of a hardware key take turns; 0: none stored)",
    )
    lk = sub.add_parser("lake", help="import a generated per-run folder store into a store URI and compact it")
    lk.add_argument("--folder", type=Path, default=Path("/tmp/tcob-hist/per-run"))
    lk.add_argument("--store", required=True, help="store URI (a new folder, sqlite://..., postgresql://...)")
    lk.add_argument("--batch", type=int, default=500, help="runs per transaction")
    dr = sub.add_parser("direct", help="write the generated history straight into a store (no folder, no import)")
    dr.add_argument("--store", required=True, help="store URI (a new folder)")
    dr.add_argument("--hosts", type=int, default=HOSTS)
    dr.add_argument("--days", type=int, default=DAYS)
    dr.add_argument("--requests-per-run", type=int, default=REQUESTS_PER_RUN)
    dr.add_argument("--tokens", type=int, default=16, help="output tokens per request (gaps = tokens - 1)")
    t = sub.add_parser("time")
    t.add_argument("--store", required=True, help="store URI")
    t.add_argument("--repeat", type=int, default=5)
    t.add_argument("--report-repeat", type=int, default=1)
    t.add_argument(
        "--operations-only",
        action="store_true",
        help="time only `history --availability` and `history --changes` (tasks/analysis/operations.py)",
    )
    args = parser.parse_args()
    if args.cmd == "generate":
        generate(
            args.out / args.layout,
            args.layout,
            args.hosts,
            args.days,
            args.requests_per_run,
            args.tokens,
            args.procs,
            args.configs,
        )
    elif args.cmd == "direct":
        direct(args.store, args.hosts, args.days, args.requests_per_run, args.tokens)
    elif args.cmd == "lake":
        to_lake(args.folder, args.store, args.batch)
    elif args.operations_only:
        time_operations(args.store, args.repeat)
    else:
        time_store(args.store, args.repeat, args.report_repeat)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
