"""write_results: the one place that writes results into the store (a DuckLake: SQL catalog + Parquet files).

Tables (columns derived from the pydantic records, ``schemas.arrow``; a field added to a record becomes a column
on the next write, and rows written before read it as NULL):

Design notes: docs/dev/architecture/store.md#tasks-store.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import queue
import random
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, TypeVar

import duckdb
import pyarrow as pa
from pydantic import BaseModel

import tcobench
from tcobench.errors import QueryError, StoreError
from tcobench.settings import current
from tcobench.tasks.store.checksums import record_new
from tcobench.tasks.store.lake import (
    LAKE,
    StoreLocation,
    attach_sql,
    check_catalog,
    new_instance,
    one_line,
    parse_store,
    sql_string,
)
from tcobench.tasks.store.outage import outage_limit_s, ride_out, unreachable
from tcobench.tasks.store.views import CACHE_PARTITIONED, CACHED_VIEWS, compute_per_run, define_per_run, view_key

if TYPE_CHECKING:
    from tcobench.schemas import (
        EngineMetricRecord,
        ImageRecord,
        RequestRecord,
        RunRecord,
        TelemetryRecord,
        TraceStatsRecord,
    )

__all__ = [
    "LEGACY_TABLES",
    "PARTITIONED",
    "RUN_TABLES",
    "TABLES",
    "RunRows",
    "Store",
    "StoreRef",
    "WriterPreparation",
    "cache_schema",
    "check_exists",
    "check_store",
    "commit_tables",
    "conform",
    "retry_while_busy",
    "legacy_layout",
    "open_store",
    "per_run_views",
    "replace_cached",
    "table_columns_module",
    "table_schema",
    "to_arrow",
    "views_connection",
    "write_cache",
    "write_image_record",
    "write_results",
    "write_runs",
    "write_trace_stats",
]


class _Tables(MutableMapping[str, type[BaseModel]]):
    """Stored table -> its record model (a name of ``tcobench.schemas``). The table names need no import; the record
    models are imported on the first read of a model, so a command that only reads the store (history, compare,
    query) never defines them."""

    def __init__(self, names: Mapping[str, str]) -> None:
        self._names = dict(names)
        self._models: dict[str, type[BaseModel]] | None = None

    def _loaded(self) -> dict[str, type[BaseModel]]:
        if self._models is None:
            import tcobench.schemas

            self._models = {table: getattr(tcobench.schemas, name) for table, name in self._names.items()}
        return self._models

    def __getitem__(self, table: str) -> type[BaseModel]:
        return self._loaded()[table]

    def __setitem__(self, table: str, model: type[BaseModel]) -> None:
        self._loaded()[table] = model

    def __delitem__(self, table: str) -> None:
        del self._loaded()[table]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names if self._models is None else self._models)

    def __len__(self) -> int:
        return len(self._names if self._models is None else self._models)


TABLES: MutableMapping[str, type[BaseModel]] = _Tables(
    {
        "runs": "RunRecord",
        "requests": "RequestRecord",
        "telemetry": "TelemetryRecord",
        # the engine's own metrics, scraped beside telemetry (tasks.host.engine_metrics)
        "engine_metrics": "EngineMetricRecord",
        "images": "ImageRecord",
        "commits": "CommitRecord",
        # traffic profiles of trace files (`tcobench trace stats`), keyed by stats_id: no run's rows
        "trace_stats": "TraceStatsRecord",
    }
)
RUN_TABLES = ("runs", "requests", "telemetry", "engine_metrics", "commits")  # keyed by run_id: a run's rows in each
PARTITIONED = {"requests": "date", "telemetry": "date", "engine_metrics": "date"}
LEGACY_TABLES = ("runs", "requests", "telemetry", "images")  # folders of the pre-DuckLake layout
_MIN_FREE_BYTES = 100 * 2**20
_TRANSIENT = (
    "conflict",
    "database is locked",
    "lock on file",
    "file handle conflict",
    "serializ",
    "deadlock",
    "could not obtain lock",
    "busy",
)
_PARTIAL_FILE = re.compile(r'Could not write file "([^"]+)"')
T = TypeVar("T")
_REMEMBERED_RUNS = 64  # runs whose committed per-run view rows a Store keeps (Store.committed)
# check_store's probe commit is skipped when this process committed to the store this recently (s): a nightly's
# cells check the store one after another, and the probe was a real commit each time (docs/dev/performance.md)
CHECK_FRESH_S = 60.0
_process_lock = threading.RLock()  # one transaction at a time per process (one writer instance, one alias)
_instances_lock = threading.Lock()  # Store._instance: one DuckDB instance per set of extensions, made once


def table_schema(table: str) -> pa.Schema:
    """Arrow schema of a stored table, from its record model."""
    return _schema_of(TABLES[table])


def table_columns_module() -> str:
    """The source of tasks/store/table_columns.py: each stored table's column names, from its record model (a reader
    finds the columns an older store lacks without defining the record models)."""
    out = [
        '"""table_columns: each stored table\'s column names, in its record model\'s order (store.TABLES).',
        "",
        "Generated by ``python -m tcobench.schemas.columns`` from the record models (tasks.store.store.TABLES): edit",
        'those, not this file (tests/unit/tasks/store/test_store.py checks that it is current)."""',
        "",
        "from __future__ import annotations",
        "",
        '__all__ = ["TABLE_COLUMNS"]',
        "",
        "TABLE_COLUMNS: dict[str, tuple[str, ...]] = {",
    ]
    for table in TABLES:
        out.append(f'    "{table}": (')
        out += [f'        "{name}",' for name in table_schema(table).names]
        out.append("    ),")
    out.append("}")
    return "\n".join(out) + "\n"


@cache
def _schema_of(model: type[BaseModel]) -> pa.Schema:
    from tcobench.schemas import arrow_schema

    return arrow_schema(model)


def cache_schema(key: str | None = None) -> str:
    """Name of the lake schema holding the cached per-run views of ``key`` (default: this version's SQL)."""
    return f"cache_{key or view_key()}"


def to_arrow(table: str, records: Sequence[BaseModel]) -> pa.Table:
    rows = [r.model_dump(mode="json") for r in records]
    return pa.Table.from_pylist(rows, schema=table_schema(table))


def legacy_layout(root: Path | None) -> list[str]:
    """Folders of the pre-DuckLake layout (STORE/<table>/date=.../*.parquet) under a local store root."""
    if root is None:
        return []
    return [t for t in LEGACY_TABLES if (root / t).is_dir() and any((root / t).glob("date=*/*/*.parquet"))]


@dataclass(frozen=True)
class RunRows:
    """One run's rows, as written in one commit."""

    run: RunRecord
    requests: Sequence[RequestRecord] = ()
    telemetry: Sequence[TelemetryRecord] = ()
    engine_metrics: Sequence[EngineMetricRecord] = ()


class Store:
    """A store opened for writing: its location and this process's DuckDB instance for it."""

    _instances: dict[tuple[str, ...], duckdb.DuckDBPyConnection] = {}

    def __init__(self, location: StoreLocation) -> None:
        self.location = location
        self._tables_ready = False
        self._committed: dict[str, dict[str, pa.Table]] = {}  # run id -> its cached views' rows, as committed here
        self._committed_lock = threading.Lock()
        self.last_commit_s: float | None = None  # time.monotonic() when this process last committed here
        # connections of ``views_connection`` made ahead (WriterPreparation), each for one commit's cached views
        self.prepared_views: queue.SimpleQueue[duckdb.DuckDBPyConnection] = queue.SimpleQueue()

    def remember(self, run_ids: Sequence[str], rows: Mapping[str, pa.Table] | None) -> None:
        """Keep the cached views' rows that this process just committed for these runs (the last few runs only);
        None forgets them (a commit that stored no cached rows for them)."""
        import pyarrow.compute as pc  # here, not at the top: a reader never needs it

        own = (
            {r: {view: t.filter(pc.equal(t.column("run_id"), r)) for view, t in rows.items()} for r in run_ids}
            if rows is not None
            else {}
        )
        with self._committed_lock:
            for run_id in run_ids:
                self._committed.pop(run_id, None)
                if run_id in own:
                    self._committed[run_id] = own[run_id]
            while len(self._committed) > _REMEMBERED_RUNS:
                self._committed.pop(next(iter(self._committed)))

    def committed(self, view: str, run_ids: Sequence[str]) -> pa.Table | None:
        """The rows of cached view ``view`` that this process committed for these runs (in this order), or None when
        it did not commit them all here."""
        with self._committed_lock:
            found = [self._committed.get(run_id, {}).get(view) for run_id in run_ids]
        if not found or any(t is None for t in found):
            return None
        return pa.concat_tables([t for t in found if t is not None])

    def __str__(self) -> str:
        return str(self.location)

    def _instance(self) -> duckdb.DuckDBPyConnection:
        """One instance per set of extensions and process (loading an extension checks its signature:
        docs/dev/performance.md#extension-signature)."""
        key = self.location.extensions + ((self.location.uri,) if self.location.remote_data else ())
        with _instances_lock:  # a WriterPreparation may be making it in its thread
            con = self._instances.get(key)
            if con is None:
                con = self._instances[key] = new_instance(self.location)
        return con

    @contextlib.contextmanager
    def _attached(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The store attached read-write as ``lake`` for one transaction, detached after (releasing file locks)."""
        con = self._instance()
        self._prepare_folders()
        check_catalog(self.location)  # never attached read-write: SQLite would take an emptied file for a new one
        con.execute(attach_sql(self.location, read_only=False))
        try:
            yield con
        finally:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            with contextlib.suppress(duckdb.Error):
                con.execute(f"DETACH {LAKE}")

    def _prepare_folders(self) -> None:
        legacy = legacy_layout(self.location.root)
        if legacy:
            raise StoreError(
                f"store {self.location} holds results in the folder layout of tcobench < 0.2 ({', '.join(legacy)}/); "
                f"import them first: tcobench store migrate {self.location.root}"
            )
        for folder in (self.location.root, self.location.data_dir):
            if folder is not None:
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StoreError(f"cannot create store folder {folder}: {exc.strerror or exc}") from exc

    def commit(
        self, body: Callable[[duckdb.DuckDBPyConnection], None] | None, what: str, checksums: bool = True
    ) -> int:
        """Run ``body`` in one transaction (retried while locked or in conflict); the snapshot it committed.

        With no body, only attach and bring the tables up to date (a check that the store is usable).
        ``checksums``: record the new files' checksums now (False: the next commit does, as after a failed record).
        """
        snapshot = self._retried(lambda: self._commit_once(body, what, checksums), what)
        self.last_commit_s = time.monotonic()
        return snapshot

    def run(self, body: Callable[[duckdb.DuckDBPyConnection], T], what: str) -> T:
        """Run ``body`` on the attached store in autocommit mode (maintenance calls that make their own
        transactions, reads); retried while locked or in conflict."""

        def once() -> T:
            with self._attached() as con:
                self._ready(con)
                return body(con)

        return self._retried(once, what)

    def _retried(self, attempt_once: Callable[[], T], what: str) -> T:
        deadline = time.monotonic() + current().store_wait_s

        def once() -> T:
            try:
                return attempt_once()
            except duckdb.Error as exc:
                self._remove_partial(one_line(exc))
                raise

        with _process_lock, self._writers_in_turn(deadline, what):
            try:  # a catalog or object store that cannot be reached is waited for (tasks.store.outage), then busy ones
                return ride_out(lambda: retry_while_busy(once), what)
            except duckdb.Error as exc:
                check_catalog(self.location, exc)
                why = (
                    f" (unreachable for TCOBENCH_STORE_OUTAGE_S, {outage_limit_s():g} s)"
                    if unreachable(one_line(exc))
                    else ""
                )
                raise StoreError(f"cannot write {what} to store {self.location}{why}: {one_line(exc)}") from exc

    @contextlib.contextmanager
    def _writers_in_turn(self, deadline: float, what: str) -> Iterator[None]:
        """Writers of a store with a local catalog file take turns (an exclusive lock on ``ROOT/catalog.lock``).

        Without it, concurrent writers race: each writes its data files, all but one then fail at COMMIT on the
        catalog's lock and redo the whole transaction; with 8 writers on 2 cores most of the work was thrown away
        (docs/dev/performance.md#writers-in-turn). A PostgreSQL catalog
        has no local file to lock: its writers rely on DuckLake's conflict checks and the retries below.
        """
        root = self.location.root
        if root is None:
            yield
            return
        import fcntl

        self._prepare_folders()
        try:
            lock = (root / "catalog.lock").open("a")
        except OSError:  # a store folder this user may only read: nothing to write, no turn to take
            yield
            return
        with lock:
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise StoreError(
                            f"cannot write {what} to store {self.location}: another writer held it for longer "
                            f"than TCOBENCH_STORE_WAIT_S ({current().store_wait_s:g} s)"
                        ) from None
                    time.sleep(0.02)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _ready(self, con: duckdb.DuckDBPyConnection, again: bool = False) -> None:
        if not self._tables_ready or again:
            _ensure_tables(con)
            self._tables_ready = True

    def _commit_once(
        self, body: Callable[[duckdb.DuckDBPyConnection], None] | None, what: str, checksums: bool = True
    ) -> int:
        with self._attached() as con:
            self._ready(con, again=body is None)
            if body is None:
                return 0
            con.execute("BEGIN")
            con.execute(f"CALL {LAKE}.set_commit_message('tcobench', {sql_string(what)})")
            body(con)
            con.execute("COMMIT")
            if checksums:
                with contextlib.suppress(duckdb.Error, OSError):  # a file left unrecorded: the next commit records it
                    record_new(con, self.location)
            row = con.execute(f"SELECT id FROM {LAKE}.current_snapshot()").fetchone()
            return int(row[0]) if row else 0

    def _remove_partial(self, message: str) -> None:
        """Remove the file a failed write left half-written (the rest of the transaction is rolled back)."""
        found = _PARTIAL_FILE.search(message)
        data = self.location.data_dir
        if found and data is not None:
            path = Path(found.group(1))
            if path.is_relative_to(data):
                path.unlink(missing_ok=True)


StoreRef: TypeAlias = Store | StoreLocation | str | Path


def _transient(message: str) -> bool:
    lowered = message.lower()
    if "failed to initialize ducklake" in lowered and ("already exists" in lowered or "duplicate key" in lowered):
        return True  # two writers created a new catalog at once: the loser finds it there on the next attempt
    return any(t in lowered for t in _TRANSIENT) and "no space left" not in lowered


def retry_while_busy(attempt_once: Callable[[], T], deadline: float | None = None) -> T:
    """``attempt_once()``, called again while it fails because the store is busy (a lock, a conflict, the catalog
    file attached by another connection of this process: DuckDB lets one process open a file only once at a time),
    until ``deadline`` (time.monotonic(); default TCOBENCH_STORE_WAIT_S seconds from now); then (or on any other
    error) its duckdb.Error propagates."""
    if deadline is None:
        deadline = time.monotonic() + current().store_wait_s
    attempt = 0
    while True:
        attempt += 1
        try:
            return attempt_once()
        except duckdb.Error as exc:
            if not _transient(one_line(exc)) or time.monotonic() > deadline:
                raise
        time.sleep(min(2.0, 0.05 * 1.5**attempt) * (0.5 + random.random()))


_stores: dict[str, Store] = {}


def open_store(store: StoreRef) -> Store:
    """The store at a URI or path (parsed and cached per process); nothing is created until the first write."""
    if isinstance(store, Store):
        return store
    location = store if isinstance(store, StoreLocation) else parse_store(store)
    found = _stores.get(location.uri)
    if found is None:
        found = _stores[location.uri] = Store(location)
    return found


def _declared_columns(con: duckdb.DuckDBPyConnection, schema: pa.Schema) -> list[tuple[str, str]]:
    """(name, DuckDB type) of an Arrow schema, as DuckDB maps it."""
    con.register("_tcob_empty", schema.empty_table())
    try:
        return [(str(r[0]), str(r[1])) for r in con.execute("DESCRIBE _tcob_empty").fetchall()]
    finally:
        con.unregister("_tcob_empty")


def _existing_columns(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    rows = con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = ? AND schema_name = 'main'",
        [LAKE],
    ).fetchall()
    found: dict[str, set[str]] = {}
    for table, column in rows:
        found.setdefault(table, set()).add(column)
    return found


def _ensure_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create missing tables (with their partitioning) and add columns the records gained; its own transaction."""
    con.execute("BEGIN")
    existing = _existing_columns(con)
    for table in TABLES:
        columns = _declared_columns(con, table_schema(table))
        if table not in existing:
            body = ", ".join(f'"{name}" {kind}' for name, kind in columns)
            con.execute(f"CREATE TABLE IF NOT EXISTS {LAKE}.{table} ({body})")
            if table in PARTITIONED:
                con.execute(f"ALTER TABLE {LAKE}.{table} SET PARTITIONED BY ({PARTITIONED[table]})")
            continue
        for name, kind in columns:
            if name not in existing[table]:
                con.execute(f'ALTER TABLE {LAKE}.{table} ADD COLUMN IF NOT EXISTS "{name}" {kind}')
    con.execute("COMMIT")


def _insert(con: duckdb.DuckDBPyConnection, target: str, rows: pa.Table) -> None:
    if rows.num_rows == 0:
        return
    con.register("_tcob_rows", rows)
    try:
        con.execute(f"INSERT INTO {target} BY NAME SELECT * FROM _tcob_rows")
    finally:
        con.unregister("_tcob_rows")


def _cache_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every cached-view table of every key (``cache_<key>.<view>``) in the lake."""
    rows = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name LIKE 'cache_%'",
        [LAKE],
    ).fetchall()
    return [f"{LAKE}.{schema}.{table}" for schema, table in rows]


def _delete_runs(con: duckdb.DuckDBPyConnection, ids: pa.Table) -> None:
    """Remove every row of the runs in ``ids`` (a table with a run_id column) that is already stored."""
    con.register("_tcob_ids", ids)
    try:
        found = con.execute(f"SELECT count(*) FROM {LAKE}.runs WHERE run_id IN (SELECT run_id FROM _tcob_ids)")
        if (found.fetchone() or (0,))[0] == 0:
            return  # the usual case: new runs; no delete, so no conflict with concurrent writers
        for target in [f"{LAKE}.{t}" for t in RUN_TABLES] + _cache_tables(con):
            con.execute(f"DELETE FROM {target} WHERE run_id IN (SELECT run_id FROM _tcob_ids)")
    finally:
        con.unregister("_tcob_ids")


def views_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory connection for ``per_run_views``: the cached views defined in schema ``one`` over base views of
    registered tables, empty until it registers a commit's rows."""
    con = duckdb.connect(":memory:")
    try:
        con.execute("CREATE SCHEMA one")
        for name in ("runs", "requests", "telemetry", "images"):
            con.register(f"_{name}", table_schema(name).empty_table())
            con.execute(f"CREATE VIEW one.{name} AS SELECT * FROM _{name}")
        define_per_run(con, "one")
    except BaseException:
        con.close()
        raise
    return con


def per_run_views(
    tables: Mapping[str, pa.Table], con: duckdb.DuckDBPyConnection | None = None
) -> dict[str, pa.Table] | None:
    """The cached views' rows of the runs in ``tables`` (runs, requests, telemetry rows of those runs only),
    computed by the shipped SQL (None when those views cannot be computed this way); on ``con``, a
    ``views_connection`` made ahead, when given (closed after)."""
    try:
        con = con or views_connection()
        for name, data in tables.items():
            con.register(f"_{name}", data)
        return compute_per_run(con, "one", defined=True)
    except (QueryError, duckdb.Error):
        return None  # a view that cannot be cached this way is computed by readers instead
    finally:
        if con is not None:
            con.close()


def write_cache(con: duckdb.DuckDBPyConnection, rows: dict[str, pa.Table], ids: pa.Table) -> None:
    schema = f"{LAKE}.{cache_schema()}"
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    con.execute(f"CREATE TABLE IF NOT EXISTS {schema}.covered (run_id VARCHAR)")
    existing = {
        name
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = ?", [LAKE, cache_schema()]
        ).fetchall()
    }
    for view in CACHED_VIEWS:
        if view not in existing:
            con.register("_tcob_view", rows[view])
            try:
                con.execute(f"CREATE TABLE IF NOT EXISTS {schema}.{view} AS SELECT * FROM _tcob_view LIMIT 0")
            finally:
                con.unregister("_tcob_view")
            if view in CACHE_PARTITIONED:
                con.execute(f"ALTER TABLE {schema}.{view} SET PARTITIONED BY ({CACHE_PARTITIONED[view]})")
        _insert(con, f"{schema}.{view}", rows[view])
    _insert(con, f"{schema}.covered", ids)


def replace_cached(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    """In this version's cache schema, table ``table`` (created from ``rows``' schema if new) gets ``rows`` in
    place of the rows it held for their runs (inside the caller's transaction)."""
    target = f"{LAKE}.{cache_schema()}.{table}"
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {LAKE}.{cache_schema()}")
    con.register("_tcob_rows", rows)
    try:
        con.execute(f"CREATE TABLE IF NOT EXISTS {target} AS SELECT * FROM _tcob_rows LIMIT 0")
        con.execute(f"DELETE FROM {target} WHERE run_id IN (SELECT DISTINCT run_id FROM _tcob_rows)")
    finally:
        con.unregister("_tcob_rows")
    _insert(con, target, rows)


def conform(table: str, data: pa.Table) -> pa.Table:
    """``data`` with every column of today's ``table`` schema (missing ones NULL, known ones cast to their type);
    columns today's schema does not know are kept (a store never drops a value it was given)."""
    schema = table_schema(table)
    columns, names = [], []
    for field in schema:
        if field.name in data.column_names:
            column = data.column(field.name)
            columns.append(column if column.type == field.type else column.cast(field.type))
        else:
            columns.append(pa.nulls(data.num_rows, field.type))
        names.append(field.name)
    for name in data.column_names:
        if name not in names:
            columns.append(data.column(name))
            names.append(name)
    return pa.Table.from_arrays(columns, names=names)


def _commit_rows(tables: Mapping[str, pa.Table], writer: str) -> pa.Table:
    """One commits row per run in ``tables["runs"]``: the rows of each table written for it."""
    import pyarrow.compute as pc

    from tcobench.schemas import CommitRecord

    runs = tables["runs"]
    counts = {}
    for table in ("requests", "telemetry", "engine_metrics"):
        found = pc.value_counts(tables[table].column("run_id")) if tables[table].num_rows else pa.array([])
        counts[table] = {str(v["values"]): int(v["counts"]) for v in found.to_pylist()}
    now = int(dt.datetime.now(dt.UTC).timestamp() * 1e9)
    rows = [
        CommitRecord(
            run_id=r["run_id"],
            date=r["date"],
            host=r["host"],
            requests=counts["requests"].get(r["run_id"], 0),
            telemetry=counts["telemetry"].get(r["run_id"], 0),
            engine_metrics=counts["engine_metrics"].get(r["run_id"], 0),
            committed_ns=now,
            writer=writer,
            tool_version=tcobench.__version__,
        )
        for r in runs.select(["run_id", "date", "host"]).to_pylist()
    ]
    return to_arrow("commits", rows)


def _add_columns(con: duckdb.DuckDBPyConnection, data: Mapping[str, pa.Table]) -> None:
    """Columns the given rows carry that the stored table lacks (a newer record, an older store's extra field)."""
    existing = _existing_columns(con)
    for table, rows in data.items():
        extra = [f for f in rows.schema if f.name not in existing.get(table, set())]
        for name, kind in _declared_columns(con, pa.schema(extra)) if extra else []:
            con.execute(f'ALTER TABLE {LAKE}.{table} ADD COLUMN IF NOT EXISTS "{name}" {kind}')


def commit_tables(store: StoreRef, tables: Mapping[str, pa.Table], writer: str = "run", exiting: bool = False) -> int:
    """Commit the rows of whole runs (``runs`` plus their ``requests`` and ``telemetry``) in one transaction,
    replacing any rows of the same run ids, with their commits rows and cached views; the snapshot id.

    ``exiting``: this process ends after this commit (a signal stopped it): the new files' checksums are left to the
    next commit."""
    target = open_store(store)
    data = {
        t: conform(t, tables.get(t, table_schema(t).empty_table()))
        for t in ("runs", "requests", "telemetry", "engine_metrics")
    }
    if data["runs"].num_rows == 0:
        raise StoreError("nothing to write: no run given")
    _check_dates(data)
    data["commits"] = _commit_rows(data, writer)
    _check_room(target.location, sum(t.nbytes for t in data.values()))
    ids = data["runs"].select(["run_id"])
    try:
        prepared: duckdb.DuckDBPyConnection | None = target.prepared_views.get_nowait()
    except queue.Empty:
        prepared = None
    with ThreadPoolExecutor(1, thread_name_prefix="tcobench-views") as pool:  # computed while the rows are inserted
        computing = pool.submit(per_run_views, {t: data[t] for t in ("runs", "requests", "telemetry")}, prepared)

        def body(con: duckdb.DuckDBPyConnection) -> None:
            data["commits"] = _commit_rows(data, writer)  # prepared by the attempt that commits (an outage retries)
            _delete_runs(con, ids)
            _add_columns(con, data)
            for table, rows in data.items():
                _insert(con, f"{LAKE}.{table}", rows)
            cached = computing.result()
            if cached is not None:
                write_cache(con, cached, ids)

        first = data["runs"].column("run_id")[0].as_py()
        what = f"run {first}" if data["runs"].num_rows == 1 else f"{data['runs'].num_rows} runs ({writer})"
        snapshot = target.commit(body, what, checksums=not exiting)
        cached = computing.result()
    target.remember(ids.column("run_id").to_pylist(), cached if data["runs"].num_rows <= _REMEMBERED_RUNS else None)
    return snapshot


def _check_dates(data: Mapping[str, pa.Table]) -> None:
    """Every request, telemetry and engine-metric row carries its run's date (the partition key): readers and
    compaction find a run's rows by its date range, so a row under another date would be silently missed."""
    dates = dict(zip(data["runs"].column("run_id").to_pylist(), data["runs"].column("date").to_pylist(), strict=True))
    for table in PARTITIONED:
        pairs = data[table].select(["run_id", "date"]).group_by(["run_id", "date"]).aggregate([]).to_pylist()
        for pair in pairs:
            if pair["run_id"] in dates and pair["date"] != dates[pair["run_id"]]:
                raise StoreError(
                    f"{table} of run {pair['run_id']}: date {pair['date']!r} is not the run's date "
                    f"{dates[pair['run_id']]!r}; nothing was written"
                )


def write_runs(store: StoreRef, batch: Sequence[RunRows], writer: str = "run", exiting: bool = False) -> int:
    """Commit several runs' rows in one transaction (replacing any rows of the same run ids); the snapshot id.
    ``exiting``: as for ``commit_tables``."""
    tables = {
        "runs": to_arrow("runs", [b.run for b in batch]),
        "requests": to_arrow("requests", [r for b in batch for r in b.requests]),
        "telemetry": to_arrow("telemetry", [t for b in batch for t in b.telemetry]),
        "engine_metrics": to_arrow("engine_metrics", [m for b in batch for m in b.engine_metrics]),
    }
    return commit_tables(store, tables, writer, exiting)


class WriterPreparation:
    """What this process's next commit to a store would do first, done ahead in a thread of its own (nothing is
    written until ``stopping``): import the Arrow modules a commit uses (``pyarrow.acero`` for ``_check_dates``'
    group_by, ``pyarrow.compute`` for ``Store.remember``) and make the store's DuckDB instance (its extensions
    loaded); once ``stopping`` is called, create the store and its tables if this process has not (a new store), and
    make the connection its cached views are computed on (``views_connection``, left in ``Store.prepared_views``).

    The benchmark flow makes one once its engine is launched and calls ``stopping`` on a signal (a ``shutdown``
    listener), when a run will be written: that work is done during the grace period, while the requests in flight
    finish, instead of after it, when the user waits for the exit. On a loaded machine every CPU-second of that exit
    stretches (docs/dev/performance.md#signals-under-load)."""

    def __init__(self, store: StoreRef) -> None:
        self.target = open_store(store)
        # what to do next, from a listener: SimpleQueue.put takes no lock that the interrupted thread may hold (it is
        # reentrant), as a signal handler must not (docs/dev/architecture/load.md#tasks-shutdown)
        self._next: queue.SimpleQueue[bool] = queue.SimpleQueue()
        threading.Thread(target=self._prepare, name="tcobench-store-prepare", daemon=True).start()

    def _prepare(self) -> None:
        import pyarrow.acero  # noqa: F401 - imported for the commit
        import pyarrow.compute  # noqa: F401

        with contextlib.suppress(Exception):  # the commit meets it again and reports it
            self.target._instance()  # noqa: SLF001 - the instance the commit will use
        if not self._next.get():
            return
        with contextlib.suppress(Exception):  # the commit meets it again and reports it
            if not self.target._tables_ready:  # noqa: SLF001
                self.target.commit(None, "tables")
            self.target.prepared_views.put(views_connection())

    def stopping(self, *_: object) -> None:
        """Make the store's tables and the views connection now, in the thread (a ``shutdown`` listener)."""
        self._next.put(True)

    def close(self) -> None:
        """Nothing more to prepare: the thread ends (once what it does is done)."""
        self._next.put(False)


def write_results(
    store: StoreRef,
    run: RunRecord,
    requests: Sequence[RequestRecord],
    telemetry: Sequence[TelemetryRecord] = (),
    engine_metrics: Sequence[EngineMetricRecord] = (),
    exiting: bool = False,
) -> int:
    """Commit one run's rows atomically; re-writing a run id replaces its rows. Returns the snapshot id.
    ``exiting``: as for ``commit_tables``."""
    return write_runs(store, [RunRows(run, requests, telemetry, engine_metrics)], exiting=exiting)


def _replace_row(
    store: StoreRef, table: str, key: str, record: ImageRecord | TraceStatsRecord, what: str, failure: str
) -> int:
    """Commit one row of ``table`` (one of its pydantic records); the row with the same ``key`` value is replaced.
    ``what`` names the commit; a failure is a StoreError starting with ``failure``."""
    target = open_store(store)
    rows = to_arrow(table, [record])

    def body(con: duckdb.DuckDBPyConnection) -> None:
        con.execute(f"DELETE FROM {LAKE}.{table} WHERE {key} = ?", [getattr(record, key)])
        _insert(con, f"{LAKE}.{table}", rows)

    try:
        return target.commit(body, what)
    except StoreError as exc:
        raise StoreError(f"{failure}: {exc}") from exc


def write_image_record(store: StoreRef, record: ImageRecord) -> int:
    """Commit one ``images`` row (a build, unchanged check or push); the same event id replaces its row."""
    return _replace_row(
        store,
        "images",
        "event_id",
        record,
        f"image {record.event_id}",
        f"cannot write image row {record.event_id} ({record.reference})",
    )


def write_trace_stats(store: StoreRef, record: TraceStatsRecord) -> int:
    """Commit one ``trace_stats`` row (a trace's traffic profile); the same stats id replaces its row."""
    return _replace_row(
        store,
        "trace_stats",
        "stats_id",
        record,
        f"trace stats {record.stats_id}",
        f"cannot write the trace profile of {record.path}",
    )


def _free_bytes(location: StoreLocation) -> int | None:
    folder = location.data_dir or location.root
    while folder is not None and not folder.exists():
        folder = folder.parent
    return shutil.disk_usage(folder).free if folder is not None else None


def _check_room(location: StoreLocation, need: int) -> None:
    """Refuse a write that cannot fit on a local disk, before any file is written."""
    free = _free_bytes(location)
    if free is not None and free < need + 2**20:
        raise StoreError(
            f"store {location} has {free / 2**20:.1f} MiB free; this write needs about "
            f"{need / 2**20:.1f} MiB (no space left on device)"
        )


def _nearest_existing(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def check_exists(store: StoreRef, source: str) -> Store:
    """The store a read command names, when it is there; StoreError when its local folder does not exist, naming
    ``source`` (where the name came from: ``--store``, ``TCOBENCH_STORE``, the default), so that a read never answers
    "nothing is stored" about a path that is not there. A folder without a catalog yet reads as an empty store."""
    target = open_store(store)
    root = target.location.root
    if root is not None and not root.exists():
        raise StoreError(
            f"store {target.location} does not exist ({source}): name the store your runs were stored in "
            f"(--store PATH or TCOBENCH_STORE), or measure into this one first: tcobench run --store {target.location}"
        )
    return target


def check_store(store: StoreRef, min_free_bytes: int | None = None) -> Store:
    """Validate a store before measuring: a usable location, writable, free space above a floor, tables there.

    ``min_free_bytes`` defaults to ``TCOBENCH_STORE_MIN_FREE_MB`` (100 MiB) for local data. The last check, a
    probe commit (reachable, credentials accepted, tables up to date), is skipped when this process committed to
    the store in the last ``CHECK_FRESH_S`` seconds: that commit proved the same. A local store that does not exist
    yet is not created here: its nearest existing folder must be writable, and the first commit creates it, so a
    command that fails before measuring leaves no empty store behind.
    """
    target = open_store(store)
    location = target.location
    floor = min_free_bytes if min_free_bytes is not None else int(current().store_min_free_mb * 2**20)
    for folder in (location.root, location.data_dir):
        if folder is None:
            continue
        if folder.exists() and not folder.is_dir():
            raise StoreError(f"store {location}: {folder} is a file, not a folder")
    legacy = legacy_layout(location.root)
    if legacy:
        target._prepare_folders()  # noqa: SLF001 - raises the same error every write would
    for folder in (location.root, location.data_dir):
        if folder is not None:
            there = _nearest_existing(folder)
            if not there.is_dir():
                raise StoreError(f"store {location}: {there} is a file, not a folder")
            if not os.access(there, os.W_OK | os.X_OK):
                raise StoreError(f"store {location}: {there} is not writable by this user")
    free = _free_bytes(location)
    if free is not None and free < floor:
        raise StoreError(
            f"store {location}: only {free / 2**20:.0f} MiB free, below the floor of "
            f"{floor / 2**20:.0f} MiB (TCOBENCH_STORE_MIN_FREE_MB)"
        )
    fresh = target.last_commit_s is not None and time.monotonic() - target.last_commit_s < CHECK_FRESH_S
    if not fresh and location.exists():
        target.commit(None, "check")  # reachable, credentials accepted, tables created or up to date
    return target
