"""Open the store in DuckDB: base views over Parquet, price tables, and the .sql views.

Base views (``runs``, ``requests``, ``telemetry``) read the Parquet store with hive partitions;
``requests`` and ``telemetry`` only show rows whose run row exists (a run row is written last).
Price tables (``hardware``, ``site``, ``ops``) come from the validated price table. Every file in
``tcobench/sql`` then defines one view, in file-name order.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

import duckdb
import pyarrow as pa

from tcobench.errors import QueryError
from tcobench.schemas import PriceTable

from .store import PARTITION_COLUMNS, TABLES, file_schema, table_glob

__all__ = ["READ_ONLY_STATEMENTS", "connect", "read_only_query", "sql_views"]

READ_ONLY_STATEMENTS = frozenset({"SELECT", "EXPLAIN"})

# EXPLAIN ANALYZE runs its statement (EXPLAIN ANALYZE COPY ... TO writes a file), so the statement
# under an EXPLAIN must itself be a SELECT. This strips "EXPLAIN [ANALYZE] [(options)] [ANALYZE]".
_EXPLAIN_PREFIX = re.compile(r"\s*explain\b\s*(?:analy[sz]e\b\s*)?(?:\([^)]*\)\s*)?(?:analy[sz]e\b\s*)?", re.IGNORECASE)


def _sql_string(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def sql_views() -> list[tuple[str, str]]:
    """(view name, SQL text) of every shipped view, in creation order."""
    folder = files("tcobench").joinpath("sql")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".sql"))
    return [(n.split("_", 1)[1].removesuffix(".sql"), folder.joinpath(n).read_text("utf-8")) for n in names]


def _create_base_view(con: duckdb.DuckDBPyConnection, store: Path, table: str) -> None:
    if any((store / table).glob("*/*/*.parquet")):
        hive_types = ", ".join(f"'{c}': 'VARCHAR'" for c in PARTITION_COLUMNS)
        source = (
            f"read_parquet({_sql_string(table_glob(store, table))}, hive_partitioning = true, "
            f"hive_types = {{{hive_types}}}, union_by_name = true)"
        )
    else:
        empty = file_schema(table).empty_table()
        for column in PARTITION_COLUMNS:
            empty = empty.append_column(column, pa.array([], pa.string()))
        con.register(f"_empty_{table}", empty)
        source = f"_empty_{table}"
    where = "" if table == "runs" else " WHERE run_id IN (SELECT run_id FROM runs)"
    con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM {source}{where}")


def _register_prices(con: duckdb.DuckDBPyConnection, prices: PriceTable) -> None:
    for name, rows in (("hardware", prices.hardware), ("site", prices.site), ("ops", prices.ops)):
        records = [{"key": key, **row.model_dump(mode="json")} for key, row in rows.items()]
        con.register(f"_{name}", pa.Table.from_pylist(records))
        con.execute(
            f"CREATE OR REPLACE TABLE {name} AS SELECT * EXCLUDE (as_of), CAST(as_of AS DATE) AS as_of FROM _{name}"
        )
        con.unregister(f"_{name}")


def connect(store: Path, prices: PriceTable) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with every view defined over ``store``."""
    con = duckdb.connect(":memory:")
    try:
        for table in ("runs", *[t for t in TABLES if t != "runs"]):
            _create_base_view(con, store, table)
        _register_prices(con, prices)
    except duckdb.Error as exc:
        con.close()
        raise QueryError(f"cannot open the store {store} in DuckDB: {_one_line(exc)}") from exc
    for name, text in sql_views():
        try:
            con.execute(text)
            con.execute(f"SELECT * FROM {name} LIMIT 0")  # fail here, naming the view, if it is broken
        except duckdb.Error as exc:
            con.close()
            raise QueryError(f"view {name!r} (tcobench/sql) is broken: {_one_line(exc)}") from exc
    return con


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
