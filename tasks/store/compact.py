"""compact_store: fewer, larger files and fresh per-run view rows, so a year of history reads in a second.

Steps, each its own DuckLake transaction (a compaction killed at any point leaves every row exactly once: a merge
commits its new file and retires the old ones together, and an unfinished merge leaves only an unreferenced file):

1. store the cached per-run views (``tasks.store.views``) for runs that lack them under this version's SQL (runs written
   by an older tcobench, or before the SQL changed), in batches, and drop the cache of other SQL versions; then
   store the change tests (``tasks.analysis.history``) of the runs whose stored tests are missing or no longer hold;
2. rewrite files that carry deleted rows, then merge adjacent small files: one file per night for ``requests``
   and ``telemetry`` (they are partitioned by date), a few for the run-level tables;
3. expire snapshots older than ``keep_days`` (time travel reaches back that far) and delete the files only those
   snapshots used. Files no snapshot ever committed (a killed writer's) are left for `tcobench store verify`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from tcobench.tasks.analysis.history import HISTORY_MACROS, change_test_rows
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.health import data_files
from tcobench.tasks.store.lake import LAKE
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import (
    Store,
    StoreRef,
    cache_schema,
    open_store,
    per_run_views,
    replace_cached,
    write_cache,
)
from tcobench.tasks.store.views import CACHED_VIEWS

__all__ = ["CompactResult", "compact_store"]

_BATCH = 200  # runs per cache-refresh transaction


@dataclass(frozen=True)
class CompactResult:
    files_before: int
    files_after: int
    cached_runs: int  # runs whose per-run view rows were computed now
    tested_runs: int  # runs whose change tests were computed now
    dropped_caches: tuple[str, ...]
    expired_snapshots: int
    seconds: float


def _count_files(target: Store) -> int:
    return target.run(lambda con: len(data_files(con, target.location.data_path)), "compact: count files")


def _uncached(con: duckdb.DuckDBPyConnection) -> list[str]:
    schemas = {
        r[0] for r in con.execute("SELECT schema_name FROM duckdb_schemas() WHERE database_name = ?", [LAKE]).fetchall()
    }
    where = (
        f" WHERE run_id NOT IN (SELECT run_id FROM {LAKE}.{cache_schema()}.covered)"
        if cache_schema() in schemas
        else ""
    )
    rows = con.execute(f"SELECT run_id FROM {LAKE}.runs{where} ORDER BY run_id").fetchall()
    return [r[0] for r in rows]


def _cache_batch(con: duckdb.DuckDBPyConnection, ids: list[str]) -> bool:
    """Compute and store the cached views of these runs (one transaction); False when they cannot be cached."""
    con.register("_tcob_ids", pa.table({"run_id": pa.array(ids, pa.string())}))
    try:
        tables = {
            t: con.sql(f"SELECT * FROM {LAKE}.{t} WHERE run_id IN (SELECT run_id FROM _tcob_ids)").to_arrow_table()
            for t in ("runs", "requests", "telemetry")
        }
        rows = per_run_views(tables)
        if rows is None:
            return False
        con.execute("BEGIN")
        con.execute(f"CALL {LAKE}.set_commit_message('tcobench', 'compact: cache per-run views of {len(ids)} runs')")
        write_cache(con, rows, tables["runs"].select(["run_id"]))
        con.execute("COMMIT")
        return True
    finally:
        con.unregister("_tcob_ids")


def _drop_other_caches(con: duckdb.DuckDBPyConnection) -> list[str]:
    schemas = con.execute(
        "SELECT schema_name FROM duckdb_schemas() WHERE database_name = ? AND schema_name LIKE 'cache_%'", [LAKE]
    ).fetchall()
    old = [s for (s,) in schemas if s != cache_schema()]
    if old:
        con.execute("BEGIN")
        for schema in old:
            for (table,) in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = ?", [LAKE, schema]
            ).fetchall():
                con.execute(f"DROP TABLE {LAKE}.{schema}.{table}")
            con.execute(f"DROP SCHEMA {LAKE}.{schema}")
        con.execute("COMMIT")
    return old


def _refresh_caches(target: Store, progress: Callable[[str], None]) -> tuple[int, tuple[str, ...]]:
    pending = target.run(_uncached, "compact: list runs without cached views")
    done = 0
    for start in range(0, len(pending), _BATCH):
        ids = pending[start : start + _BATCH]
        if not target.run(lambda con, ids=ids: _cache_batch(con, ids), "compact: cache per-run views"):  # type: ignore[misc]
            progress(f"the per-run views ({', '.join(CACHED_VIEWS)}) cannot be cached; readers compute them")
            break
        done += len(ids)
        progress(f"cached {', '.join(CACHED_VIEWS)} of {done} of {len(pending)} runs")
    dropped = target.run(_drop_other_caches, "compact: drop cached views of other SQL versions")
    return done, tuple(dropped)


def _store_tests(target: Store, progress: Callable[[str], None]) -> int:
    """Compute and store the change tests that are missing or stale (one transaction); the runs tested."""
    con = connect(target.location, load_prices(None), needs=("trend_runs", "request_metrics", *HISTORY_MACROS))
    try:
        rows = change_test_rows(con)  # the tests do not depend on prices: the shipped table serves
    finally:
        con.close()
    tested = len(set(rows.column("run_id").to_pylist()))
    if not tested:
        return 0

    def write(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("BEGIN")
        con.execute(f"CALL {LAKE}.set_commit_message('tcobench', 'compact: change tests of {tested} runs')")
        replace_cached(con, "change_tests", rows)
        con.execute("COMMIT")

    target.run(write, "compact: store change tests")
    progress(f"stored the change tests of {tested} runs")
    return tested


def compact_store(
    store: StoreRef, keep_days: float = 30.0, on_progress: Callable[[str], None] | None = None
) -> CompactResult:
    """Compact the store (see the module docstring); ``keep_days``: how far back time travel must reach."""
    progress = on_progress or (lambda _: None)
    target = open_store(store)
    t0 = time.monotonic()
    before = _count_files(target)
    cached, dropped = _refresh_caches(target, progress)
    tested = _store_tests(target, progress)
    progress("rewriting files with deleted rows, merging small files")
    _call(target, f"CALL ducklake_rewrite_data_files('{LAKE}')")
    _call(target, f"CALL ducklake_merge_adjacent_files('{LAKE}')")
    progress(f"expiring snapshots older than {keep_days:g} days, deleting the files only they used")
    days = f"INTERVAL '{float(keep_days) * 86400:.0f} seconds'"
    expired = _call(target, f"CALL ducklake_expire_snapshots('{LAKE}', older_than => now() - {days})")
    _call(target, f"CALL ducklake_cleanup_old_files('{LAKE}', cleanup_all => true)")
    after = _count_files(target)
    return CompactResult(before, after, cached, tested, dropped, expired, time.monotonic() - t0)


def _call(target: Store, sql: str) -> int:
    """Run one DuckLake maintenance call (it makes its own transaction); the rows it returned."""
    return target.run(lambda con: len(con.execute(sql).fetchall()), sql.split("(")[0].removeprefix("CALL "))
