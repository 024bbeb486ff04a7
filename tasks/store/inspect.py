"""describe_store / list_snapshots: what a store holds (tables, files, cached views) and its snapshots."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from tcobench.tasks.store.health import data_files
from tcobench.tasks.store.lake import LAKE
from tcobench.tasks.store.store import TABLES, StoreRef, cache_schema, legacy_layout, open_store

__all__ = ["StoreInfo", "describe_store", "list_snapshots"]


@dataclass
class StoreInfo:
    store: str
    catalog: str
    data_path: str
    exists: bool
    legacy: list[str] = field(default_factory=list)
    snapshot: int | None = None
    snapshot_time: str | None = None
    tables: dict[str, tuple[int, int]] = field(default_factory=dict)  # table -> (rows, files)
    cache: str = ""
    cached_runs: int = 0


def _describe(con: duckdb.DuckDBPyConnection, info: StoreInfo) -> None:
    row = con.execute(f"SELECT snapshot_id, snapshot_time FROM {LAKE}.snapshots() ORDER BY 1 DESC LIMIT 1").fetchone()
    if row:
        info.snapshot, info.snapshot_time = int(row[0]), str(row[1])
    files = data_files(con, info.data_path)
    for table in TABLES:
        count = con.execute(f"SELECT count(*) FROM {LAKE}.main.{table}").fetchone()
        info.tables[table] = (int(count[0]) if count else 0, sum(1 for f in files if f.table == table))
    schemas = {
        r[0] for r in con.execute("SELECT schema_name FROM duckdb_schemas() WHERE database_name = ?", [LAKE]).fetchall()
    }
    info.cache = cache_schema()
    if info.cache in schemas:
        covered = con.execute(f"SELECT count(DISTINCT run_id) FROM {LAKE}.{info.cache}.covered").fetchone()
        info.cached_runs = int(covered[0]) if covered else 0


def describe_store(store: StoreRef) -> StoreInfo:
    """Location, newest snapshot, rows and files per table, and how many runs have cached per-run views."""
    target = open_store(store)
    location = target.location
    info = StoreInfo(
        str(location), location.catalog, location.data_path, location.exists(), legacy_layout(location.root)
    )
    if info.exists and not info.legacy:
        target.run(lambda con: _describe(con, info), "info")
    return info


def list_snapshots(store: StoreRef, limit: int = 20) -> list[dict[str, Any]]:
    """The newest snapshots: id, commit time, what changed, and the commit message (which run, which step)."""
    target = open_store(store)
    if not target.location.exists():
        return []
    sql = (
        f"SELECT snapshot_id, snapshot_time, changes, commit_message FROM {LAKE}.snapshots() "
        f"ORDER BY snapshot_id DESC LIMIT {int(limit)}"
    )
    rows: list[dict[str, Any]] = target.run(lambda con: con.sql(sql).to_arrow_table().to_pylist(), "snapshots")
    return rows
