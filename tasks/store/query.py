"""Open the store read-only in a sandboxed DuckDB: base views, cached per-run views, price tables, the .sql views.

``connect`` attaches the store read-only at one snapshot, defines the base views, the cached per-run views, the
price tables and every view of ``tcobench/sql``; bad data files are left out with a warning, and the connection
is then locked to the store (``lake.sandbox``).

Design notes: docs/dev/architecture/store.md#tasks-query.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import get_args

import duckdb
import pyarrow as pa
from pydantic import BaseModel

from tcobench.errors import QueryError, StoreError
from tcobench.schemas import PriceTable, arrow_type
from tcobench.settings import current
from tcobench.tasks.store.checksums import content_damage, known_undecodable
from tcobench.tasks.store.health import Damage, DataFile, damaged_files, data_files, incomplete_runs, readable_rows
from tcobench.tasks.store.lake import (
    LAKE,
    StoreLocation,
    attach_sql,
    check_catalog,
    new_instance,
    one_line,
    sandbox,
    sql_string,
)
from tcobench.tasks.store.readonly import refused_function, store_paths
from tcobench.tasks.store.rows import IDS, id_list
from tcobench.tasks.store.store import (
    TABLES,
    StoreRef,
    cache_schema,
    legacy_layout,
    open_store,
    retry_while_busy,
    table_schema,
)
from tcobench.tasks.store.table_columns import TABLE_COLUMNS
from tcobench.tasks.store.views import CACHED_VIEWS, compute_per_run, define_views, sql_views

__all__ = [
    "FROZEN_VIEWS",
    "READ_ONLY_STATEMENTS",
    "connect",
    "define_needed",
    "describe_snapshot",
    "freeze_views",
    "read_only_query",
    "register_prices",
    "run_count",
    "sql_views",
    "views_named",
]

log = logging.getLogger("tcobench.store")

READ_ONLY_STATEMENTS = frozenset({"SELECT", "EXPLAIN"})
# Per-run views that later views build on, in dependency order (see freeze_views).
FROZEN_VIEWS = ("run_summary", "energy", "tco", "cost_basis", "efficiency")
_BASE_ORDER = ("runs", *[t for t in TABLES if t != "runs"])

# EXPLAIN ANALYZE runs its statement (EXPLAIN ANALYZE COPY ... TO writes a file), so the statement
# under an EXPLAIN must itself be a SELECT. This strips "EXPLAIN [ANALYZE] [(options)] [ANALYZE]".
_EXPLAIN_PREFIX = re.compile(r"\s*explain\b\s*(?:analy[sz]e\b\s*)?(?:\([^)]*\)\s*)?(?:analy[sz]e\b\s*)?", re.IGNORECASE)


def _at(schema: str, table: str, snapshot: int) -> str:
    """A lake table as it was at ``snapshot`` (DuckLake time travel)."""
    return f"{LAKE}.{schema}.{table} AT (VERSION => {int(snapshot)})"


def _columns_at(con: duckdb.DuckDBPyConnection, ref: str) -> list[str] | None:
    """Column names of a table reference, or None when it did not exist then."""
    try:
        return [str(r[0]) for r in con.execute(f"DESCRIBE SELECT * FROM {ref}").fetchall()]
    except duckdb.Error:
        return None


def _null_columns(con: duckdb.DuckDBPyConnection, table: str, have: list[str]) -> str:
    """``, CAST(NULL AS type) AS name`` for each column of today's record the stored table lacks (names from
    ``TABLE_COLUMNS``: a store this version wrote lacks none, and the record models are not defined to learn it)."""
    known = set(have)
    if all(name in known for name in TABLE_COLUMNS[table]):
        return ""
    missing = pa.schema([f for f in table_schema(table) if f.name not in known])
    if not len(missing):
        return ""
    con.register("_tcob_missing", missing.empty_table())
    try:
        kinds = con.execute("DESCRIBE _tcob_missing").fetchall()
    finally:
        con.unregister("_tcob_missing")
    return "".join(f', CAST(NULL AS {kind}) AS "{name}"' for name, kind, *_ in kinds)


def _empty(con: duckdb.DuckDBPyConnection, table: str) -> str:
    con.register(f"_empty_{table}", table_schema(table).empty_table())
    return f"_empty_{table}"


def _many_files(
    con: duckdb.DuckDBPyConnection, snapshot: int, table: str, files: list[DataFile] | None, limit: int = 16
) -> bool:
    """Whether the main table is more than ``limit`` data files at ``snapshot``: counted in ``files`` (every data
    file, listed at that snapshot) or, when they were not listed (None), asked of the catalog; no file is opened."""
    if files is not None:
        return sum(1 for f in files if f.schema == "main" and f.table == table) > limit
    found = con.execute(
        f"SELECT count(*) FROM ducklake_list_files('{LAKE}', ?, snapshot_version => {int(snapshot)})", [table]
    ).fetchone()
    return bool(found and found[0] > limit)


def _base_views(
    con: duckdb.DuckDBPyConnection, snapshot: int | None, damage: list[Damage], files: list[DataFile] | None
) -> None:
    """The base views (``_BASE_ORDER``) at ``snapshot``; ``files``: every data file then (None: not listed, as for
    object storage; damage is found only in listed files)."""
    for table in _BASE_ORDER:
        bad = {d.path for d in damage if d.table == table and d.schema == "main"}
        ref = _at("main", table, snapshot) if snapshot is not None else None
        columns = _columns_at(con, ref) if ref is not None else None
        if ref is None or columns is None:
            select = f"SELECT * FROM {_empty(con, table)}"
        else:
            source = readable_rows(con, "main", table, files or [], bad) if bad else ref
            select = f"SELECT *{_null_columns(con, table, columns)} FROM {source}"
        if table == "runs" and (
            damage or snapshot is None or columns is None or _many_files(con, snapshot, table, files)
        ):
            # Read once into a table: runs whose rows were in damaged files are deleted from it (_leave_out), and
            # an uncompacted store's thousands of small runs files are opened once, not in every view over runs.
            # Otherwise a view: each query reads only the columns it needs (reading every column of a year's runs
            # into a table is slow: docs/dev/performance.md#runs-snapshot-read).
            con.execute(f"CREATE OR REPLACE TABLE _runs_snapshot AS {select}")
            select = "SELECT * FROM _runs_snapshot"
        elif damage and table in ("requests", "telemetry", "commits"):
            select += " WHERE run_id IN (SELECT run_id FROM runs)"
        con.execute(f"CREATE OR REPLACE VIEW {table} AS {select}")


def _leave_out(con: duckdb.DuckDBPyConnection, damage: list[Damage], warn: Callable[[str], None]) -> None:
    """Drop the runs whose rows are not all readable (their counts no longer match their commit)."""
    tables = sorted({d.table for d in damage} & {"requests", "telemetry"})
    for d in damage:
        warn(
            f"store: {d.table} data file {d.path} is damaged ({d.reason}); it is left out "
            "(`tcobench store verify --repair` moves it to quarantine)"
        )
    bad = incomplete_runs(con, tables)
    if bad:
        con.execute(f"DELETE FROM _runs_snapshot WHERE run_id IN (SELECT unnest({IDS}))", {"ids": id_list(bad)})
        shown = ", ".join(b[:12] for b in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        warn(f"store: {len(bad)} run(s) with rows in damaged files are left out: {shown}")


def _covers_exactly(con: duckdb.DuckDBPyConnection, schema: str, snapshot: int | None) -> bool:
    """Whether the cache covers exactly the runs view's runs, once each, when every run is covered: then it holds
    as many covered rows as there are runs. A commit writes a run's cached rows with its covered row and a re-write
    deletes both, so the cached views then hold rows of these runs only, and readers need not filter them (a run
    left out as damaged, or removed, makes the counts differ: filtered as before)."""
    if snapshot is None:
        return False
    found = con.execute(
        f"SELECT (SELECT count(*) FROM runs) = (SELECT count(*) FROM {_at(schema, 'covered', snapshot)})"
    )
    row = found.fetchone()
    return bool(row and row[0])


def _cached_views(con: duckdb.DuckDBPyConnection, snapshot: int | None, usable: bool) -> set[str]:
    """Point the cached per-run views at the stored rows, plus the computed rows of runs the cache lacks."""
    schema = cache_schema()
    has_cache = snapshot is not None and usable and _columns_at(con, _at(schema, "covered", snapshot)) is not None
    if has_cache:
        assert snapshot is not None
        con.execute(
            f"CREATE TABLE _uncovered AS SELECT run_id FROM runs "
            f"WHERE run_id NOT IN (SELECT run_id FROM {_at(schema, 'covered', snapshot)})"
        )
    else:
        con.execute("CREATE TABLE _uncovered AS SELECT run_id FROM runs")
    pending = con.execute("SELECT count(*) FROM _uncovered").fetchone()
    computed: dict[str, pa.Table] = {}
    if pending and pending[0]:
        con.execute("CREATE SCHEMA _pending")
        for table in ("runs", "requests", "telemetry", "images"):
            keyed = " WHERE run_id IN (SELECT run_id FROM _uncovered)" if table != "images" else ""
            con.execute(f"CREATE VIEW _pending.{table} AS SELECT * FROM main.{table}{keyed}")
        computed = compute_per_run(con, "_pending")
    exact = has_cache and not (pending and pending[0]) and _covers_exactly(con, schema, snapshot)
    defined: set[str] = set()
    for view in CACHED_VIEWS:
        parts = []
        if exact:  # no filter needed, a faster owned runs query (docs/dev/performance.md#owned-runs-exact)
            assert snapshot is not None
            parts.append(f"SELECT * FROM {_at(schema, view, snapshot)}")
        elif has_cache:
            assert snapshot is not None
            parts.append(
                f"SELECT * FROM {_at(schema, view, snapshot)} WHERE run_id IN (SELECT run_id FROM runs) "
                "AND run_id NOT IN (SELECT run_id FROM _uncovered)"
            )
        if view in computed:
            con.register(f"_computed_{view}", computed[view])
            con.execute(f"CREATE TABLE _fresh_{view} AS SELECT * FROM _computed_{view}")
            con.unregister(f"_computed_{view}")
            parts.append(f"SELECT * FROM _fresh_{view}")
        if parts:
            con.execute(f"CREATE OR REPLACE VIEW _cached_{view} AS {' UNION ALL BY NAME '.join(parts)}")
            defined.add(view)
    return defined


def _price_schema(row_model: type[BaseModel]) -> pa.Schema:
    """Arrow schema of one price section: its key, then the row's fields (as_of as ISO text)."""
    fields = [pa.field("key", pa.string())]
    for name, info in row_model.model_fields.items():
        fields.append(pa.field(name, pa.string() if name == "as_of" else arrow_type(info.annotation)[0]))
    return pa.schema(fields)


# DuckDB's types of the price sections' Arrow types (_price_schema)
_SQL_TYPES = {"string": "VARCHAR", "int64": "BIGINT", "double": "DOUBLE", "bool": "BOOLEAN"}


def register_prices(con: duckdb.DuckDBPyConnection, prices: PriceTable) -> None:
    """One table per price section (hardware, site, ops, rental, latency_target), typed even when empty.

    The rows arrive as one JSON text per section, typed by the section's schema (``from_json``): not a registered
    Arrow table (DuckDB imports pyarrow.dataset to scan one) nor a parameter per value (DuckDB's Python client
    searches for pandas once per bound value), each of which cost a light command (`tcobench query`) much of its
    start (docs/dev/performance.md#small-store)."""
    for name, info in PriceTable.model_fields.items():
        rows: dict[str, BaseModel] = getattr(prices, name)
        row_model = get_args(info.annotation)[1]
        shape = json.dumps([{f.name: _SQL_TYPES[str(f.type)] for f in _price_schema(row_model)}])
        records = json.dumps([{"key": key, **row.model_dump(mode="json")} for key, row in rows.items()])
        dated = "as_of" in row_model.model_fields
        select = "* EXCLUDE (as_of), CAST(as_of AS DATE) AS as_of" if dated else "*"
        con.execute(
            f"CREATE OR REPLACE TABLE {name} AS SELECT {select} FROM "
            f"(SELECT unnest(from_json(?::JSON, {sql_string(shape)}), recursive := true))",
            [records],
        )


def _attach(con: duckdb.DuckDBPyConnection, location: StoreLocation, snapshot: int | None) -> tuple[int, str]:
    """Attach read-only; (the snapshot to read: ``snapshot`` or the newest, its commit time). A store busy in this
    process (a nightly's other host committing or reading) is waited for (``retry_while_busy``)."""
    which = "ORDER BY snapshot_id DESC LIMIT 1" if snapshot is None else f"WHERE snapshot_id = {int(snapshot)}"
    check_catalog(location)
    try:
        retry_while_busy(lambda: con.execute(attach_sql(location, read_only=True)))
        # the time as text: a TIMESTAMPTZ fetched into Python imports pytz and its zone list
        found = con.execute(f"SELECT snapshot_id, snapshot_time::VARCHAR FROM {LAKE}.snapshots() {which}").fetchone()
    except duckdb.Error as exc:
        check_catalog(location, exc)
        raise StoreError(f"cannot open store {location}: {one_line(exc)}") from exc
    if found is None:
        raise StoreError(f"store {location} has no snapshot {snapshot} (`tcobench store snapshots` lists them)")
    return int(found[0]), str(found[1])


def _open(
    location: StoreLocation, snapshot: int | None, warn: Callable[[str], None], use_cache: bool = True
) -> tuple[duckdb.DuckDBPyConnection, set[str]]:
    """A connection with the base views over the store (empty, typed views when there is none), and the names of
    the cached per-run views it prepared (``_cached_<name>``; none without ``use_cache``)."""
    legacy = legacy_layout(location.root)
    if legacy:
        raise StoreError(
            f"store {location} holds results in the folder layout of tcobench < 0.2 "
            f"({', '.join(legacy)}/); import them: tcobench store migrate {location.root}"
        )
    if not location.exists():
        con = duckdb.connect(
            ":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
        )
        con.execute("SET enable_progress_bar = false")
        con.execute("BEGIN TRANSACTION")  # the set-up's (connect commits it)
        _base_views(con, None, [], [])
        con.execute(
            f"CREATE VIEW store_snapshot AS SELECT NULL::BIGINT AS snapshot_id, NULL::TIMESTAMPTZ AS "
            f"snapshot_time, {sql_string(str(location))} AS store"
        )
        return con, _cached_views(con, None, usable=False)
    con = new_instance(location)
    try:
        snap, when = _attach(con, location, snapshot)
        # the set-up in one transaction, which connect commits: DuckLake reads what it needs of the catalog once per
        # transaction, where a statement of its own (autocommit) read it again for every view bound over a lake
        # table (docs/dev/performance.md#small-store)
        con.execute("BEGIN TRANSACTION")
        con.execute(
            f"CREATE VIEW store_snapshot AS SELECT {snap}::BIGINT AS snapshot_id, "
            f"{sql_string(when)}::TIMESTAMPTZ AS snapshot_time, {sql_string(str(location))} AS store"
        )
        # local data: listed and checked below (object storage: by verify)
        files = data_files(con, location.data_path, snap) if location.data_dir is not None else None
        damage = damaged_files(con, location, snap, files) if files is not None else []
        damage += content_damage(con, location, files or [], {d.path for d in damage})  # same size, other bytes
        damage += known_undecodable(files or [], {d.path for d in damage})
        _base_views(con, snap, damage, files)
        if damage:
            _leave_out(con, damage, warn)
        usable = not any(d.schema == cache_schema() for d in damage)
        cached = _cached_views(con, snap, usable) if use_cache else set()
        stored_tests = _at(cache_schema(), "change_tests", snap)
        if usable and _columns_at(con, stored_tests) is not None:  # tasks.analysis.history's stored tests
            con.execute(f"CREATE VIEW _stored_change_tests AS SELECT * FROM {stored_tests}")
    except duckdb.Error as exc:
        con.close()
        check_catalog(location, exc)
        raise QueryError(f"cannot open the store {location} in DuckDB: {one_line(exc)}") from exc
    except (StoreError, QueryError):
        con.close()
        raise
    return con, cached


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text.lower()))


@cache
def _code_words(text: str) -> frozenset[str]:
    """The words of a shipped view's SQL outside its ``--`` comments (a header names views it does not read)."""
    return frozenset(_words(re.sub(r"--[^\n]*", "", text)))


def views_named(sql: str) -> set[str]:
    """The shipped views and macros whose names appear as words in ``sql`` (what a query needs defined)."""
    return {name for name, _ in sql_views()} & _words(sql)


def _needed(views: list[tuple[str, str]], needs: set[str], cached: set[str]) -> list[tuple[str, str]]:
    """``views`` (file order) less those that neither ``needs`` nor anything it builds on names; a view read from
    the cache builds on nothing."""
    names = {name for name, _ in views}
    uses = {name: frozenset() if name in cached else (_code_words(text) & names) - {name} for name, text in views}
    wanted, todo = set(), list(needs & names)
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo += uses[name]
    return [(name, text) for name, text in views if name in wanted]


def connect(
    store: StoreRef | Path,
    prices: PriceTable,
    *,
    needs: Iterable[str] | None = None,
    snapshot: int | None = None,
    on_warning: Callable[[str], None] | None = None,
    shape_tolerance: float | None = None,
    freeze: Iterable[str] = (),
    freeze_max_runs: int | None = None,
) -> duckdb.DuckDBPyConnection:
    """A read-only, sandboxed DuckDB connection with every view defined over ``store`` at one snapshot.

    ``needs``: define only these views and what they build on (a query's: ``views_named(sql)``). DuckDB binds
    each view when it is created, nested views again inside every view over them (docs/dev/performance.md#view-binding).
    ``snapshot``: read the store as it was at that snapshot (time travel; `tcobench store snapshots` lists them).
    ``on_warning``: called with each warning (damaged files left out); default: the ``tcobench.store`` logger.
    ``shape_tolerance``: how far a run's mean input or output length may be from the asked before view run_shape
    flags it, as a fraction (`tcobench run --shape-tolerance`); default: ``Settings.shape_tolerance``.
    ``freeze``: views computed once, as ``freeze_views`` does, each as soon as it is defined: the views defined over
    it then bind a table, not its whole tree again (docs/dev/performance.md#freeze-as-defined); with
    ``freeze_max_runs``, only when the snapshot holds at most that many runs (computing every run's figures costs more
    than binding saves on a larger store: docs/dev/performance.md#compare-no-freeze).
    """
    if shape_tolerance is None:
        shape_tolerance = current().shape_tolerance
    location = open_store(store).location if not isinstance(store, StoreLocation) else store
    # the cached per-run views are prepared only where a needed view builds on one (`tcobench query "select 1"`:
    # none); without the cache, what needs builds on is a superset of what it builds on with it
    wanted = None if needs is None else set(needs)
    use_cache = wanted is None or bool(set(CACHED_VIEWS) & {n for n, _ in _needed(sql_views(), wanted, set())})
    con, cached = _open(location, snapshot, on_warning or log.warning, use_cache)
    try:
        register_prices(con, prices)
        con.execute("SET VARIABLE shape_tolerance = $t", {"t": float(shape_tolerance)})  # view run_shape
        # view tco_scenarios: the history a platform needs before its downtime term is priced
        con.execute(f"SET VARIABLE downtime_min_nights = {int(current().downtime_min_nights)}")
        views = sql_views()
        if wanted is not None:
            views = _needed(views, wanted, cached)
        if freeze_max_runs is not None and run_count(con) > freeze_max_runs:
            freeze = ()
        _define(con, views, cached, frozenset(freeze))
        con.execute(
            "CREATE TABLE _cached_names AS SELECT unnest(string_split($names, chr(31))) AS name",
            {"names": id_list(sorted(cached))},
        )
        snap = con.execute("SELECT snapshot_id FROM store_snapshot").fetchone()
        con.execute("COMMIT")  # _open's set-up transaction: what follows (compare's thread) sees the views
        sandbox(con, location, store_paths(con, location, snap[0] if snap else None))
    except QueryError:
        con.close()
        raise
    except duckdb.Error as exc:
        con.close()
        raise QueryError(f"cannot prepare the views: {one_line(exc)}") from exc
    return con


_DEFINING = threading.Lock()  # define_needed's


def _define(
    con: duckdb.DuckDBPyConnection,
    views: list[tuple[str, str]],
    cached: set[str],
    freeze: frozenset[str] = frozenset(),
) -> None:
    """Define ``views`` (shipped views and macros, in creation order), the cached ones over their stored rows, and
    note each in table ``_defined_views`` (``define_needed`` reads it); each of ``freeze`` is computed into a
    table as it is defined (``_freeze``'s table, from the view's own query: docs/dev/performance.md#freeze-direct)."""
    for name, text in views:
        if name in cached:  # the stored rows (and the computed rows of runs the cache lacks)
            con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM _cached_{name}")
        elif name in freeze and (table := _as_frozen_table(name, text)) is not None:
            # computed straight from its query: a view defined first would bind that query once more
            define_views(con, [(name, table)])
            con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM _frozen_{name}")
            continue
        else:
            define_views(con, [(name, text)])
        if name in freeze:
            _freeze(con, name)
    con.execute("CREATE TABLE IF NOT EXISTS _defined_views (name VARCHAR)")
    if views:
        con.execute(
            "INSERT INTO _defined_views SELECT unnest(string_split($names, chr(31)))",
            {"names": id_list(name for name, _ in views)},
        )


def _as_frozen_table(name: str, text: str) -> str | None:
    """A shipped view's CREATE statement as the one that computes its rows into ``_frozen_<name>`` (``_freeze``'s
    table); None for a macro."""
    head = f"CREATE OR REPLACE VIEW {name} AS"
    if text.count(head) != 1:
        return None
    return text.replace(head, f"CREATE OR REPLACE TABLE _frozen_{name} AS")


def define_needed(con: duckdb.DuckDBPyConnection, names: Iterable[str]) -> None:
    """Define the shipped views and macros ``names``, and what they build on, that a connection made by ``connect``
    lacks: a query made only on some paths (a side that matches no run, runs with an SLO) defines its macro when it
    is made, not every connection (DuckDB binds a table macro when it is created, as it binds a view:
    docs/dev/performance.md#small-store). A connection not made by ``connect`` is left as it is. One thread at a
    time: two cursors of a connection (compare's frontier thread) creating one macro at once conflict in DuckDB."""
    with _DEFINING:
        try:
            have = {str(n) for (n,) in con.execute("SELECT name FROM _defined_views").fetchall()}
            cached = {str(n) for (n,) in con.execute("SELECT name FROM _cached_names").fetchall()}
        except duckdb.CatalogException:
            return
        missing = set(names) - have
        if missing:
            _define(con, [(n, t) for n, t in _needed(sql_views(), missing, have | cached) if n not in have], cached)


def describe_snapshot(con: duckdb.DuckDBPyConnection) -> str:
    """Which store and snapshot a connection reads, for a report or comparison to state."""
    # the time formatted as text in UTC by DuckDB: a TIMESTAMPTZ fetched into Python imports pytz and its zone list
    row = con.execute(
        "SELECT store, snapshot_id, strftime(timezone('UTC', snapshot_time), '%Y-%m-%d %H:%M:%S UTC') "
        "FROM store_snapshot"
    ).fetchone()
    if row is None or row[1] is None:
        return f"store {row[0] if row else '?'} (empty)"
    return f"store {row[0]} at snapshot {row[1]} (committed {row[2]})"


def freeze_views(con: duckdb.DuckDBPyConnection, names: tuple[str, ...] = FROZEN_VIEWS) -> None:
    """Compute the named views once into tables (``_freeze``) and point the views at them.

    DuckDB re-evaluates a view (and every view under it) on each query; a session that asks many questions
    of the same store (compare, history, report) computes the per-run views once instead. Views defined on
    top of them read the frozen rows. Of ``names``, only those the connection defines are frozen (a connection
    made with ``needs`` defines only what it reads).
    """
    defined = {str(r[0]) for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    for name in (n for n in names if n in defined):
        _freeze(con, name)


def run_count(con: duckdb.DuckDBPyConnection) -> int:
    """How many runs the connection's snapshot holds (view runs)."""
    found = con.execute("SELECT count(*) FROM runs").fetchone()
    return int(found[0]) if found else 0


def _freeze(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """View ``name`` computed into a table of the connection's in-memory database (not a temporary one: the
    connection's cursors, compare's frontier thread, read it too), and the view pointed at it."""
    try:
        con.execute(f"CREATE OR REPLACE TABLE _frozen_{name} AS SELECT * FROM {name}")
        con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM _frozen_{name}")
    except duckdb.Error as exc:
        raise QueryError(f"cannot compute view {name!r}: {one_line(exc)}") from exc


def _statement_kind(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """Type of the one statement in ``sql``; an EXPLAIN counts as EXPLAIN only over a SELECT."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(f"cannot parse SQL: {one_line(exc)}") from exc
    if len(statements) != 1:
        raise QueryError(f"give exactly one SQL statement, got {len(statements)}")
    kind = statements[0].type.name
    if kind != "EXPLAIN":
        return kind
    match = _EXPLAIN_PREFIX.match(sql)
    try:
        inner = con.extract_statements(sql[match.end() :]) if match else []
    except duckdb.Error:
        inner = []
    if len(inner) == 1 and inner[0].type.name == "SELECT":
        return kind
    return f"EXPLAIN {inner[0].type.name}" if len(inner) == 1 else "EXPLAIN of a non-SELECT"


def read_only_query(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    """Run one read-only statement (SELECT, WITH ... SELECT, EXPLAIN of a SELECT); writes are refused."""
    kind = _statement_kind(con, sql)
    if kind not in READ_ONLY_STATEMENTS:
        raise QueryError(
            f"refused: {kind} statements are not allowed; tcobench query is read-only "
            f"(allowed: SELECT, WITH ... SELECT, EXPLAIN [ANALYZE] SELECT)"
        )
    match = _EXPLAIN_PREFIX.match(sql) if kind == "EXPLAIN" else None
    refused = refused_function(con, sql[match.end() :] if match else sql)
    if refused is not None:
        raise QueryError(f"refused: the function {refused}; tcobench query is read-only")
    try:
        return con.sql(sql).to_arrow_table()
    except duckdb.Error as exc:
        raise QueryError(str(exc).splitlines()[0]) from exc
