"""Asked vs achieved shape: view run_shape's rows for some runs (the mean input and output lengths asked and served,
and the mismatch note with its likely cause)."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pyarrow as pa

from tcobench.schemas import PriceTable
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.rows import IDS, arrow_of, id_list
from tcobench.tasks.store.store import StoreRef

__all__ = ["run_shapes", "shapes_of"]


def run_shapes(
    store: StoreRef,
    prices: PriceTable,
    run_ids: Sequence[str],
    snapshot: int | None = None,
    shape_tolerance: float | None = None,
) -> pa.Table:
    """View run_shape for ``run_ids`` (runs that asked for no length have no row), at ``snapshot`` if given, judged
    with ``shape_tolerance`` (default: ``Settings.shape_tolerance``)."""
    con = connect(store, prices, needs=("run_shapes",), snapshot=snapshot, shape_tolerance=shape_tolerance)
    try:
        return shapes_of(con, run_ids)
    finally:
        con.close()


def shapes_of(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> pa.Table:
    """``run_shapes`` on a connection that defines view run_shape."""
    return arrow_of(con, f"SELECT * FROM run_shapes({IDS})", {"ids": id_list(run_ids)})
