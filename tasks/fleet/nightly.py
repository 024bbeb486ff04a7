"""run_cells: one host's nightly cells, one after another; failures recorded, never propagated.

Retries: a cell is tried again (with backoff) only when it failed on I/O (connection refused or reset,
timeouts, a Docker daemon that did not answer, an HTTP 502/503/504 "try later" such as Prefect's API under a
burst of host tasks); configuration and measurement errors are final.
A failed cell leaves a ``runs`` row with status failed and the error, so SQL sees every cell of the night.
A signal (``Interrupted``) is not a cell failure: it stops the night once the run in progress is stored. Nor is a
query a signal broke off (DuckDB raises "Query interrupted" from the handler's exception): that exception is raised
again, so Prefect's cancel of a worker's run ends it there too.
Each cell carries the exit status its runs call for (``tasks.runs.run_verdict``), so `tcobench nightly` exits
by the same table as `tcobench run`.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tcobench.errors import ExitCode, Interrupted, causes
from tcobench.schemas import PriceTable, RunStatus
from tcobench.tasks.inventory import Cell
from tcobench.tasks.load.shutdown import check_stop, raised_by_a_signal
from tcobench.tasks.progress import HostProgress
from tcobench.tasks.runs import PARTIAL_THRESHOLD, failed_run_record, run_verdict, worst_exit
from tcobench.tasks.store.store import StoreRef, write_results

__all__ = ["CellResult", "is_io_error", "nightly_markdown", "run_cells"]

# the benchmark flow: (config, prices, store, host, model_cache, batch_id=..., cell=...) -> result
RunCell = Callable[..., Any]


@dataclass(frozen=True)
class CellResult:
    cell: str
    host: str
    status: RunStatus
    run_ids: list[str] = field(default_factory=list)
    attempts: int | None = 1  # None: not known here (fleet mode reads cells back from the store)
    error: str | None = None
    exit_code: ExitCode = ExitCode.ok  # what its runs call for: 3 failed, 4 partial over the threshold, 0 ok
    warnings: tuple[str, ...] = ()  # its runs' identity warnings (declared and detected hardware disagree)


def is_io_error(exc: BaseException) -> bool:
    """True when the failure (or its cause chain) is network/daemon I/O, the only kind worth retrying."""
    io_types: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError, socket.timeout, httpx.TransportError)
    try:
        import requests

        io_types += (requests.ConnectionError, requests.Timeout)
    except ImportError:  # pragma: no cover - requests comes with the docker SDK
        pass
    for seen in causes(exc):
        if isinstance(seen, io_types):
            return True
        # a server that said "try later" (Prefect's API under a burst of host tasks answers 503)
        if isinstance(seen, httpx.HTTPStatusError) and seen.response.status_code in (502, 503, 504):
            return True
    return False


def _verdict(result: Any, threshold: float) -> ExitCode:
    counts = {r["run_id"]: (r["n"], r["errors"]) for r in result.run_rows.to_pylist()}
    return worst_exit([run_verdict(r.status, *counts.get(r.run_id, (0, 0)), threshold) for r in result.runs])


def _watching(progress: HostProgress | None) -> dict[str, Any]:
    """The benchmark flow's progress callbacks (none without a progress display)."""
    return (
        {}
        if progress is None
        else {"on_request": progress.on_request, "on_event": progress.on_event, "watcher": progress}
    )


def _run_one(
    cell: Cell,
    run_cell: RunCell,
    prices: PriceTable,
    store: StoreRef,
    model_cache: Path,
    batch_id: str,
    attempts: int,
    backoff_s: float,
    threshold: float,
    progress: HostProgress | None,
) -> CellResult:
    for attempt in range(1, attempts + 1):
        check_stop("no further cell was started")
        try:
            # summarise=False: no summary connection per cell; the night publishes one summary of its runs
            result = run_cell(
                cell.config,
                prices,
                store,
                cell.host.name,
                model_cache,
                batch_id=batch_id,
                cell=cell.label,
                summarise=False,
                **_watching(progress),
            )
        except Interrupted:
            raise  # a signal stops the night; the run in progress is already stored
        except Exception as exc:  # one failing cell never stops the others
            signalled = raised_by_a_signal(exc)
            if signalled is not None:  # a signal broke off a query: it stops the night, as it would anywhere else
                raise signalled from None  # (not `from exc`: exc's cause is signalled, a cycle)
            if attempt < attempts and is_io_error(exc):
                time.sleep(backoff_s * 2 ** (attempt - 1))
                continue
            error = f"{getattr(exc, 'kind', type(exc).__name__)}: {exc}"
            record = failed_run_record(cell.config, cell.host.name, batch_id, error, cell=cell.label)
            write_results(store, record, [])
            return CellResult(
                cell.label, cell.host.name, RunStatus.failed, [record.run_id], attempt, error, ExitCode.failed
            )
        statuses = {RunStatus(r["status"]) for r in result.run_rows.select(["status"]).to_pylist()}
        status = RunStatus.ok if statuses <= {RunStatus.ok} else RunStatus.partial
        if RunStatus.failed in statuses:
            status = RunStatus.failed
        warnings = tuple(sorted({r.identity_warning for r in result.runs if r.identity_warning}))
        return CellResult(
            cell.label,
            cell.host.name,
            status,
            list(result.run_ids),
            attempt,
            exit_code=_verdict(result, threshold),
            warnings=warnings,
        )
    raise AssertionError("unreachable")  # pragma: no cover


def run_cells(
    cells: list[Cell],
    run_cell: RunCell,
    prices: PriceTable,
    store: StoreRef,
    model_cache: Path,
    batch_id: str,
    attempts: int = 2,
    backoff_s: float = 5.0,
    partial_threshold: float = PARTIAL_THRESHOLD,
    progress: HostProgress | None = None,
) -> list[CellResult]:
    """Run one host's cells one after another (one engine per GPU at a time); ``progress`` is told each cell's
    start and end, each level and each request."""
    results = []
    for index, cell in enumerate(cells, 1):
        if progress is not None:
            progress.start_cell(cell, index)
        result = _run_one(
            cell, run_cell, prices, store, model_cache, batch_id, attempts, backoff_s, partial_threshold, progress
        )
        if progress is not None:
            progress.end_cell(result.status.value, result.error)
        results.append(result)
    return results


def _cell_text(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def nightly_markdown(
    batch_id: str, results: list[CellResult], hosts: Sequence[tuple[str, str, str | None]] = ()
) -> str:
    """The night as a markdown table (Prefect artifact and CLI summary); ``hosts``: (host, outcome, reason) of
    each host's run in fleet mode."""
    failed = [r for r in results if r.status == RunStatus.failed]
    lines = [
        f"# tcobench nightly {batch_id}",
        "",
        f"{len(results) - len(failed)} of {len(results)} cells succeeded.",
        "",
        "| cell | status | attempts | runs | error |",
        "|---|---|---:|---|---|",
    ]
    for r in results:
        attempts = "-" if r.attempts is None else r.attempts
        runs = ", ".join(x[:8] for x in r.run_ids)
        lines.append(f"| {r.cell} | {r.status} | {attempts} | {runs} | {_cell_text(r.error)} |")
    warned = sorted({(r.host, w) for r in results for w in r.warnings})
    if warned:
        lines += ["", *(f"- warning: host {host}: {_cell_text(w)}" for host, w in warned)]
    if hosts:
        lines += ["", "| host | its run | reason |", "|---|---|---|"]
        lines += [f"| {host} | {outcome} | {_cell_text(reason)} |" for host, outcome, reason in hosts]
    return "\n".join(lines) + "\n"
