"""The shipped SQL views (tcobench/sql, one per file) and the per-run ones the store caches at commit time.

``run_summary``, ``run_statistics`` and ``energy`` are functions of one run's rows (its runs row, requests and
telemetry), and they are what every run-level view (tco, cost_basis, nightly_trend, ...), the report's latency
distributions and compare's bootstrap read. Recomputing them means a scan of every
request and sample in the store, so ``tasks.store.store`` computes them once, when a run commits, with the very same
SQL files run over that run's rows, and stores the rows next to the run. A reader uses the stored rows when they
were computed by the SQL it ships (``view_key``: a hash of the view files' code, comment lines left out, up to the
last cached one) and computes the rest (``compute_per_run``). A change to those SQL files' code therefore never
serves stale numbers: it only makes readers compute until ``tcobench store compact`` has stored the rows of the new
SQL; a change to their comments alone keeps the stored rows.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from importlib.resources import files

import duckdb
import pyarrow as pa

from tcobench.errors import QueryError
from tcobench.schemas.layers import LAYERS

__all__ = [
    "CACHED_VIEWS",
    "CACHE_PARTITIONED",
    "LAYERS",
    "compute_per_run",
    "define_per_run",
    "define_views",
    "sql_reads",
    "sql_views",
    "view_key",
]

CACHED_VIEWS = ("run_summary", "run_statistics", "energy", "frontier_requests")
# cached views stored partitioned (a file per value and commit, merged per value by compaction): a reader of a few
# dates' runs opens the files whose date statistics overlap them only (a month's file: a file per night would add
# a year's worth of files that every connection lists and checks)
CACHE_PARTITIONED = {"frontier_requests": "month"}
_CACHE_FORMAT = "tcobench-view-cache-2"  # 2: the key hashes the views' code without comment lines


def sql_views() -> list[tuple[str, str]]:
    """(name, SQL text) of every shipped view and macro, in creation order (macros: ``CREATE ... MACRO``).

    The order comes from each file's ``-- reads:`` line (``sql_reads``): a view after everything it reads; views
    that do not depend on each other in the order of their layers (``LAYERS``), then by name.
    """
    return list(_shipped())


_READS = re.compile(r"^-- reads: (?P<views>[^;\n]*)(?:; tables: (?P<tables>[^\n]*))?$", re.M)


def sql_reads(name: str, text: str) -> tuple[set[str], set[str]]:
    """(shipped views, base tables) a view file declares in its ``-- reads: v1, v2; tables: t1, t2`` line
    (``-`` for no view); a file without the line is a QueryError naming it."""
    match = _READS.search(text)
    if match is None:
        raise QueryError(f"view {name!r} (tcobench/sql) has no '-- reads:' line naming what it reads")
    views = {v.strip() for v in match["views"].split(",")} - {"-", ""}
    tables = {t.strip() for t in (match["tables"] or "").split(",")} - {""}
    return views, tables


def _ordered(files: dict[str, tuple[int, str]]) -> list[str]:
    """Names in dependency order (each after what it reads); a cycle or an unknown view is a QueryError."""
    reads = {}
    for name, (_, text) in files.items():
        views = sql_reads(name, text)[0]
        unknown = views - set(files)
        if unknown:
            raise QueryError(f"view {name!r} (tcobench/sql) declares it reads unknown views {sorted(unknown)}")
        reads[name] = views
    order: list[str] = []
    done: set[str] = set()
    while len(order) < len(files):
        ready = [n for n in files if n not in done and reads[n] <= done]
        if not ready:
            cycle = sorted(set(files) - done)
            raise QueryError(f"the views {cycle} (tcobench/sql) read each other in a cycle")
        first = min(ready, key=lambda n: (files[n][0], n))
        order.append(first)
        done.add(first)
    return order


@cache
def _shipped() -> tuple[tuple[str, str], ...]:
    """The package's SQL files, read once per process (every connection defines views from them)."""
    root = files("tcobench").joinpath("sql")
    found: dict[str, tuple[int, str]] = {}
    for rank, layer in enumerate(LAYERS):
        for path in sorted(root.joinpath(layer).iterdir(), key=lambda p: p.name):
            if path.name.endswith(".sql"):
                found[path.name.removesuffix(".sql")] = (rank, path.read_text("utf-8"))
    return tuple((name, found[name][1]) for name in _ordered(found))


def _cached_prefix() -> list[tuple[str, str]]:
    """The cached views and everything they build on, in creation order."""
    views = sql_views()
    reads = {name: sql_reads(name, text)[0] for name, text in views}
    wanted, todo = set(), [v for v in CACHED_VIEWS if v in reads]
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo += reads[name]
    return [(name, text) for name, text in views if name in wanted]


_COMMENT_LINE = re.compile(r"^\s*--[^\n]*\n", re.M)


@cache
def view_key() -> str:
    """Hash of the SQL the cached views are computed with (16 hex digits): their code, without the comment lines
    (a header's prose can change without making every reader recompute until the next compaction)."""
    digest = hashlib.sha256(_CACHE_FORMAT.encode())
    for name, text in _cached_prefix():
        digest.update(f"\0{name}\0{_COMMENT_LINE.sub('', text)}".encode())
    return digest.hexdigest()[:16]


def define_views(con: duckdb.DuckDBPyConnection, views: list[tuple[str, str]]) -> None:
    """Run each view's CREATE statement; a view that does not bind is a QueryError naming it."""
    for name, text in views:
        try:
            con.execute(text)
        except duckdb.Error as exc:
            raise QueryError(f"view {name!r} (tcobench/sql) is broken: {' '.join(str(exc).split())}") from exc


def compute_per_run(con: duckdb.DuckDBPyConnection, schema: str, defined: bool = False) -> dict[str, pa.Table]:
    """The cached views' rows over the base views ``runs``, ``requests``, ``telemetry`` of ``schema``.

    The view files are run inside ``schema`` (its base views shadow those of ``main``), so they see only the rows
    given there; the cached views' rows are returned as Arrow tables (one per CACHED_VIEWS name). ``defined``: the
    views are there already (``define_per_run``).
    """
    if not defined:
        define_per_run(con, schema)
    return {name: con.sql(f"SELECT * FROM {schema}.{name}").to_arrow_table() for name in CACHED_VIEWS}


def define_per_run(con: duckdb.DuckDBPyConnection, schema: str) -> None:
    """Define the cached views, and what they build on, in ``schema`` (over its base views)."""
    previous = con.execute("SELECT current_schema()").fetchone()
    con.execute(f"SET schema = '{schema}'")
    try:
        define_views(con, _cached_prefix())
    finally:
        con.execute(f"SET schema = '{previous[0] if previous else 'main'}'")
