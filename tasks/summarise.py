"""summarise: per-run statistics and cost per 1M tokens, read back through the SQL views."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from tcobench.schemas import PriceTable

from .query import connect

__all__ = ["Summary", "summarise"]


@dataclass(frozen=True)
class Summary:
    runs: pa.Table  # view run_summary, one row per run, oldest first
    tco: pa.Table  # view tco, same order, with every assumption used
    sources: pa.Table  # view tco_sources: where each price assumption comes from
    goodput: pa.Table  # view goodput: requests within the SLO, goodput tok/s, cost per 1M good tokens


_ORDER = {"tco_sources": "ORDER BY run_id, term", "goodput": "ORDER BY run_id"}


def _rows(con: duckdb.DuckDBPyConnection, view: str, run_ids: Sequence[str] | None) -> pa.Table:
    order = _ORDER.get(view, "ORDER BY started, concurrency")
    if run_ids is None:
        return con.sql(f"SELECT * FROM {view} {order}").to_arrow_table()
    return con.sql(
        f"SELECT * FROM {view} WHERE list_contains($ids, run_id) {order}", params={"ids": list(run_ids)}
    ).to_arrow_table()


def summarise(store: Path, prices: PriceTable, run_ids: Sequence[str] | None = None) -> Summary:
    """Rows of run_summary, tco, tco_sources and goodput for the given runs (all runs when None)."""
    con = connect(store, prices, upto="tco_sources")  # the views after it are not needed here
    try:
        return Summary(*(_rows(con, view, run_ids) for view in ("run_summary", "tco", "tco_sources", "goodput")))
    finally:
        con.close()
