"""connect / read_only_query on real Parquet stores in tmp_path."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tcobench.errors import QueryError, StoreError
from tcobench.schemas import RunStatus
from tcobench.tasks.analysis.classify_failure import classify_failure
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store import store as store_module
from tcobench.tasks.store.query import (
    FROZEN_VIEWS,
    connect,
    define_needed,
    describe_snapshot,
    freeze_views,
    read_only_query,
    sql_views,
    views_named,
)
from tcobench.tasks.store.store import write_results
from tests.store_helpers import data_files
from tests.unit.factories import make_prices, make_request, make_run

SHIPPED_VIEWS = [name for name, text in sql_views() if "CREATE OR REPLACE VIEW" in text]
VIEWS = ("runs", "requests", "telemetry", *SHIPPED_VIEWS)


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """One run of three requests, connected once: the tests that use it only read it (writes are refused)."""
    store = tmp_path_factory.mktemp("query") / "store"
    write_results(store, make_run(), [make_request(request_index=i) for i in range(3)])
    connection = connect(store, make_prices())
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def empty_con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to a store that does not exist yet, every view defined; read only."""
    connection = connect(tmp_path_factory.mktemp("empty") / "nothing-here", load_prices(None))
    yield connection
    connection.close()


def test_shipped_views_are_found_in_order() -> None:
    names = [name for name, _ in sql_views()]
    assert names.index("run_summary") < names.index("tco"), "tco is built on run_summary"
    for _, text in sql_views():
        assert text.startswith("-- "), "every view starts with its header comment"


@pytest.mark.parametrize("view", VIEWS)
def test_views_on_an_empty_store_return_no_rows(empty_con: duckdb.DuckDBPyConnection, view: str) -> None:
    assert read_only_query(empty_con, f"SELECT * FROM {view}").num_rows == 0


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


def test_files_no_snapshot_references_are_not_read(tmp_path: Path) -> None:
    """A writer killed mid-commit leaves files the catalog never listed: nobody reads them."""
    store = tmp_path / "store"
    write_results(store, make_run(run_id="kept"), [make_request(run_id="kept")])
    (committed,) = data_files(store, "requests")
    stray = Path(committed).with_name("ducklake-left-by-a-killed-writer.parquet")
    shutil.copy(committed, stray)
    (Path(committed).parent / "foreign.txt").write_text("not parquet", encoding="utf-8")
    con = connect(store, make_prices())
    try:
        assert read_only_query(con, "SELECT run_id FROM requests").column("run_id").to_pylist() == ["kept"]
    finally:
        con.close()


def test_a_connection_reads_one_snapshot_and_says_which(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = write_results(tmp_path, make_run(run_id="a"), [make_request(run_id="a")])
    con = connect(tmp_path, make_prices())
    try:  # the write retries while this reader holds the local catalog: give up after 1 s, not the default 120 s
        with monkeypatch.context() as patched:
            patched.setenv("TCOBENCH_STORE_WAIT_S", "1")
            write_results(tmp_path, make_run(run_id="b"), [make_request(run_id="b")])  # after the reader opened
    except StoreError:
        pass  # the local catalog admits one process at a time; this one holds it for reading
    finally:
        con.close()
    second = write_results(tmp_path, make_run(run_id="b"), [make_request(run_id="b")])
    assert second > first
    for snapshot, expected in ((first, ["a"]), (None, ["a", "b"])):
        con = connect(tmp_path, make_prices(), snapshot=snapshot)
        try:
            ids = read_only_query(con, "SELECT run_id FROM run_summary ORDER BY 1").column("run_id").to_pylist()
            assert ids == expected
            row = read_only_query(con, "SELECT snapshot_id, store FROM store_snapshot").to_pylist()
            assert row == [{"snapshot_id": snapshot or second, "store": str(tmp_path)}]
            assert describe_snapshot(con).startswith(f"store {tmp_path} at snapshot {snapshot or second} (committed ")
        finally:
            con.close()
    with pytest.raises(StoreError, match=r"snapshot 999"):
        connect(tmp_path, make_prices(), snapshot=999)


@pytest.mark.parametrize(
    ("sql", "refusal"),
    [
        ("SELECT * FROM read_text('/etc/passwd')", r'Cannot access file "/etc/passwd"'),
        ("SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')", r'Cannot access file "http://127.0.0.1:9/x.csv"'),
        ("SELECT * FROM read_parquet('/tmp/*.parquet')", r"Cannot access file"),
        ("SELECT current_setting('enable_external_access') AND false", None),
        ("SELECT * FROM duckdb_secrets(redact := false)", r"unredacted secrets is disabled"),
    ],
)
def test_the_query_connection_cannot_leave_the_store(
    con: duckdb.DuckDBPyConnection, sql: str, refusal: str | None
) -> None:
    if refusal is None:
        assert read_only_query(con, sql).to_pylist() == [{read_only_query(con, sql).column_names[0]: False}]
        return
    with pytest.raises(QueryError, match=refusal) as info:
        read_only_query(con, sql)
    assert "\n" not in str(info.value)


def test_the_sandbox_settings_are_locked(con: duckdb.DuckDBPyConnection) -> None:
    for statement in (
        "SET enable_external_access = true",
        "SET autoinstall_known_extensions = true",
        "SET lock_configuration = false",
        "SET allowed_directories = ['/']",
    ):
        with pytest.raises(duckdb.Error, match="locked|Cannot change"):
            con.execute(statement)
    for statement in ("INSTALL httpfs", "LOAD httpfs", "ATTACH '/tmp/other.duckdb' AS o"):
        with pytest.raises(duckdb.Error):
            con.execute(statement)


def test_a_damaged_file_leaves_out_its_runs_and_nothing_else(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    for run_id in ("a", "b"):
        write_results(
            tmp_path, make_run(run_id=run_id), [make_request(run_id=run_id, request_index=i) for i in range(3)]
        )
    (bad,) = [f for f in data_files(tmp_path, "requests") if _holds(f, "a")]
    Path(bad).write_bytes(b"")
    with caplog.at_level("WARNING", logger="tcobench.store"):
        con = connect(tmp_path, make_prices())
    try:
        assert read_only_query(con, "SELECT run_id, n FROM run_summary").to_pylist() == [{"run_id": "b", "n": 3}]
        assert read_only_query(con, "SELECT count(*) AS n FROM requests").to_pylist() == [{"n": 3}]
        assert read_only_query(con, "SELECT 1 AS one").to_pylist() == [{"one": 1}]
    finally:
        con.close()
    warnings = [r.getMessage() for r in caplog.records]
    assert any(bad in w and "0 bytes, the catalog recorded" in w for w in warnings), warnings
    assert any("1 run(s) with rows in damaged files are left out: a" in w for w in warnings), warnings


def _holds(path: str, run_id: str) -> bool:
    import pyarrow.parquet as pq

    return run_id in pq.read_table(path, columns=["run_id"]).column("run_id").to_pylist()


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


@pytest.fixture(scope="module")
def before_a_column(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]]:
    """Two stores whose tables predate `extra_body` and `rocm_version` (as an older tcobench created them), the
    second written to since by a newer tcobench; a connection to each, read only."""
    old, newer = tmp_path_factory.mktemp("old-columns"), tmp_path_factory.mktemp("old-columns-then-new")
    for store in (old, newer):
        write_results(store, make_run(run_id="old0"), [make_request(run_id="old0")])
        _drop_columns(store, "runs", ["extra_body", "rocm_version"])  # as an older tcobench created the table
    store_module.open_store(newer)._tables_ready = False  # a newer tcobench's first write
    write_results(newer, make_run(run_id="new0", extra_body='{"top_k": 1}'), [make_request(run_id="new0")])
    cons = connect(old, make_prices()), connect(newer, make_prices())
    yield cons
    for con in cons:
        con.close()


@pytest.mark.parametrize("view", SHIPPED_VIEWS)
def test_views_work_on_runs_written_before_a_column_existed(
    before_a_column: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection], view: str
) -> None:
    """A store spans tcobench versions: a store whose tables predate `extra_body` and `rocm_version` reads them as
    NULL, and once a newer tcobench writes, the older rows read NULL there."""
    old, newer = before_a_column
    assert old.sql("SELECT run_id, extra_body, rocm_version FROM runs").fetchall() == [("old0", None, None)]
    old.sql(f"SELECT * FROM {view}").fetchall()
    rows = newer.sql("SELECT run_id, extra_body, rocm_version FROM runs ORDER BY run_id").fetchall()
    assert rows == [("new0", '{"top_k": 1}', None), ("old0", None, None)]
    newer.sql(f"SELECT * FROM {view}").fetchall()  # binds and runs over both


def test_a_store_from_before_failure_classes_reads_them_as_null(tmp_path: Path) -> None:
    """Runs stored before `failure_class` and `failure_rule` existed read NULL there; the next write adds the columns
    (tasks/store/store.py `_ensure_tables`) and its runs keep their class."""
    write_results(tmp_path, make_run(run_id="old0", status=RunStatus.failed, error="boom"), [])
    _drop_columns(tmp_path, "runs", ["failure_class", "failure_rule"])  # as an older tcobench created the table
    con = connect(tmp_path, make_prices())
    try:
        assert con.sql("SELECT run_id, failure_class, failure_rule FROM runs").fetchall() == [("old0", None, None)]
        con.sql("SELECT * FROM availability").fetchall()  # the view that reads the class binds without it
    finally:
        con.close()
    store_module.open_store(tmp_path)._tables_ready = False  # a newer tcobench's first write
    new = make_run(run_id="new0", status=RunStatus.failed, error="llama-server was killed by SIGSEGV; log x")
    write_results(tmp_path, classify_failure(new), [])
    con = connect(tmp_path, make_prices())
    try:
        rows = con.sql("SELECT run_id, failure_class, failure_rule FROM runs ORDER BY run_id").fetchall()
        assert rows == [("new0", "platform", "engine-crashed"), ("old0", None, None)]
    finally:
        con.close()


def test_a_store_from_before_time_scale_reads_it_as_null(tmp_path: Path) -> None:
    """Replays stored before `time_scale` existed read NULL there, and macro replay_sets (`tcobench plan`) leaves
    them out rather than failing to bind; the next write adds the column and its replay is listed."""
    write_results(tmp_path, make_run(run_id="old0", load_mode="replay", prompt_set_hash="h-old"), [])
    _drop_columns(tmp_path, "runs", ["time_scale"])  # as an older tcobench created the table
    con = connect(tmp_path, make_prices())
    try:
        assert con.sql("SELECT run_id, time_scale FROM runs").fetchall() == [("old0", None)]
        define_needed(con, ["replay_sets"])
        assert con.sql("SELECT * FROM replay_sets()").fetchall() == []
    finally:
        con.close()
    store_module.open_store(tmp_path)._tables_ready = False  # a newer tcobench's first write
    new = make_run(run_id="new0", load_mode="replay", prompt_set_hash="h-new", seed=7, time_scale=0.5)
    write_results(tmp_path, new, [])
    con = connect(tmp_path, make_prices())
    try:
        rows = con.sql("SELECT run_id, time_scale FROM runs ORDER BY run_id").fetchall()
        assert rows == [("new0", 0.5), ("old0", None)]
        define_needed(con, ["replay_sets"])
        assert con.sql("SELECT * FROM replay_sets()").fetchall() == [("h-new", 7)]
    finally:
        con.close()


def _drop_columns(store: Path, table: str, columns: list[str]) -> None:
    from tcobench.tasks.store.lake import attach_sql, new_instance, parse_store

    location = parse_store(store)
    con = new_instance(location)
    try:
        con.execute(attach_sql(location, read_only=False))
        for column in columns:
            con.execute(f"ALTER TABLE lake.{table} DROP COLUMN {column}")
    finally:
        con.close()


def test_a_connection_for_some_views_defines_them_and_what_they_build_on(tmp_path: Path) -> None:
    prices = make_prices()
    for view in SHIPPED_VIEWS:  # every view from its SQL (no store: no per-run rows stored), alone
        sql = f"SELECT * FROM {view.upper()} ORDER BY ALL"  # as a user may write it
        assert views_named(sql) == {view}
        some = connect(tmp_path / "empty", prices, needs=views_named(sql))
        try:
            assert read_only_query(some, sql).num_rows == 0
            defined = {r[0] for r in some.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        finally:
            some.close()
        assert view in defined and (view == "record_card" or "record_card" not in defined), defined
        if view in ("tco", "nightly_trend"):  # tco_scenarios' header names the views over it; they are not needed
            assert not defined & {"sensitivity", "platform_cost", "efficiency", "cost_basis"}, defined
    store = tmp_path / "store"
    write_results(store, make_run(), [make_request(request_index=i) for i in range(3)])
    full = connect(store, prices)
    try:
        for view in ("tco", "nightly_trend", "goodput"):  # over the stored per-run rows: the same rows as with all
            sql = f"SELECT * FROM {view} ORDER BY ALL"
            some = connect(store, prices, needs=views_named(sql))
            try:
                assert read_only_query(some, sql) == read_only_query(full, sql), view
            finally:
                some.close()
    finally:
        full.close()


def test_views_frozen_as_defined_read_the_same_rows_as_frozen_after(tmp_path: Path) -> None:
    """connect's ``freeze``: each named view is a table from its definition on, which the connection's cursors read
    too, and every view (those over it too) reads the rows it reads when freeze_views runs after connect; with
    ``freeze_max_runs`` under the runs stored, nothing is frozen."""
    store = tmp_path / "store"
    write_results(store, make_run(), [make_request(request_index=i) for i in range(3)])
    write_results(store, make_run(run_id="r2"), [make_request(run_id="r2", request_index=i) for i in range(3)])
    prices = make_prices()
    after = connect(store, prices)
    freeze_views(after)
    early = connect(store, prices, freeze=FROZEN_VIEWS, freeze_max_runs=2)
    larger = connect(store, prices, freeze=FROZEN_VIEWS, freeze_max_runs=1)
    try:
        for con, frozen in ((early, {f"_frozen_{name}" for name in FROZEN_VIEWS}), (larger, set())):
            with contextlib.closing(con.cursor()) as cursor:
                tables = {str(r[0]) for r in cursor.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
            assert {t for t in tables if t.startswith("_frozen_")} == frozen
        for view in ("run_summary", "tco", "cost_basis", "efficiency", "sensitivity", "nightly_trend", "goodput"):
            sql = f"SELECT * FROM {view} ORDER BY ALL"
            assert read_only_query(early, sql) == read_only_query(after, sql) == read_only_query(larger, sql), view
            assert read_only_query(after, sql).num_rows > 0, view
    finally:
        for con in (early, larger, after):
            con.close()


def test_the_cached_views_are_prepared_only_when_a_needed_view_builds_on_one(tmp_path: Path) -> None:
    store = tmp_path / "store"
    write_results(store, make_run(), [make_request(request_index=i) for i in range(3)])
    for needs, prepared in (((), False), (("runs",), False), (("tco",), True), (None, True)):
        con = connect(store, make_prices(), needs=needs)
        try:
            tables = {str(r[0]) for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
            assert ("_uncovered" in tables) is prepared, needs
            assert read_only_query(con, "SELECT count(*) AS n FROM runs").to_pylist() == [{"n": 1}]
        finally:
            con.close()


def test_a_macro_needed_later_is_defined_then_with_what_it_builds_on(tmp_path: Path) -> None:
    """define_needed on a connection made for some views: the macro asked for and the views it reads that the
    connection lacks, over the stored per-run rows (the same rows as a connection with every view); nothing when
    all is defined; a connection not made by connect is left as it is."""
    store = tmp_path / "store"
    write_results(store, make_run(), [make_request(request_index=i) for i in range(3)])
    prices = make_prices()
    sql = "SELECT * FROM side_goodput('owned', ['x'])"

    def views(con: duckdb.DuckDBPyConnection) -> set[str]:
        return {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}

    full, some = connect(store, prices), connect(store, prices, needs=("cost_basis",))
    try:
        assert "goodput" not in views(some)
        with pytest.raises(duckdb.CatalogException):
            some.execute(sql)
        define_needed(some, ["side_goodput"])
        assert {"goodput", "slo_targets", "request_metrics"} <= views(some)
        assert some.execute(sql).fetchall() == full.execute(sql).fetchall()
        assert (
            some.execute("SELECT * FROM goodput ORDER BY ALL").fetchall()
            == full.execute("SELECT * FROM goodput ORDER BY ALL").fetchall()
        )
        before = views(some)
        define_needed(some, ["side_goodput", "goodput", "cost_basis"])  # all there: nothing defined again
        assert views(some) == before
    finally:
        full.close()
        some.close()
    bare = duckdb.connect()
    define_needed(bare, ["side_goodput"])  # not made by connect: nothing done, no error
    assert not views(bare)
    bare.close()


def _cached_sql(con: duckdb.DuckDBPyConnection) -> str:
    found = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = '_cached_run_summary'").fetchone()
    assert found is not None
    return str(found[0])


def test_cached_views_are_read_unfiltered_only_when_they_cover_exactly_the_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every run covered once: the cached rows are read as stored (no semi-join against runs); a run without
    cached rows (written by an older tcobench) or a run left out as damaged: filtered; the rows are the same."""
    for run_id in ("a", "b"):
        write_results(
            tmp_path, make_run(run_id=run_id), [make_request(run_id=run_id, request_index=i) for i in range(3)]
        )
    sql = "SELECT run_id, n, output_tok_s FROM run_summary ORDER BY run_id"
    con = connect(tmp_path, make_prices())
    try:
        assert "WHERE" not in _cached_sql(con).upper()
        exact = con.execute(sql).fetchall()
    finally:
        con.close()
    monkeypatch.setattr("tcobench.tasks.store.query._covers_exactly", lambda *a: False)
    con = connect(tmp_path, make_prices())
    try:
        assert "WHERE" in _cached_sql(con).upper()
        assert con.execute(sql).fetchall() == exact and len(exact) == 2
    finally:
        con.close()
    monkeypatch.undo()
    monkeypatch.setattr(store_module, "per_run_views", lambda tables, con=None: None)
    write_results(tmp_path, make_run(run_id="c"), [make_request(run_id="c", request_index=i) for i in range(3)])
    monkeypatch.undo()
    con = connect(tmp_path, make_prices())
    try:
        assert "WHERE" in _cached_sql(con).upper()  # c is computed by the reader, a and b read from the cache
        assert [r[0] for r in con.execute(sql).fetchall()] == ["a", "b", "c"]
    finally:
        con.close()
