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

from tcobench.tasks.store.lake import LAKE, StoreLocation, sql_string

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


# A file's path is relative to its table's, a table's to its schema's, a schema's to the data path, where
# path_is_relative says so (https://ducklake.select/docs/stable/duckdb/usage/paths); entries live from their
# begin_snapshot to before their end_snapshot (NULL: still live).
_LIVE = "{a}.begin_snapshot <= $snap AND ({a}.end_snapshot IS NULL OR {a}.end_snapshot > $snap)"
_FILES_SQL = f"""
SELECT s.schema_name, t.table_name,
       CASE WHEN f.path_is_relative THEN {{tpath}} || f.path ELSE f.path END AS data_file, f.file_size_bytes,
       CASE WHEN d.path_is_relative THEN {{tpath}} || d.path ELSE d.path END AS delete_file, d.file_size_bytes
FROM {{meta}}.ducklake_data_file AS f
JOIN {{meta}}.ducklake_table AS t ON t.table_id = f.table_id AND {_LIVE.format(a="t")}
JOIN {{meta}}.ducklake_schema AS s ON s.schema_id = t.schema_id AND {_LIVE.format(a="s")}
LEFT JOIN {{meta}}.ducklake_delete_file AS d ON d.data_file_id = f.data_file_id AND {_LIVE.format(a="d")}
WHERE {_LIVE.format(a="f")}
ORDER BY s.schema_name, t.table_name, data_file
"""
_TABLE_PATH = (
    "CASE WHEN t.path_is_relative THEN (CASE WHEN s.path_is_relative THEN $root || s.path ELSE s.path END) "
    "|| t.path ELSE t.path END"
)


def data_files(con: duckdb.DuckDBPyConnection, data_path: str, snapshot: int | None = None) -> list[DataFile]:
    """Every data file of every table of the attached store at ``snapshot`` (default: the newest), with its delete file,
    read from the catalog's tables in one query (what ``ducklake_list_files`` lists table by table, slower:
    docs/dev/performance.md#catalog-file-list; a test checks they agree). ``data_path``: the store's, as attached (a
    moved store folder's catalog records its old one)."""
    meta = f"__ducklake_metadata_{LAKE}"
    if snapshot is None:
        found = con.execute(f"SELECT max(snapshot_id) FROM {LAKE}.snapshots()").fetchone()
        snapshot = int(found[0]) if found and found[0] is not None else 0
    root = data_path if data_path.endswith("/") else data_path + "/"
    sql = _FILES_SQL.format(meta=meta, tpath=_TABLE_PATH)
    rows = con.execute(sql, {"snap": int(snapshot), "root": root}).fetchall()
    return [DataFile(str(r[0]), str(r[1]), str(r[2]), int(r[3]), r[4], r[5]) for r in rows]


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
    for f in files if files is not None else data_files(con, location.data_path, snapshot):
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
        rows = (
            f"(SELECT s.* FROM {rows} AS s ANTI JOIN read_parquet([{listed}]) AS d "
            "ON d.file_path = s.filename AND d.pos = s.file_row_number)"
        )
    names = ", ".join(f'"{name}"' for name, *_ in columns)
    return f"(SELECT {names} FROM {shape} UNION ALL BY NAME SELECT * EXCLUDE (filename, file_row_number) FROM {rows})"
