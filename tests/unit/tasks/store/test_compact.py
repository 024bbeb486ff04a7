"""compact_store: small files merged per night, every row kept, per-run views cached, old snapshots expired."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.tasks.prices import load_prices
from tcobench.tasks.store import store as store_module
from tcobench.tasks.store import views as views_module
from tcobench.tasks.store.compact import compact_store
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import cache_schema, write_results
from tests.store_helpers import data_files, lake_rows, on_disk
from tests.unit.factories import make_request, make_run, make_telemetry

_NIGHTS = ("2023-11-14", "2023-11-15")


def _write(store: Path, n: int = 3) -> None:
    for night in _NIGHTS:
        for i in range(n):
            run_id = f"{night}-{i}"
            write_results(
                store,
                make_run(run_id=run_id, date=night),
                [make_request(run_id=run_id, date=night, request_index=k) for k in range(5)],
                [make_telemetry(run_id=run_id, date=night)],
            )


def _everything(store: Path) -> dict[str, list[tuple[object, ...]]]:
    tables = ("runs", "requests", "telemetry", "commits")
    return {t: lake_rows(store, f"SELECT * FROM lake.{t} ORDER BY ALL") for t in tables}


def _views(store: Path) -> dict[str, list[tuple[object, ...]]]:
    views = ("run_summary", "energy", "tco", "frontier_requests")
    con = connect(store, load_prices(None), needs=views)  # those views and what they build on
    try:
        return {v: con.execute(f"SELECT * FROM {v} ORDER BY ALL").fetchall() for v in views}
    finally:
        con.close()


def test_files_merge_per_night_and_every_row_stays(tmp_path: Path) -> None:
    _write(tmp_path)
    rows, views = _everything(tmp_path), _views(tmp_path)
    assert len(data_files(tmp_path, "requests")) == 6
    result = compact_store(tmp_path, keep_days=0)
    assert sorted(Path(p).parent.name for p in data_files(tmp_path, "requests")) == [f"date={n}" for n in _NIGHTS]
    assert len(data_files(tmp_path, "runs")) == 1
    assert result.files_after < result.files_before
    assert _everything(tmp_path) == rows
    assert _views(tmp_path) == views
    current = {p for t in ("runs", "requests", "telemetry", "commits") for p in data_files(tmp_path, t)}
    assert {str(p) for p in on_disk(tmp_path)} >= current
    assert result.expired_snapshots > 0
    cached = data_files(tmp_path, "frontier_requests", cache_schema())  # partitioned by month: a file per month
    assert [Path(p).parent.name for p in cached] == ["month=2023-11"]


def test_runs_without_cached_views_get_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # e.g. written by an older tcobench
    monkeypatch.setattr(store_module, "per_run_views", lambda tables, con=None: None)
    _write(tmp_path, 1)
    monkeypatch.undo()
    schema = store_module.cache_schema()
    assert lake_rows(tmp_path, f"SELECT count(*) FROM duckdb_tables() WHERE schema_name = '{schema}'") == [(0,)]
    before = _views(tmp_path)  # computed by the reader
    assert compact_store(tmp_path).cached_runs == 2
    assert lake_rows(tmp_path, f"SELECT count(*) FROM lake.{schema}.covered") == [(2,)]
    assert _views(tmp_path) == before


def test_a_changed_view_sql_caches_anew_and_drops_the_old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, 1)
    old = store_module.cache_schema()
    monkeypatch.setattr(views_module, "view_key", lambda: "0123456789abcdef")
    monkeypatch.setattr(store_module, "view_key", lambda: "0123456789abcdef")
    result = compact_store(tmp_path)
    assert result.dropped_caches == (old,)
    assert result.cached_runs == 2
    assert lake_rows(tmp_path, "SELECT count(*) FROM lake.cache_0123456789abcdef.covered") == [(2,)]
