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


def _rows(con: duckdb.DuckDBPyConnection, view: str, run_ids: Sequence[str] | None) -> pa.Table:
    order = "ORDER BY started, concurrency" if view != "tco_sources" else "ORDER BY run_id, term"
    if run_ids is None:
        return con.sql(f"SELECT * FROM {view} {order}").to_arrow_table()
    return con.sql(
        f"SELECT * FROM {view} WHERE list_contains($ids, run_id) {order}", params={"ids": list(run_ids)}
    ).to_arrow_table()


def summarise(
    store: StoreRef, prices: PriceTable, run_ids: Sequence[str] | None = None, snapshot: int | None = None
) -> Summary:
    """Rows of run_summary, tco and tco_sources for the given runs (all runs when None)."""
    con = connect(store, prices, upto="tco_sources", snapshot=snapshot)  # later views are not needed here
    try:
        return Summary(
            _rows(con, "run_summary", run_ids), _rows(con, "tco", run_ids), _rows(con, "tco_sources", run_ids)
        )
    finally:
        con.close()
