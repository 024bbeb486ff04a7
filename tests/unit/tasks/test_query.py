"""connect / read_only_query on real Parquet stores in tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tcobench.errors import QueryError
from tcobench.tasks.prices import load_prices
from tcobench.tasks.query import connect, read_only_query, sql_views
from tcobench.tasks.store import write_results

from ..factories import make_prices, make_request, make_run

SHIPPED_VIEWS = [name for name, text in sql_views() if "CREATE OR REPLACE VIEW" in text]
VIEWS = ("runs", "requests", "telemetry", *SHIPPED_VIEWS)


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    store = tmp_path / "store"
    write_results(store, make_run(), [make_request(request_index=i) for i in range(3)])
    connection = connect(store, make_prices())
    yield connection
    connection.close()


def test_shipped_views_are_found_in_order() -> None:
    names = [name for name, _ in sql_views()]
    assert names.index("run_summary") < names.index("tco"), "tco is built on run_summary"
    for _, text in sql_views():
        assert text.startswith("-- "), "every view starts with its header comment"


@pytest.mark.parametrize("view", VIEWS)
def test_views_on_an_empty_store_return_no_rows(tmp_path: Path, view: str) -> None:
    con = connect(tmp_path / "nothing-here", load_prices(None))
    try:
        assert read_only_query(con, f"SELECT * FROM {view}").num_rows == 0
    finally:
        con.close()


def test_price_tables_are_registered_with_their_keys(tmp_path: Path) -> None:
    con = connect(tmp_path, load_prices(None))
    try:
        keys = read_only_query(con, "SELECT key FROM hardware ORDER BY key").column("key").to_pylist()
        assert "cpu-generic-2c" in keys
        as_of = read_only_query(con, "SELECT typeof(as_of) AS t FROM site LIMIT 1").column("t").to_pylist()
        assert as_of == ["DATE"]
    finally:
        con.close()


def test_select_works(con: duckdb.DuckDBPyConnection) -> None:
    table = read_only_query(con, "WITH r AS (SELECT * FROM requests) SELECT count(*) AS n FROM r")
    assert table.column("n").to_pylist() == [3]
    assert read_only_query(con, "SELECT n FROM run_summary").column("n").to_pylist() == [3]
    assert read_only_query(con, "EXPLAIN SELECT * FROM runs").num_rows >= 1
    assert read_only_query(con, "EXPLAIN ANALYZE SELECT * FROM runs").num_rows >= 1


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("delete from requests", "DELETE"),
        ("insert into requests select * from requests", "INSERT"),
        ("update runs set host = 'x'", "UPDATE"),
        ("copy (select * from runs) to 'out.csv'", "COPY"),
        ("create table t as select 1", "CREATE"),
        ("drop view runs", "DROP"),
        ("attach 'other.db' as other", "ATTACH"),
        ("set threads = 1", "SET"),
    ],
)
def test_writes_are_refused_with_a_clear_message(con: duckdb.DuckDBPyConnection, sql: str, kind: str) -> None:
    with pytest.raises(QueryError, match=rf"^refused: {kind} statements are not allowed; tcobench query is read-only"):
        read_only_query(con, sql)


@pytest.mark.parametrize("prefix", ["EXPLAIN ANALYZE", "explain analyse", "EXPLAIN (ANALYZE)", "EXPLAIN"])
def test_explain_of_a_write_is_refused_and_writes_nothing(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, prefix: str
) -> None:
    target = tmp_path / "leak.csv"
    with pytest.raises(QueryError, match=r"^refused: EXPLAIN COPY statements are not allowed"):
        read_only_query(con, f"{prefix} COPY (SELECT 1) TO '{target}'")
    assert not target.exists()


def test_multiple_statements_are_refused(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(QueryError, match=r"^give exactly one SQL statement, got 2$"):
        read_only_query(con, "select 1; delete from requests")
    assert read_only_query(con, "select count(*) AS n from requests").column("n").to_pylist() == [3]


def test_unparsable_sql_is_one_line(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(QueryError) as info:
        read_only_query(con, "selec * fro runs")
    assert str(info.value).startswith("cannot parse SQL: ")
    assert "\n" not in str(info.value)


def test_failing_select_is_one_line(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(QueryError) as info:
        read_only_query(con, "SELECT no_such_column FROM runs")
    assert "\n" not in str(info.value)
    assert "no_such_column" in str(info.value)


def test_requests_of_a_run_without_a_runs_row_are_hidden(tmp_path: Path) -> None:
    store = tmp_path / "store"
    write_results(store, make_run(run_id="kept"), [make_request(run_id="kept")])
    write_results(store, make_run(run_id="orphan"), [make_request(run_id="orphan"), make_request(run_id="orphan")])
    # A writer that died before its commit marker: the run's requests exist, its runs row does not.
    (orphan_run_file,) = (store / "runs").glob("*/*/run-orphan.parquet")
    orphan_run_file.unlink()
    con = connect(store, make_prices())
    try:
        assert read_only_query(con, "SELECT run_id FROM requests").column("run_id").to_pylist() == ["kept"]
        assert read_only_query(con, "SELECT run_id FROM run_summary").column("run_id").to_pylist() == ["kept"]
    finally:
        con.close()


def test_store_path_with_a_quote(tmp_path: Path) -> None:
    store = tmp_path / "o'brien store"
    write_results(store, make_run(), [make_request()])
    con = connect(store, make_prices())
    try:
        assert read_only_query(con, "SELECT count(*) AS n FROM requests").column("n").to_pylist() == [1]
    finally:
        con.close()


def test_partition_columns_come_back_as_text(con: duckdb.DuckDBPyConnection) -> None:
    row = read_only_query(con, "SELECT typeof(date) AS d, typeof(host) AS h, date, host FROM runs").to_pylist()
    assert row == [{"d": "VARCHAR", "h": "VARCHAR", "date": "2023-11-14", "host": "testhost"}]


@pytest.mark.parametrize("view", SHIPPED_VIEWS)
def test_views_work_on_run_files_written_before_a_column_existed(tmp_path: Path, view: str) -> None:
    """A store spans tcobench versions: run files from before `extra_body` and `rocm_version` existed read as NULL."""
    import pyarrow.parquet as pq

    old = make_run(run_id="old0")
    (path,) = [p for p in write_results(tmp_path, old, [make_request(run_id="old0")]) if "/runs/" in str(p)]
    pq.write_table(pq.read_table(path).drop_columns(["extra_body", "rocm_version"]), path)
    new = make_run(run_id="new0", extra_body='{"top_k": 1}')
    write_results(tmp_path, new, [make_request(run_id="new0")])
    con = connect(tmp_path, make_prices())
    try:
        rows = con.sql("SELECT run_id, extra_body, rocm_version FROM runs ORDER BY run_id").fetchall()
        assert rows == [("new0", '{"top_k": 1}', None), ("old0", None, None)]
        con.sql(f"SELECT * FROM {view}").fetchall()  # binds and runs over both files
    finally:
        con.close()
    (newer,) = [p for p in (tmp_path / "runs").rglob("*.parquet") if "new0" in p.name]
    newer.unlink()  # a store holding only files from before the columns
    con = connect(tmp_path, make_prices())
    try:
        assert con.sql("SELECT run_id, extra_body FROM runs").fetchall() == [("old0", None)]
    finally:
        con.close()
