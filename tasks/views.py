"""The shipped SQL views (tcobench/sql, one per file) and the per-run ones the store caches at commit time.

``run_summary``, ``run_statistics`` and ``energy`` are functions of one run's rows (its runs row, requests and
telemetry), and they are what every run-level view (tco, cost_basis, nightly_trend, ...), the report's latency
distributions and compare's bootstrap read. Recomputing them means a scan of every
request and sample in the store, so ``tasks.store`` computes them once, when a run commits, with the very same
SQL files run over that run's rows, and stores the rows next to the run. A reader uses the stored rows when they
were computed by the SQL it ships (``view_key``: a hash of the view files up to the last cached one) and computes
the rest (``compute_per_run``). A change to those SQL files therefore never serves stale numbers: it only makes
readers compute until ``tcobench store compact`` has stored the rows of the new SQL.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib.resources import files

import duckdb
import pyarrow as pa

from tcobench.errors import QueryError

__all__ = ["CACHED_VIEWS", "compute_per_run", "define_views", "sql_views", "view_key"]

CACHED_VIEWS = ("run_summary", "run_statistics", "energy")
_CACHE_FORMAT = "tcobench-view-cache-1"


def sql_views() -> list[tuple[str, str]]:
    """(name, SQL text) of every shipped view and macro, in creation order (macros: ``CREATE ... MACRO``)."""
    return list(_shipped())


@cache
def _shipped() -> tuple[tuple[str, str], ...]:
    """The package's SQL files, read once per process (every connection defines views from them)."""
    folder = files("tcobench").joinpath("sql")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".sql"))
    return tuple((n.split("_", 1)[1].removesuffix(".sql"), folder.joinpath(n).read_text("utf-8")) for n in names)


def _cached_prefix() -> list[tuple[str, str]]:
    """The views up to and including the last cached one (the cached views and everything they build on)."""
    views = sql_views()
    names = [name for name, _ in views]
    last = max(names.index(v) for v in CACHED_VIEWS if v in names) if set(CACHED_VIEWS) & set(names) else -1
    return views[: last + 1]


@cache
def view_key() -> str:
    """Hash of the SQL the cached views are computed with (16 hex digits)."""
    digest = hashlib.sha256(_CACHE_FORMAT.encode())
    for name, text in _cached_prefix():
        digest.update(f"\0{name}\0{text}".encode())
    return digest.hexdigest()[:16]


def define_views(con: duckdb.DuckDBPyConnection, views: list[tuple[str, str]]) -> None:
    """Run each view's CREATE statement; a view that does not bind is a QueryError naming it."""
    for name, text in views:
        try:
            con.execute(text)
        except duckdb.Error as exc:
            raise QueryError(f"view {name!r} (tcobench/sql) is broken: {' '.join(str(exc).split())}") from exc


def compute_per_run(con: duckdb.DuckDBPyConnection, schema: str) -> dict[str, pa.Table]:
    """The cached views' rows over the base views ``runs``, ``requests``, ``telemetry`` of ``schema``.

    The view files are run inside ``schema`` (its base views shadow those of ``main``), so they see only the rows
    given there; the cached views' rows are returned as Arrow tables (one per CACHED_VIEWS name).
    """
    previous = con.execute("SELECT current_schema()").fetchone()
    con.execute(f"SET schema = '{schema}'")
    try:
        define_views(con, _cached_prefix())
        return {name: con.sql(f"SELECT * FROM {schema}.{name}").to_arrow_table() for name in CACHED_VIEWS}
    finally:
        con.execute(f"SET schema = '{previous[0] if previous else 'main'}'")
