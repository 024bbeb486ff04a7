"""summarise: per-run statistics and cost per 1M tokens, read back through the SQL views."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from tcobench.schemas import PriceTable
from tcobench.tasks.store.query import connect, run_count
from tcobench.tasks.store.rows import IDS, arrow_of, id_list
from tcobench.tasks.store.store import StoreRef, open_store

__all__ = [
    "BY_EQUALITY",
    "SUMMARY_MACROS",
    "SUMMARY_NEEDS",
    "SUMMARY_VIEWS",
    "Summary",
    "most_of_the_store",
    "rows_by_equality",
    "rows_of_runs",
    "run_summaries",
    "summarise",
    "summary_of",
]


@dataclass(frozen=True)
class Summary:
    runs: pa.Table  # view run_summary, one row per run, oldest first
    tco: pa.Table  # view tco, same order, with every assumption used
    sources: pa.Table  # view tco_sources: where each price assumption comes from
    goodput: pa.Table  # view goodput (owned basis): requests within the SLO, goodput tok/s, cost per 1M good tokens


SUMMARY_VIEWS = ("run_summary", "tco", "tco_sources", "goodput")  # Summary's fields, in order
# the table macros (tcobench/sql/macros) this module calls: a connection for it names them in its needs
SUMMARY_MACROS = ("rows_of_runs", "owned_goodput")
SUMMARY_NEEDS = (*SUMMARY_VIEWS, *SUMMARY_MACROS)  # what a connection for summary_of defines
# each Summary field: its rows (a table macro call: $one, one run's id, or $ids, a list of them, or neither: every
# run) and the columns they are sorted by
_VIEW_ROWS = f"SELECT * FROM rows_of_runs($view, one_run := $one, ids := {IDS})"
_GOODPUT_ROWS = f"SELECT * FROM owned_goodput(one_run := $one, ids := {IDS})"
_OLDEST_FIRST = ("started", "concurrency")
_SORT = {"tco_sources": ("run_id", "term"), "goodput": ("run_id",)}
# Up to this many runs are read one call each with ``one_run := $one``: DuckDB pushes an equality on run_id down
# through a view's joins and aggregates to the scan of that run's rows, but not a list or IN filter, with which view
# goodput judged every request of the store (slower by far on a year of history:
# docs/dev/performance.md#per-cell-by-equality). More runs than this: one pass over the store.
BY_EQUALITY = 32


def most_of_the_store(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> bool:
    """Whether these runs, two or more, are at least half of the store's (view runs): then one pass over the store
    reads at most twice their rows, and costs less than a call per run, each of which plans the whole view tree again
    (a small store's night, a new user's store: docs/dev/performance.md#per-cell-by-equality). One run is one call
    either way, and a nightly cell's summary asks for one: the store is not counted for it."""
    wanted = len(set(run_ids))
    return wanted >= 2 and 2 * wanted >= run_count(con)


def rows_by_equality(
    con: duckdb.DuckDBPyConnection, sql: str, run_ids: Sequence[str], params: Mapping[str, object] | None = None
) -> pa.Table:
    """The rows of ``sql`` (a table macro call binding ``$one`` and ``$ids``, as summary_cards or rows_of_runs) of
    each of the given runs, one call each with ``$one`` bound to its id (a repeated id is read once), in the order of
    the ids; in one call with the list of ids where they are most of the store (``most_of_the_store``: the same
    rows, in the store's order). No run: the call for the empty id, which no run has (no row, and nothing read: the
    equality is pushed down), for the columns."""
    if most_of_the_store(con, run_ids):
        return arrow_of(con, sql, {**(params or {}), "one": None, "ids": id_list(run_ids)})
    ids = list(dict.fromkeys(run_ids)) or [""]
    parts = [arrow_of(con, sql, {**(params or {}), "one": run_id, "ids": None}) for run_id in ids]
    return pa.concat_tables(parts)


def rows_of_runs(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    run_ids: Sequence[str] | None,
    order: Sequence[str],
    params: Mapping[str, object] | None = None,
) -> pa.Table:
    """The rows of ``sql`` (a table macro call binding ``$one`` and ``$ids``, as rows_of_runs or owned_goodput) of
    the given runs (all when None), sorted by the ``order`` columns (ascending, NULL last): up to ``BY_EQUALITY`` runs
    one call each (rows_by_equality, which reads them in one call too where they are most of the store), more in one
    call with the list of ids."""
    if run_ids is None or len(run_ids) > BY_EQUALITY:
        ids = id_list(run_ids) if run_ids is not None else None
        found = arrow_of(con, sql, {**(params or {}), "one": None, "ids": ids})
    else:
        found = rows_by_equality(con, sql, run_ids, params)
    return found.sort_by([(column, "ascending") for column in order])


def _rows(con: duckdb.DuckDBPyConnection, view: str, run_ids: Sequence[str] | None) -> pa.Table:
    order = _SORT.get(view, _OLDEST_FIRST)
    if view == "goodput":
        return rows_of_runs(con, _GOODPUT_ROWS, run_ids, order)
    return rows_of_runs(con, _VIEW_ROWS, run_ids, order, {"view": view})


def summary_of(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None = None) -> Summary:
    """``summarise`` on a connection that defines ``SUMMARY_NEEDS``."""
    return Summary(*(_rows(con, view, run_ids) for view in SUMMARY_VIEWS))


def summarise(
    store: StoreRef, prices: PriceTable, run_ids: Sequence[str] | None = None, snapshot: int | None = None
) -> Summary:
    """Rows of run_summary, tco, tco_sources and goodput for the given runs (all runs when None)."""
    con = connect(store, prices, needs=SUMMARY_NEEDS, snapshot=snapshot)
    try:
        return summary_of(con, run_ids)
    finally:
        con.close()


def run_summaries(store: StoreRef, prices: PriceTable, run_ids: Sequence[str]) -> pa.Table:
    """The run_summary rows of the given runs alone (what a progress line shows), oldest first.

    Runs this process has just committed are read from the rows it stored for them at commit time (``tasks.store.store``
    computes view run_summary of a run as it commits it), without opening the store again: a progress line at each
    level opened a connection (attach, views) for one row."""
    ids = list(dict.fromkeys(run_ids))
    committed = open_store(store).committed("run_summary", ids) if ids else None
    if committed is not None:
        return committed.sort_by([("started", "ascending"), ("concurrency", "ascending")])
    con = connect(store, prices, needs=("run_summary", "rows_of_runs"))
    try:
        return _rows(con, "run_summary", run_ids)
    finally:
        con.close()
