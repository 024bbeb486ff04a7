"""Every typed row (tasks/store/rows.py and the query-specific ones) against the columns and types its query returns."""

from __future__ import annotations

import datetime as dt
import types
import typing
from collections.abc import Iterator

import duckdb
import pytest

from tcobench.tasks.analysis.compare.candidates import CandidateRun
from tcobench.tasks.report.assets import ReportRun
from tcobench.tasks.report.report import REPORT_RUNS_SQL
from tcobench.tasks.store.query import connect, freeze_views
from tcobench.tasks.store.rows import VIEW_ROWS, RunSummaryRow, TcoRow, fetch_rows, typed_rows
from tcobench.tasks.store.store import write_results
from tests.unit.factories import make_prices, make_request, make_run

# DuckDB type (as DuckDB names it) -> the Python type its values arrive as through Arrow
PYTHON_TYPE = {
    "VARCHAR": str,
    "BIGINT": int,
    "INTEGER": int,
    "DOUBLE": float,
    "BOOLEAN": bool,
    "DATE": dt.date,
    "TIMESTAMP": dt.datetime,
}


@pytest.fixture(scope="module", params=["one run", "empty store"])
def con(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A store with one run (Parquet's types), and an empty one (the typed stand-ins of tasks/store/query.py)."""
    store = tmp_path_factory.mktemp("rows")
    if request.param == "one run":
        write_results(store, make_run(gpu_vendor="nvidia", gpu_name="Test GPU", gpu_count=1), [make_request()])
    connection = connect(store, make_prices(latency_target={}))
    freeze_views(connection)
    yield connection
    connection.close()


def _columns(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[str, str]]:
    description = con.execute(f"SELECT * FROM ({sql}) LIMIT 0", {"basis": "owned"} if "$basis" in sql else None)
    return [(name, str(kind)) for name, kind, *_ in description.description or []]


def _check(con: duckdb.DuckDBPyConnection, sql: str, row: type[object]) -> None:
    hints = typing.get_type_hints(row)
    columns = _columns(con, sql)
    assert [c for c, _ in columns] == list(hints), f"{row.__name__}: keys differ from the query's columns"
    for column, kind in columns:
        declared = hints[column]
        allowed = set(typing.get_args(declared)) if isinstance(declared, types.UnionType) else {declared}
        assert PYTHON_TYPE[kind] in allowed, f"{row.__name__}.{column}: {kind} arrives as {PYTHON_TYPE[kind]}"


@pytest.mark.parametrize("view", sorted(VIEW_ROWS))
def test_view_rows_match_their_views(con: duckdb.DuckDBPyConnection, view: str) -> None:
    _check(con, f"SELECT * FROM {view}", VIEW_ROWS[view])


@pytest.mark.parametrize(
    ("sql", "row"), [("SELECT * FROM candidate_runs($basis)", CandidateRun), (REPORT_RUNS_SQL, ReportRun)]
)
def test_query_rows_match_their_queries(con: duckdb.DuckDBPyConnection, sql: str, row: type[object]) -> None:
    _check(con, sql, row)


def test_fetch_rows_refuses_a_query_that_does_not_match(con: duckdb.DuckDBPyConnection) -> None:
    summaries = fetch_rows(con, "SELECT * FROM run_summary", RunSummaryRow)
    assert [(s["run_id"], s["n"], s["ok"]) for s in summaries] in ([("run0", 1, 1)], [])
    with pytest.raises(TypeError, match=r"columns do not match TcoRow: missing \[\], not in it \['n'\]"):
        fetch_rows(con, "SELECT *, 1 AS n FROM tco", TcoRow)
    table = con.sql("SELECT * EXCLUDE (units) FROM tco").to_arrow_table()
    with pytest.raises(TypeError, match=r"columns do not match TcoRow: missing \['units'\], not in it \[\]"):
        typed_rows(table, TcoRow)


def test_the_collector_is_paused_inside_and_restored_after_even_on_error() -> None:
    import gc

    from tcobench.tasks.store.rows import collection_paused

    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collection_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # paused before: stays paused
    finally:
        gc.enable()
