"""settle: the night's cells read back from the shared store, with a failed row for every run that never came.

A host's run returns nothing through Prefect (no result persistence): what it measured is what reached the store.
For each cell the newest row per concurrency level decides: a level with no row at all was lost, and gets a
``failed`` run row here whose error is the host's outcome ("host offline: ...", "host lost: ...", "over budget:
..."), unless the host's run already recorded the cell as failed (one row standing for the cell, as
``run_cells`` writes it). So SQL sees every cell of the night, and the markdown names each failed cell's reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tcobench.errors import ExitCode
from tcobench.schemas import PriceTable, RunStatus
from tcobench.tasks.fleet.gather import HostOutcome
from tcobench.tasks.fleet.nightly import CellResult
from tcobench.tasks.inventory import Cell
from tcobench.tasks.runs import PARTIAL_THRESHOLD, failed_run_record, run_verdict, worst_exit
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.rows import arrow_of
from tcobench.tasks.store.store import StoreRef, write_results

__all__ = ["batch_rows", "settle"]

_ROWS = "SELECT * FROM batch_run_rows($batch)"  # macro batch_run_rows (tcobench/sql/macros)


def batch_rows(store: StoreRef, prices: PriceTable, batch_id: str) -> list[dict[str, Any]]:
    """Every run row of the batch, oldest first, with its measured and failed request counts."""
    con = connect(store, prices, needs=("batch_run_rows",))
    try:
        rows: list[dict[str, Any]] = arrow_of(con, _ROWS, {"batch": batch_id}).to_pylist()
    finally:
        con.close()
    return sorted(rows, key=lambda r: (r["started_ns"], r["run_id"]))


def _lost_reason(outcome: HostOutcome | None) -> str:
    if outcome is None:
        return "lost: the nightly has no outcome for this host"
    if outcome.reason:
        return outcome.reason
    return f"lost: its run ended {outcome.status} without storing this run"


def _settle_cell(
    cell: Cell,
    rows: Sequence[dict[str, Any]],
    outcome: HostOutcome | None,
    store: StoreRef,
    batch_id: str,
    threshold: float,
) -> CellResult:
    newest = {r["concurrency"]: r for r in rows}  # rows are oldest first: the newest per level wins
    failed = [r for r in rows if r["status"] == RunStatus.failed.value and newest[r["concurrency"]] is r]
    run_ids = [r["run_id"] for r in rows]
    if failed:  # the host's run recorded why (a failed row may stand for the whole cell)
        return CellResult(
            cell.label, cell.host.name, RunStatus.failed, run_ids, None, failed[-1]["error"], ExitCode.failed
        )
    missing = [c for c in cell.config.workload.concurrency if c not in newest]
    if missing:
        reason = _lost_reason(outcome)
        for level in missing:
            record = failed_run_record(
                cell.config, cell.host.name, batch_id, reason, cell=cell.label, concurrency=level
            )
            write_results(store, record, [])
            run_ids.append(record.run_id)
        return CellResult(cell.label, cell.host.name, RunStatus.failed, run_ids, None, reason, ExitCode.failed)
    statuses = {r["status"] for r in newest.values()}
    status = RunStatus.ok if statuses <= {RunStatus.ok.value} else RunStatus.partial
    partial = next((r["error"] for r in newest.values() if r["status"] != RunStatus.ok.value), None)
    # the in-process night's rule (tasks.runs.run_verdict): partial over the threshold, or cut short, is exit 4
    code = worst_exit([run_verdict(r["status"], r["n"], r["errors"], threshold) for r in newest.values()])
    return CellResult(cell.label, cell.host.name, status, run_ids, None, partial, code)


def settle(
    store: StoreRef,
    prices: PriceTable,
    cells: Sequence[Cell],
    batch_id: str,
    outcomes: Mapping[str, HostOutcome],
    threshold: float = PARTIAL_THRESHOLD,
) -> list[CellResult]:
    """Every cell's result from the store, after writing a failed row for each run a host never stored; a cell's
    exit status is its runs' (``tasks.runs.run_verdict``, ``threshold``: the partial threshold), as in process."""
    rows = batch_rows(store, prices, batch_id)
    by_cell: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_cell.setdefault(row["cell"] or "", []).append(row)
    return [
        _settle_cell(c, by_cell.get(c.label, []), outcomes.get(c.host.name), store, batch_id, threshold) for c in cells
    ]
