"""The two locks that keep `tcobench query` (and every reader) from writing to the store.

DuckLake's maintenance functions are table functions, so a SELECT reaches them, and a catalog attached READ_ONLY
does not stop them touching files: ``ducklake_delete_orphaned_files`` deletes every data file the catalog does
not list (a writer's files before its commit among them), and ``ducklake_merge_adjacent_files`` writes merged files
before its commit fails on the read-only catalog. So a reading connection is locked twice:

Design notes: docs/dev/architecture/store.md#tasks-readonly.
"""

from __future__ import annotations

import json
import re
from typing import Any

import duckdb

from tcobench.tasks.store.health import data_files
from tcobench.tasks.store.lake import StoreLocation

__all__ = ["REFUSED_FUNCTIONS", "refused_function", "store_paths"]

# DuckLake 1.4's functions that change the store (duckdb_functions() WHERE function_name LIKE 'ducklake%': the
# others list or read), each also callable as LAKE.<name without the prefix>.
_DUCKLAKE_WRITERS = (
    "ducklake_add_data_files",
    "ducklake_cleanup_old_files",
    "ducklake_delete_orphaned_files",
    "ducklake_expire_snapshots",
    "ducklake_flush_inlined_data",
    "ducklake_merge_adjacent_files",
    "ducklake_rewrite_data_files",
    "ducklake_set_commit_message",
    "ducklake_set_option",
)
# DuckDB's table and scalar functions with a side effect beyond the query's answer, and those that run SQL from a
# string (which a name check could not see into).
_DUCKDB_SIDE_EFFECTS = {
    "checkpoint": "checkpoints a database",
    "force_checkpoint": "checkpoints a database",
    "enable_logging": "changes the logging settings",
    "disable_logging": "changes the logging settings",
    "truncate_duckdb_logs": "deletes logs",
    "write_log": "writes to the log",
    "json_execute_serialized_sql": "runs SQL held in a string",
    "query": "runs SQL held in a string",
    "query_table": "reads tables named in a string",
}
REFUSED_FUNCTIONS: dict[str, str] = {
    **{
        name: "DuckLake maintenance: it writes, expires, merges, rewrites or deletes store files or sets an option"
        for name in _DUCKLAKE_WRITERS
    },
    **{
        name.removeprefix("ducklake_"): "DuckLake maintenance (the catalog's own name for it)"
        for name in _DUCKLAKE_WRITERS
    },
    **_DUCKDB_SIDE_EFFECTS,
}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _function_names(node: Any) -> set[str]:
    """Every ``function_name`` in a serialized parse tree."""
    found: set[str] = set()
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            name = item.get("function_name")
            if isinstance(name, str):
                found.add(name.lower())
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return found


def _called(con: duckdb.DuckDBPyConnection, sql: str) -> set[str]:
    """The functions a SELECT calls, from DuckDB's parse tree; every word of it when it cannot be serialized."""
    try:
        row = con.execute("SELECT json_serialize_sql($sql)", {"sql": sql}).fetchone()
        tree = json.loads(row[0]) if row else {"error": True}
    except (duckdb.Error, ValueError):
        tree = {"error": True}
    if tree.get("error", True):
        return {w.lower() for w in _WORD.findall(sql)}
    return _function_names(tree.get("statements"))


def refused_function(con: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    """``name (why)`` of the first refused function ``sql`` calls (in name order), or None."""
    hits = sorted(_called(con, sql) & set(REFUSED_FUNCTIONS))
    return f"{hits[0]} ({REFUSED_FUNCTIONS[hits[0]]})" if hits else None


def store_paths(con: duckdb.DuckDBPyConnection, location: StoreLocation, snapshot: int | None) -> list[str]:
    """The data and delete files of every table of the attached store at ``snapshot``: all a reader may open."""
    if snapshot is None:
        return []
    paths: list[str] = []
    for f in data_files(con, location.data_path, snapshot):
        paths.append(f.path)
        if f.delete_path is not None:
            paths.append(f.delete_path)
    return paths
