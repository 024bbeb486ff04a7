"""Helpers for tests that look inside a store: its catalog read-only, its data files, and the old folder layout."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from tcobench.schemas import RequestRecord, RunRecord, TelemetryRecord
from tcobench.tasks.store.lake import LAKE, attach_sql, new_instance, parse_store

__all__ = ["data_files", "lake", "lake_rows", "on_disk", "store_rows", "table_rows", "write_folder_run"]


@contextlib.contextmanager
def lake(store: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The store's DuckLake attached read-only as ``lake`` (no views, no sandbox): what is really there."""
    location = parse_store(store)
    con = new_instance(location)
    try:
        con.execute(attach_sql(location, read_only=True))
        yield con
    finally:
        con.close()


def lake_rows(store: str | Path, sql: str) -> list[tuple[Any, ...]]:
    with lake(store) as con:
        return con.execute(sql).fetchall()


def table_rows(store: str | Path, table: str) -> list[dict[str, Any]]:
    """The rows of a stored table as dicts; [] while the store has no catalog yet."""
    if not parse_store(store).exists():
        return []
    with lake(store) as con:
        cursor = con.execute(f"SELECT * FROM {LAKE}.{table}")
        names = [d[0] for d in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def data_files(store: str | Path, table: str, schema: str = "main") -> list[str]:
    """The data files the catalog lists for a table (of ``schema``) now."""
    listed = f"ducklake_list_files('{LAKE}', '{table}', schema => '{schema}')"
    return [r[0] for r in lake_rows(store, f"SELECT data_file FROM {listed}")]


def on_disk(store: str | Path) -> list[Path]:
    """Every Parquet file under the store's local data folder."""
    data = parse_store(store).data_dir
    assert data is not None
    return sorted(data.rglob("*.parquet"))


def _legacy_file(
    folder: Path, table: str, rows: Sequence[Any], schema: pa.Schema, date: str, host: str, name: str
) -> None:
    """One file of the pre-DuckLake layout: partition columns in the path only."""
    data = pa.Table.from_pylist([r.model_dump(mode="json") for r in rows], schema=schema)
    data = data.drop_columns(["date", "host"])
    path = folder / table / f"date={date}" / f"host={host}" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, path, compression="zstd")


@functools.cache
def _schema(model: type[BaseModel]) -> pa.Schema:
    """A record's Arrow schema, derived once (write_fleet's folder layout writes three files per run)."""
    from tcobench.schemas import arrow_schema

    return arrow_schema(model)


def write_folder_run(
    folder: Path, run: RunRecord, requests: Sequence[RequestRecord], telemetry: Sequence[TelemetryRecord] = ()
) -> None:
    """Write one run the way tcobench < 0.2 did: STORE/<table>/date=/host=/run-<id>.parquet per table."""
    name = f"run-{run.run_id}.parquet"
    for table, rows, model in (
        ("runs", [run], RunRecord),
        ("requests", requests, RequestRecord),
        ("telemetry", telemetry, TelemetryRecord),
    ):
        if rows:
            _legacy_file(folder, table, rows, _schema(model), run.date, run.host, name)


def store_rows(store: Path, sql: str) -> list[dict[str, Any]]:
    """Rows of a query over the store's views, read in this process (as `tcobench query` would: only the views
    ``sql`` names are defined)."""
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.store.query import connect, views_named

    con = connect(store, load_prices(None), needs=views_named(sql))
    try:
        rows: list[dict[str, Any]] = con.sql(sql).to_arrow_table().to_pylist()
        return rows
    finally:
        con.close()
