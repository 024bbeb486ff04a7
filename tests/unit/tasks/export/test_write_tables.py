"""`tcobench export --format parquet|csv` (issue 46): the store's tables of the selected runs, one file each, every
column in raw units. The round trip: the Parquet files read back equal the store's rows, row by row and value by
value, so a store that takes them back (`tcobench import`, once it reads them) computes the same figures."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tcobench.schemas.export import EXPORT_TABLES, ExportFormat
from tcobench.tasks.export.export_runs import export_runs
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect


def _store_rows(store: Path, table: str, where: str = "") -> list[dict[str, Any]]:
    con = connect(store, load_prices(None), needs=(table,))  # that table or view and what it builds on
    try:
        rows: list[dict[str, Any]] = con.sql(f"SELECT * FROM {table} {where}").to_arrow_table().to_pylist()
        return rows
    finally:
        con.close()


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.fixture(scope="module")
def parquet_out(fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pq") / "out"
    done = export_runs(fleet, load_prices(None), ExportFormat.parquet, out, None)
    assert [p.name for p in done.files] == [f"{t}.parquet" for t in EXPORT_TABLES]
    return out


@pytest.mark.parametrize("table", EXPORT_TABLES)
def test_parquet_round_trip_equals_the_store_row_by_row(fleet: Path, parquet_out: Path, table: str) -> None:
    exported = pq.read_table(parquet_out / f"{table}.parquet")
    stored = _store_rows(fleet, table)
    assert exported.schema.names == list(stored[0]) if stored else exported.num_rows == 0
    assert exported.num_rows == len(stored)
    assert _sorted(exported.to_pylist()) == _sorted(stored)  # every value, raw units, exactly


def test_parquet_keeps_the_store_types(fleet: Path, parquet_out: Path) -> None:
    con = connect(fleet, load_prices(None), needs=("runs", "requests"))
    try:
        for table in ("runs", "requests"):
            assert pq.read_schema(parquet_out / f"{table}.parquet") == con.sql(f"SELECT * FROM {table}").arrow().schema
    finally:
        con.close()


def test_figures_recomputed_from_the_export_equal_the_stores(fleet: Path, parquet_out: Path) -> None:
    """The per-request figures of view request_metrics, recomputed by the same view over the exported requests."""
    import duckdb

    from tcobench.tasks.store.views import sql_views

    text = dict(sql_views())["request_metrics"]
    con = duckdb.connect()
    try:
        con.execute(f"CREATE VIEW requests AS SELECT * FROM read_parquet('{parquet_out / 'requests.parquet'}')")
        con.execute(text)
        again = con.sql("SELECT run_id, phase, request_index, ok, tpot_ns, decode_tok_s FROM request_metrics")
        mine = _sorted(again.to_arrow_table().to_pylist())
    finally:
        con.close()
    stored = _store_rows(fleet, "request_metrics")
    keep = ("run_id", "phase", "request_index", "ok", "tpot_ns", "decode_tok_s")
    assert mine == _sorted([{k: r[k] for k in keep} for r in stored])


def test_a_selection_exports_only_its_runs(fleet: Path, tmp_path: Path) -> None:
    export_runs(fleet, load_prices(None), ExportFormat.parquet, tmp_path / "out", "host=gpu-amd-1,concurrency=1")
    runs = pq.read_table(tmp_path / "out" / "runs.parquet").column("run_id").to_pylist()
    assert runs and all(r.startswith("gpu-amd-1-") and r.endswith("-c1") for r in runs)
    requests = set(pq.read_table(tmp_path / "out" / "requests.parquet").column("run_id").to_pylist())
    assert requests == set(runs)


def test_csv_has_every_row_and_lists_as_json(fleet: Path, tmp_path: Path) -> None:
    export_runs(fleet, load_prices(None), ExportFormat.csv, tmp_path / "out", "run=gpu-nv-1-n0-c4")
    with (tmp_path / "out" / "requests.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    stored = _store_rows(fleet, "requests", "WHERE run_id = 'gpu-nv-1-n0-c4'")
    assert len(rows) == len(stored) > 0
    by_key = {(r["phase"], int(r["request_index"])): r for r in rows}
    for s in stored:
        row = by_key[(s["phase"], s["request_index"])]
        assert json.loads(row["itl_ns"]) == s["itl_ns"] and int(row["ttft_ns"]) == s["ttft_ns"]
