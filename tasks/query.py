"""Open the store in DuckDB: base views over Parquet, price tables, and the .sql views.

Base views (``runs``, ``requests``, ``telemetry``, ``images``) read the Parquet store with hive partitions;
``requests`` and ``telemetry`` only show rows whose run row exists (a run row is written last);
``images`` (image builds and pushes) is not tied to runs.
Price tables (``hardware``, ``site``, ``ops``, ``rental``, ``latency_target``) come from the validated price
table. Every file in ``tcobench/sql`` then defines one view (or one macro: night_means, night_weighted_mean), named
as the file, in file-name order; docs/formulas.md says which file holds which formula.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path
from typing import get_args

import duckdb
import pyarrow as pa
from pydantic import BaseModel

from tcobench.errors import QueryError
from tcobench.schemas import PriceTable, arrow_type

from .store import PARTITION_COLUMNS, TABLES, file_schema, table_glob

__all__ = ["FROZEN_VIEWS", "READ_ONLY_STATEMENTS", "connect", "freeze_views", "read_only_query", "sql_views"]

READ_ONLY_STATEMENTS = frozenset({"SELECT", "EXPLAIN"})
# Per-run views that later views build on, in dependency order (see freeze_views).
FROZEN_VIEWS = ("run_summary", "energy", "tco", "cost_basis", "efficiency")

# EXPLAIN ANALYZE runs its statement (EXPLAIN ANALYZE COPY ... TO writes a file), so the statement
# under an EXPLAIN must itself be a SELECT. This strips "EXPLAIN [ANALYZE] [(options)] [ANALYZE]".
_EXPLAIN_PREFIX = re.compile(r"\s*explain\b\s*(?:analy[sz]e\b\s*)?(?:\([^)]*\)\s*)?(?:analy[sz]e\b\s*)?", re.IGNORECASE)


def _sql_string(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def sql_views() -> list[tuple[str, str]]:
    """(name, SQL text) of every shipped view and macro, in creation order (macros: ``CREATE ... MACRO``)."""
    folder = files("tcobench").joinpath("sql")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".sql"))
    return [(n.split("_", 1)[1].removesuffix(".sql"), folder.joinpath(n).read_text("utf-8")) for n in names]


def _register_empty(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """A zero-row table of today's file schema plus the partition columns; its name."""
    empty = file_schema(table).empty_table()
    for column in PARTITION_COLUMNS:
        empty = empty.append_column(column, pa.array([], pa.string()))
    con.register(f"_empty_{table}", empty)
    return f"_empty_{table}"


def _create_base_view(con: duckdb.DuckDBPyConnection, store: Path, table: str) -> None:
    if any((store / table).glob("*/*/*.parquet")):
        hive_types = ", ".join(f"'{c}': 'VARCHAR'" for c in PARTITION_COLUMNS)
        source = (
            f"read_parquet({_sql_string(table_glob(store, table))}, hive_partitioning = true, "
            f"hive_types = {{{hive_types}}}, union_by_name = true)"
        )
        if table == "runs":
            # Run rows gain provenance columns over versions: today's schema supplies, as NULL, the columns that
            # files written by an older tcobench lack, so every view works on a store spanning versions.
            source = f"(SELECT * FROM {source} UNION ALL BY NAME FROM {_register_empty(con, table)})"
    else:
        source = _register_empty(con, table)
    if table == "runs":
        # Read once per connection: a view over read_parquet re-globs the store and re-reads every footer at
        # each reference, and most views (and the run filter of requests and telemetry) reference runs.
        con.execute(f"CREATE OR REPLACE TEMP TABLE _runs_snapshot AS SELECT * FROM {source}")
        source = "_runs_snapshot"
    keyed_by_run = table != "runs" and "run_id" in TABLES[table].model_fields
    where = " WHERE run_id IN (SELECT run_id FROM runs)" if keyed_by_run else ""
    con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM {source}{where}")


def _price_schema(row_model: type[BaseModel]) -> pa.Schema:
    """Arrow schema of one price section: its key, then the row's fields (as_of as ISO text)."""
    fields = [pa.field("key", pa.string())]
    for name, info in row_model.model_fields.items():
        fields.append(pa.field(name, pa.string() if name == "as_of" else arrow_type(info.annotation)[0]))
    return pa.schema(fields)


def _register_prices(con: duckdb.DuckDBPyConnection, prices: PriceTable) -> None:
    """One table per price section (hardware, site, ops, rental, latency_target), typed even when empty."""
    for name, info in PriceTable.model_fields.items():
        rows: dict[str, BaseModel] = getattr(prices, name)
        row_model = get_args(info.annotation)[1]
        records = [{"key": key, **row.model_dump(mode="json")} for key, row in rows.items()]
        con.register(f"_{name}", pa.Table.from_pylist(records, schema=_price_schema(row_model)))
        dated = "as_of" in row_model.model_fields
        select = "* EXCLUDE (as_of), CAST(as_of AS DATE) AS as_of" if dated else "*"
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT {select} FROM _{name}")
        con.unregister(f"_{name}")


def connect(store: Path, prices: PriceTable, upto: str | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with every view defined over ``store`` (its ``runs`` rows as of now).

    ``upto``: define the views, in file order, only as far as this one (a view depends only on earlier ones):
    a caller that needs the first few does not pay for binding the rest.
    """
    con = duckdb.connect(":memory:")
    try:
        # Every reference to a base view re-binds its Parquet files (union_by_name reads every footer), and
        # the views nest: caching footers for this connection's lifetime halves connect() on real stores.
        con.execute("SET parquet_metadata_cache = true")
        for table in ("runs", *[t for t in TABLES if t != "runs"]):
            _create_base_view(con, store, table)
        _register_prices(con, prices)
    except duckdb.Error as exc:
        con.close()
        raise QueryError(f"cannot open the store {store} in DuckDB: {_one_line(exc)}") from exc
    for name, text in sql_views():
        try:
            con.execute(text)
        except duckdb.Error as exc:
            con.close()
            raise QueryError(f"view {name!r} (tcobench/sql) is broken: {_one_line(exc)}") from exc
        if name == upto:
            break
    return con


def freeze_views(con: duckdb.DuckDBPyConnection, names: tuple[str, ...] = FROZEN_VIEWS) -> None:
    """Compute the named views once into temporary tables and point the views at them.

    DuckDB re-evaluates a view (and every view under it) on each query; a session that asks many questions
    of the same store (compare, history, report) computes the per-run views once instead. Views defined on
    top of them read the frozen rows; the store is not re-read for them until a new connection.
    """
    try:
        for name in names:
            con.execute(f"CREATE OR REPLACE TEMP TABLE _frozen_{name} AS SELECT * FROM {name}")
            con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM _frozen_{name}")
    except duckdb.Error as exc:
        raise QueryError(f"cannot compute view {name!r}: {_one_line(exc)}") from exc


def _statement_kind(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """Type of the one statement in ``sql``; an EXPLAIN counts as EXPLAIN only over a SELECT."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(f"cannot parse SQL: {_one_line(exc)}") from exc
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
    try:
        return con.sql(sql).to_arrow_table()
    except duckdb.Error as exc:
        raise QueryError(str(exc).splitlines()[0]) from exc
