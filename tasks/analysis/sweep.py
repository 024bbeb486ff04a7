"""sweep_verdict: whether a self-stopping concurrency sweep ends at the level just measured (view ``sweep``)."""

from __future__ import annotations

from collections.abc import Sequence

from tcobench.schemas import PriceTable, WorkloadConfig
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import StoreRef

__all__ = ["sweep_verdict"]


def sweep_verdict(store: StoreRef, prices: PriceTable, workload: WorkloadConfig, run_ids: Sequence[str]) -> str | None:
    """Why the sweep stops after the last of ``run_ids`` (the view's reason), or None to go on.

    None without ``workload.sweep``, or when the last run was the last level anyway.
    """
    if workload.sweep is None or not run_ids or len(run_ids) >= len(workload.concurrency):
        return None
    con = connect(store, prices, needs={"sweep_stop"})
    try:
        row = con.execute("SELECT * FROM sweep_stop(?)", [run_ids[-1]]).fetchone()
    finally:
        con.close()
    return str(row[0]) if row else None
