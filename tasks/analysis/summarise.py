"""summarise: per-run statistics and cost per 1M tokens, read back through the SQL views."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from tcobench.schemas import PriceTable
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.rows import IDS, arrow_of, id_list
from tcobench.tasks.store.store import StoreRef, open_store

__all__ = ["SUMMARY_VIEWS", "Summary", "run_summaries", "rows_of_runs", "summarise", "summary_of"]


@dataclass(frozen=True)
class Summary:
    runs: pa.Table  # view run_summary, one row per run, oldest first
    tco: pa.Table  # view tco, same order, with every assumption used
    sources: pa.Table  # view tco_sources: where each price assumption comes from
    goodput: pa.Table  # view goodput (owned basis): requests within the SLO, goodput tok/s, cost per 1M good tokens


SUMMARY_VIEWS = ("run_summary", "tco", "tco_sources", "goodput")  # Summary's fields, in order
_ORDER = {"tco_sources": "ORDER BY run_id, term", "goodput": "ORDER BY run_id"}
_WHERE = {"goodput": "basis = 'owned'"}
# Up to this many runs are read one ``run_id = $id`` branch each (UNION ALL): DuckDB pushes an equality on run_id
# down through a view's joins and aggregates to the scan of that run's rows, but not a list or IN filter, with
# which view goodput judged every request of the store (slower by far on a year of history:
# docs/dev/performance.md#per-cell-by-equality). More runs than this: one pass over the store.
BY_EQUALITY = 32


def rows_of_runs(
    con: duckdb.DuckDBPyConnection, select: str, run_ids: Sequence[str] | None, order: str, where: Sequence[str] = ()
) -> pa.Table:
    """The rows of ``select`` (``SELECT ... FROM ...``, no WHERE; ``run_id`` names one column) of the given runs
    (all when None), ``order`` applied (an ``ORDER BY`` over its output columns): up to ``BY_EQUALITY`` runs one
    ``run_id = $id`` branch each, more in one pass with a semi-join on the list of ids."""
    conditions = list(where)
    if run_ids is None or len(run_ids) > BY_EQUALITY:
        if run_ids is not None:
            conditions.append(f"run_id IN (SELECT unnest({IDS}))")
        clause = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        params = {"ids": id_list(run_ids)} if run_ids is not None else None
        return arrow_of(con, f"SELECT * FROM ({select} {clause}) {order}", params)
    ids = list(dict.fromkeys(run_ids))
    if not ids:
        return con.sql(f"SELECT * FROM ({select} WHERE false) {order}").to_arrow_table()
    branches = " UNION ALL ".join(
        f"{select} WHERE {' AND '.join([*conditions, f'run_id = $id{i}'])}" for i in range(len(ids))
    )
    each = {f"id{i}": run_id for i, run_id in enumerate(ids)}
    return arrow_of(con, f"SELECT * FROM ({branches}) {order}", each)


def _rows(con: duckdb.DuckDBPyConnection, view: str, run_ids: Sequence[str] | None) -> pa.Table:
    order = _ORDER.get(view, "ORDER BY started, concurrency")
    return rows_of_runs(con, f"SELECT * FROM {view}", run_ids, order, [_WHERE[view]] if view in _WHERE else [])


def summary_of(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None = None) -> Summary:
    """``summarise`` on a connection that defines ``SUMMARY_VIEWS``."""
    return Summary(*(_rows(con, view, run_ids) for view in SUMMARY_VIEWS))


def summarise(
    store: StoreRef, prices: PriceTable, run_ids: Sequence[str] | None = None, snapshot: int | None = None
) -> Summary:
    """Rows of run_summary, tco, tco_sources and goodput for the given runs (all runs when None)."""
    con = connect(store, prices, needs=SUMMARY_VIEWS, snapshot=snapshot)
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
    con = connect(store, prices, needs=("run_summary",))
    try:
        return _rows(con, "run_summary", run_ids)
    finally:
        con.close()
