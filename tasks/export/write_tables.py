"""write_tables: the store's tables (``EXPORT_TABLES``) of the selected runs, one Parquet or CSV file each.

Every stored column in raw units (ns, tokens, mJ), as the store holds it: the views' figures are computed from these
rows, so a store that takes them back computes the same figures (tests/unit/tasks/export/test_write_tables.py reads a
Parquet export back and compares it with the store row by row). CSV has no lists: a list column (a request's
``itl_ns``, a run's ``client_wall_ns``) is written as JSON text there.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from tcobench.schemas.export import EXPORT_TABLES, ExportFormat
from tcobench.tasks.store.rows import IDS, arrow_of, id_list

__all__ = ["TABLE_SQL", "table_rows", "write_tables"]

# macro rows_of_runs (tcobench/sql/macros): every column of a table's view, for the runs of $ids; sorted here so an
# export of the same runs is the same file
TABLE_SQL = "SELECT * FROM rows_of_runs($table, ids := " + IDS + ") ORDER BY ALL"


def table_rows(con: duckdb.DuckDBPyConnection, table: str, ids: list[str]) -> pa.Table:
    """The rows of store table ``table`` (a view of the same name) of the runs ``ids``, every column."""
    return arrow_of(con, TABLE_SQL, {"table": table, "ids": id_list(ids)})


def _flat(table: pa.Table) -> pa.Table:
    """``table`` with each list column as JSON text (CSV holds no lists)."""
    for i, field in enumerate(table.schema):
        if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
            texts = [None if v is None else json.dumps(v) for v in table.column(i).to_pylist()]
            table = table.set_column(i, pa.field(field.name, pa.string()), pa.array(texts, pa.string()))
    return table


def write_tables(con: duckdb.DuckDBPyConnection, ids: list[str], fmt: ExportFormat, folder: Path) -> list[Path]:
    """Write ``<table>.parquet`` or ``<table>.csv`` for each of ``EXPORT_TABLES`` into ``folder``; the paths."""
    written = []
    for table in EXPORT_TABLES:
        rows = table_rows(con, table, ids)
        path = folder / f"{table}.{fmt.value}"
        if fmt is ExportFormat.parquet:
            pq.write_table(rows, path)
        else:
            pa_csv.write_csv(_flat(rows), path)
        written.append(path)
    return written
