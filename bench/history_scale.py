"""History at scale: one year of synthetic nightly runs in the real store layout, then the views timed over it.

``generate`` writes STORE/{runs,requests}/date=YYYY-MM-DD/host=<host>/<file>.parquet with the store's own
schemas (``tcobench.tasks.store.file_schema``), zstd like ``write_results``. Defaults: 20 hosts x 365 nights x
5 runs (workloads short/long x concurrency) x 274 requests (2 warm-up + 272 measured) = 10,001,000 request
rows; every request has ``--tokens`` output tokens and so ``--tokens - 1`` inter-token gaps. No telemetry is
generated (the energy view is then empty and tco uses price-table watts). Layouts:

  per-run     one file per run and table: exactly what ``write_results`` writes (36,500 x 2 files)
  per-night   one file per (date, host) partition and table: every run of a host's night together

``time`` opens the store with ``tasks.query.connect`` (all shipped views) and times, each ``--repeat`` times
(best and median of the fresh-connection runs are printed): connect itself, run_summary and tco in full
(fetched as Arrow), and two typical history queries (a weekly trend from tco; one series of nightly_trend).
``--layout proposed`` times the same over the layout proposed in docs/performance.md, derived once from the
generated store (untimed): runs, requests and a per-run summary table (run_summary's rows) in one file per
month each; runs read once per connection into a table; every other shipped view unchanged.

    .venv/bin/python bench/history_scale.py generate --out /tmp/tcob-hist --layout per-night
    .venv/bin/python bench/history_scale.py time --store /tmp/tcob-hist/per-night [--layout store|proposed|both]
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tcobench.tasks.store import file_schema

HOSTS = 20
DAYS = 365
RUNS = (("short", 1), ("short", 4), ("short", 16), ("long", 1), ("long", 4))
REQUESTS_PER_RUN = 274
WARMUP = 2
FIRST_DAY = dt.date(2025, 12, 1)
HARDWARE = ("nvidia-h100-sxm", "nvidia-h200-sxm", "amd-mi300x", "amd-mi325x", "nvidia-b200")


def _host(i: int) -> str:
    return f"gpu-{i:02d}"


def _run_rows(host: int, day: dt.date, night_start_ns: int, n_requests: int) -> list[dict[str, Any]]:
    hw = HARDWARE[host % len(HARDWARE)]
    vendor = "amd" if hw.startswith("amd") else "nvidia"
    batch = uuid.uuid4().hex[:12]
    rows = []
    for k, (workload, conc) in enumerate(RUNS):
        start = night_start_ns + k * 600 * 10**9
        rows.append({
            "run_id": uuid.uuid4().hex, "batch_id": batch, "started_ns": start, "finished_ns": start + 400 * 10**9,
            "measure_start_ns": start + 60 * 10**9, "measure_end_ns": start + 360 * 10**9, "status": "ok",
            "error": None, "host_os": "Linux", "host_kernel": "6.8.0", "host_arch": "x86_64",
            "host_cpu": "AMD EPYC 9654", "host_cpu_count": 192, "host_mem_bytes": 2 * 10**12,
            "python_version": "3.11.7", "engine_kind": "container", "engine_name": "ollama",
            "engine_version": "0.32.0" if day.month < 6 else "0.33.1", "engine_url": "http://127.0.0.1:11434",
            "protocol": "ollama", "api": "generate", "model_name": "llama3.2:3b", "model_digest": "sha256:" + "a" * 64,
            "synthetic_model": False, "engine_settings": "{}", "image": f"ollama-{vendor}",
            "image_digest": "sha256:" + "b" * 64, "container_settings": "{}", "gpu_vendor": vendor,
            "gpu_name": hw, "gpu_count": 1, "gpu_uuids": f'["GPU-{host}"]', "driver_version": "580.1",
            "cuda_version": "13.0" if vendor == "nvidia" else None, "rocm_version": "7.2" if vendor == "amd" else None,
            "gpu_power_limit_mw": 700_000, "gpu_max_sm_clock_mhz": 1980, "telemetry_source": None,
            "telemetry_note": "not generated", "workload": workload, "load_mode": "closed", "concurrency": conc,
            "rate_rps": None, "warmup_requests": WARMUP, "measured_requests": n_requests - WARMUP,
            "max_tokens": 128, "num_ctx": 4096, "temperature": 0.0, "seed": 42, "ignore_eos": True,
            "prompt_set_hash": "c" * 16, "config_hash": f"{workload}-{conc}", "hardware_key": hw,
            "site_key": "datacenter", "ops_key": "default", "utilisation": 0.5, "tool_version": "0.1.0",
            "git_revision": None,
        })  # fmt: skip
    return rows


def _requests(rng: np.random.Generator, run_id: str, start_ns: int, n: int, tokens: int, speed: float) -> pa.Table:
    gaps = rng.gamma(20.0, 1.0 / 20.0, size=(n, tokens - 1)) * (1e9 / speed)
    itl = gaps.astype(np.int64)
    ttft = rng.gamma(10.0, 2e6, size=n).astype(np.int64)
    decode = itl.sum(axis=1)
    idx = np.arange(n)
    offsets = pa.array(np.arange(0, n * (tokens - 1) + 1, tokens - 1, dtype=np.int32))
    columns = {
        "run_id": pa.array([run_id] * n), "phase": pa.array(["warmup"] * WARMUP + ["measure"] * (n - WARMUP)),
        "request_index": pa.array(np.where(idx < WARMUP, idx, idx - WARMUP)), "prompt_index": pa.array(idx % 5),
        "seed": pa.array(42 + idx), "start_ns": pa.array(start_ns + idx * 10**9 + ttft // 7),
        "ttft_ns": pa.array(ttft), "e2e_ns": pa.array(ttft + decode + 200_000), "decode_ns": pa.array(decode),
        "chunks": pa.array(np.full(n, tokens)), "itl_ns": pa.ListArray.from_arrays(offsets, pa.array(itl.ravel())),
        "prompt_tokens": pa.array(np.full(n, 24)), "output_tokens": pa.array(np.full(n, tokens)),
        "token_count_source": pa.array(["server_counters"] * n), "finish_reason": pa.array(["length"] * n),
        "server_eval_count": pa.array(np.full(n, tokens)), "server_eval_ns": pa.array(decode + 50_000),
        "http_status": pa.array(np.full(n, 200)),
    }  # fmt: skip
    schema = file_schema("requests")
    arrays = [columns[f.name].cast(f.type) if f.name in columns else pa.nulls(n, f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def _write(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd")


def _host_year(args: tuple[Path, str, int, int, int, int]) -> int:
    out, layout, host, days, per_run, tokens = args
    rng = np.random.default_rng(host)
    rows = 0
    for d in range(days):
        day = FIRST_DAY + dt.timedelta(days=d)
        night = int(dt.datetime(day.year, day.month, day.day, 1, tzinfo=dt.UTC).timestamp()) * 10**9
        runs = _run_rows(host, day, night, per_run)
        speed = 60.0 + 10 * (host % 5) + (5.0 if day.month >= 6 else 0.0)
        reqs = [_requests(rng, r["run_id"], r["started_ns"], per_run, tokens, speed / (1 + 0.1 * r["concurrency"]))
                for r in runs]  # fmt: skip
        part = Path(f"date={day.isoformat()}") / f"host={_host(host)}"
        if layout == "per-run":
            for r, q in zip(runs, reqs, strict=True):
                _write(q, out / "requests" / part / f"run-{r['run_id']}.parquet")
                _write(
                    pa.Table.from_pylist([r], schema=file_schema("runs")),
                    out / "runs" / part / f"run-{r['run_id']}.parquet",
                )
        else:
            _write(pa.concat_tables(reqs), out / "requests" / part / "night.parquet")
            _write(pa.Table.from_pylist(runs, schema=file_schema("runs")), out / "runs" / part / "night.parquet")
        rows += sum(q.num_rows for q in reqs)
    return rows


def generate(out: Path, layout: str, hosts: int, days: int, per_run: int, tokens: int, procs: int) -> None:
    t0 = time.monotonic()
    jobs = [(out, layout, h, days, per_run, tokens) for h in range(hosts)]
    with Pool(procs) as pool:
        rows = sum(pool.imap_unordered(_host_year, jobs))
    files = sum(1 for _ in out.rglob("*.parquet"))
    size = sum(p.stat().st_size for p in out.rglob("*.parquet"))
    print(f"generated {rows:,} request rows, {hosts * days * len(RUNS):,} runs, {files:,} files, "
          f"{size / 2**30:.2f} GiB in {time.monotonic() - t0:.0f} s -> {out}")  # fmt: skip


QUERIES: dict[str, str] = {
    "run_summary": "SELECT * FROM run_summary",
    "tco": "SELECT * FROM tco",
    "weekly_trend": (
        "SELECT host, date_trunc('week', started) AS week, median(output_tok_s) AS tok_s, "
        "median(usd_per_m_output_tokens) AS usd_per_m FROM tco WHERE workload = 'short' AND concurrency = 4 "
        "GROUP BY ALL ORDER BY ALL"
    ),
    "nightly_trend_series": (
        "SELECT * FROM nightly_trend WHERE host = 'gpu-03' AND workload = 'long' AND concurrency = 4 ORDER BY night"
    ),
}


def _plain_connection(store: Path) -> Any:
    """DuckDB views over the generated store (no union_by_name: the generator writes one schema)."""
    import duckdb

    con = duckdb.connect()
    for table in ("runs", "requests"):
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{store}/{table}/*/*/*.parquet', "
                    "hive_partitioning = true, hive_types = {'date': 'VARCHAR', 'host': 'VARCHAR'})")  # fmt: skip
    return con


def prepare_proposed(store: Path) -> Path:
    """The proposed layout, derived once from a generated store: runs, requests and a per-run summary
    table (run_summary's rows, computed by its own SQL), each compacted to one file per month."""
    from tcobench.tasks.query import sql_views

    out = store.parent / (store.name + "-proposed")
    if out.exists():
        return out
    con = _plain_connection(store)
    out.mkdir(parents=True)
    views = dict(sql_views())
    con.execute(views["request_metrics"])
    con.execute(views["run_summary"])
    t0 = time.monotonic()
    for table, select in (("runs", "SELECT *, left(date, 7) AS month FROM runs"),
                          ("requests", "SELECT *, left(date, 7) AS month FROM requests"),
                          ("run_summary", "SELECT *, left(date, 7) AS month FROM run_summary")):  # fmt: skip
        con.execute(f"COPY ({select}) TO '{out / table}' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (month))")
        print(f"  wrote {table} by month in {time.monotonic() - t0:.0f} s")
    con.close()
    return out


def connect_proposed(folder: Path, prices: Any) -> Any:
    """Like tasks.query.connect over the proposed layout: runs read once into a table, run_summary from its
    summary table, requests/telemetry/images as views, every other shipped view unchanged."""
    import duckdb

    from tcobench.tasks import query

    con = duckdb.connect()
    con.execute("SET parquet_metadata_cache = true")
    src = "read_parquet('{}/{}/*/*.parquet', hive_partitioning = true)"
    con.execute(f"CREATE TEMP TABLE _runs AS SELECT * EXCLUDE (month) FROM {src.format(folder, 'runs')}")
    con.execute("CREATE VIEW runs AS SELECT * FROM _runs")
    con.execute(f"CREATE VIEW requests AS SELECT * EXCLUDE (month) FROM {src.format(folder, 'requests')} "
                "WHERE run_id IN (SELECT run_id FROM runs)")  # fmt: skip
    for table in ("telemetry", "images"):
        query._create_base_view(con, folder, table)  # none generated: typed empty views, as in connect()
    query._register_prices(con, prices)
    for name, text in query.sql_views():
        if name == "run_summary":
            text = f"CREATE VIEW run_summary AS SELECT * EXCLUDE (month) FROM {src.format(folder, 'run_summary')}"
        con.execute(text)
    return con


def _query(con: Any, sql: str) -> Any:
    return con.sql(sql).to_arrow_table()


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def time_store(store: Path, repeat: int, proposed: bool) -> None:
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.query import connect

    prices = load_prices(None)
    folder = prepare_proposed(store) if proposed else store
    label = f"{folder} (proposed: monthly files + per-run summary table)" if proposed else str(store)
    print(f"store {label}: load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)
    results: dict[str, list[float]] = {}
    for _ in range(repeat):
        t0 = time.perf_counter()
        con = connect_proposed(folder, prices) if proposed else connect(store, prices)
        results.setdefault("connect", []).append(time.perf_counter() - t0)
        for name, sql in QUERIES.items():
            results.setdefault(name, []).append(_timed(functools.partial(_query, con, sql)))
        con.close()
    for name, times in results.items():
        print(f"  {name:22s} best {min(times):7.3f} s   median {statistics.median(times):7.3f} s   (n={len(times)})")
    print(f"  load after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)


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
    t = sub.add_parser("time")
    t.add_argument("--store", type=Path, required=True)
    t.add_argument("--repeat", type=int, default=3)
    t.add_argument(
        "--layout",
        choices=("store", "proposed", "both"),
        default="both",
        help="store: as generated; proposed: monthly files + per-run summary table (derived once)",
    )
    args = parser.parse_args()
    if args.cmd == "generate":
        generate(args.out / args.layout, args.layout, args.hosts, args.days, args.requests_per_run, args.tokens,
                 args.procs)  # fmt: skip
    else:
        if args.layout in ("store", "both"):
            time_store(args.store, args.repeat, proposed=False)
        if args.layout in ("proposed", "both"):
            time_store(args.store, args.repeat, proposed=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
