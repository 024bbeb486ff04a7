"""summarise: per-run statistics and cost per 1M tokens, read back through the SQL views."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from tcobench.schemas import PriceTable

from .query import connect
from .store import StoreRef

__all__ = ["Summary", "summarise"]


@dataclass(frozen=True)
class Summary:
    runs: pa.Table  # view run_summary, one row per run, oldest first
    tco: pa.Table  # view tco, same order, with every assumption used
    sources: pa.Table  # view tco_sources: where each price assumption comes from
    goodput: pa.Table  # view goodput (owned basis): requests within the SLO, goodput tok/s, cost per 1M good tokens


_ORDER = {"tco_sources": "ORDER BY run_id, term", "goodput": "ORDER BY run_id"}
_WHERE = {"goodput": "basis = 'owned'"}


def _rows(con: duckdb.DuckDBPyConnection, view: str, run_ids: Sequence[str] | None) -> pa.Table:
    order = _ORDER.get(view, "ORDER BY started, concurrency")
    where = [_WHERE[view]] if view in _WHERE else []
    if run_ids is not None:
        where.append("list_contains($ids, run_id)")
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    params = {"ids": list(run_ids)} if run_ids is not None else None
    return con.sql(f"SELECT * FROM {view} {clause} {order}", params=params).to_arrow_table()


def summarise(
    store: StoreRef, prices: PriceTable, run_ids: Sequence[str] | None = None, snapshot: int | None = None
) -> Summary:
    """Rows of run_summary, tco, tco_sources and goodput for the given runs (all runs when None)."""
    con = connect(store, prices, upto="goodput", snapshot=snapshot)  # the views after it are not needed here
    try:
        return Summary(*(_rows(con, view, run_ids) for view in ("run_summary", "tco", "tco_sources", "goodput")))
    finally:
        con.close()
