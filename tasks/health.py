"""check_files: which of a store's data files cannot be read, and which runs lost rows to them.

A quick check (``damaged_files``) runs on every read of a store with local data: each data and delete file the
catalog lists must exist, have the size the catalog recorded and carry Parquet's magic bytes at both ends. That
finds a missing, empty, truncated or foreign file in milliseconds without reading it; damage that keeps the size
is found by `tcobench store verify`, which decodes every file (``read_fully``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from .lake import LAKE, StoreLocation, sql_string

__all__ = ["Damage", "DataFile", "damaged_files", "data_files", "file_problem", "incomplete_runs", "readable_rows"]

_MAGIC = b"PAR1"


@dataclass(frozen=True)
class DataFile:
    schema: str
    table: str
    path: str
    size: int
    delete_path: str | None
    delete_size: int | None


@dataclass(frozen=True)
class Damage:
    """A data file of ``table`` that cannot be read, and why."""

    schema: str
    table: str
    path: str
    reason: str


def data_files(con: duckdb.DuckDBPyConnection, snapshot: int | None = None) -> list[DataFile]:
    """Every data file of every table of the attached store at ``snapshot`` (default: the attached one)."""
    tables = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? ORDER BY ALL", [LAKE]
    ).fetchall()
    found = []
    at = f", snapshot_version => {int(snapshot)}" if snapshot is not None else ""
    for schema, table in tables:
        rows = con.execute(
            f"SELECT data_file, data_file_size_bytes, delete_file, delete_file_size_bytes "
            f"FROM ducklake_list_files('{LAKE}', ?, schema => ?{at})",
            [table, schema],
        ).fetchall()
        found += [DataFile(schema, table, str(r[0]), int(r[1]), r[2], r[3]) for r in rows]
    return found


def file_problem(path: str, size: int | None) -> str | None:
    """Why a local Parquet file cannot be read as the catalog recorded it, or None when it looks whole."""
    try:
        actual = Path(path).stat().st_size
        if size is not None and actual != size:
            return f"{actual} bytes, the catalog recorded {size}"
        if actual < 12:
            return f"{actual} bytes, too small to be Parquet"
        with Path(path).open("rb") as handle:
            head = handle.read(4)
            handle.seek(-4, 2)
            tail = handle.read(4)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if head != _MAGIC or tail != _MAGIC:
        return "not a Parquet file (no PAR1 magic)"
    return None


def damaged_files(
    con: duckdb.DuckDBPyConnection, location: StoreLocation, snapshot: int | None, files: list[DataFile] | None = None
) -> list[Damage]:
    """Data files of local stores that are missing, truncated or not Parquet (S3 data is checked by verify)."""
    if location.data_dir is None:
        return []
    damage = []
    for f in files if files is not None else data_files(con, snapshot):
        why = file_problem(f.path, f.size)
        if why is None and f.delete_path is not None:
            bad_delete = file_problem(f.delete_path, f.delete_size)
            why = f"its delete file {f.delete_path} is damaged: {bad_delete}" if bad_delete else None
        if why is not None:
            damage.append(Damage(f.schema, f.table, f.path, why))
    return damage


def incomplete_runs(con: duckdb.DuckDBPyConnection, tables: list[str]) -> list[str]:
    """Runs whose rows in ``tables`` (views ``requests``/``telemetry``) no longer add up to their commit's counts."""
    bad: set[str] = set()
    for table in tables:
        rows = con.execute(
            f"SELECT c.run_id FROM commits AS c LEFT JOIN (SELECT run_id, count(*) AS n FROM {table} GROUP BY run_id) "
            f"AS t USING (run_id) WHERE c.{table} <> coalesce(t.n, 0)"
        ).fetchall()
        bad |= {r[0] for r in rows}
    return sorted(bad)


def readable_rows(con: duckdb.DuckDBPyConnection, schema: str, table: str, files: list[DataFile], bad: set[str]) -> str:
    """SQL reading a lake table's rows from its readable files only (DuckLake's scan would open every file):
    its data files less ``bad``, less the rows their delete files delete, with the table's columns."""
    shape = f"_shape_{schema}_{table}"
    columns = con.execute(f"DESCRIBE {LAKE}.{schema}.{table}").fetchall()
    body = ", ".join(f'"{name}" {kind}' for name, kind, *_ in columns)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {shape} ({body})")
    good = [f for f in files if f.schema == schema and f.table == table and f.path not in bad]
    if not good:
        return f"(SELECT * FROM {shape})"
    paths = ", ".join(sql_string(f.path) for f in good)
    rows = f"read_parquet([{paths}], union_by_name = true, filename = true, file_row_number = true)"
    deletes = [f.delete_path for f in good if f.delete_path]
    if deletes:
        listed = ", ".join(sql_string(p) for p in deletes)
        rows = (f"(SELECT s.* FROM {rows} AS s ANTI JOIN read_parquet([{listed}]) AS d "
                "ON d.file_path = s.filename AND d.pos = s.file_row_number)")  # fmt: skip
    names = ", ".join(f'"{name}"' for name, *_ in columns)
    return f"(SELECT {names} FROM {shape} UNION ALL BY NAME SELECT * EXCLUDE (filename, file_row_number) FROM {rows})"
