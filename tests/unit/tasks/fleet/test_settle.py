"""settle: the night's cells read back from a real store, and a failed row for every run a host never stored."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest

from tcobench.errors import ExitCode
from tcobench.schemas import BenchmarkConfig, HostSpec, RunRecord, RunStatus
from tcobench.tasks.fleet import HostOutcome, batch_rows, settle
from tcobench.tasks.fleet.nightly import run_cells
from tcobench.tasks.inventory import Cell
from tcobench.tasks.prices import load_prices
from tcobench.tasks.runs import failed_run_record
from tcobench.tasks.store.store import write_results
from tests.unit.factories import make_request, make_run

PRICES = load_prices(None)
CONFIG = BenchmarkConfig.model_validate_json(
    '{"engine": {"kind": "endpoint", "url": "http://127.0.0.1:1"}, "model": {"name": "m"},'
    ' "workload": {"name": "w", "concurrency": [1, 2]}}'
)


def cell(host: str, workload: str = "w") -> Cell:
    spec = HostSpec.model_validate_json(f'{{"name": "{host}", "vendor": "cpu", "hardware": "cpu-generic-2c"}}')
    return Cell(spec, "zero", "m", workload, CONFIG)


def stored(store: Path, c: Cell, level: int, status: str = "ok", started: int = 1, error: str | None = None) -> str:
    run = make_run(
        run_id=f"{c.host.name}-{c.workload}-{level}-{started}",
        batch_id="night",
        host=c.host.name,
        cell=c.label,
        concurrency=level,
        status=RunStatus(status),
        started_ns=started,
        error=error,
    )
    write_results(store, run, [])
    return run.run_id


def test_cells_are_read_back_and_lost_runs_get_failed_rows_with_the_hosts_reason(tmp_path: Path) -> None:
    done, half, gone, broke = cell("host-a"), cell("host-b"), cell("host-c"), cell("host-a", "w2")
    stored(tmp_path, done, 1), stored(tmp_path, done, 2)
    stored(tmp_path, half, 1)  # the host died during the second level
    recorded = failed_run_record(CONFIG, "host-a", "night", "EngineError: engine never came up", cell=broke.label)
    write_results(tmp_path, recorded, [])
    outcomes = {
        "host-a": HostOutcome("host-a", "completed", None, "r-a"),
        "host-b": HostOutcome("host-b", "lost", "host lost: its worker sent no heartbeat for 95 s", "r-b"),
        "host-c": HostOutcome("host-c", "offline", "host offline: no worker picked up its run", "r-c"),
    }
    results = {r.cell: r for r in settle(tmp_path, PRICES, [done, half, gone, broke], "night", outcomes)}
    assert results[done.label].status == "ok" and len(results[done.label].run_ids) == 2
    assert results[half.label].status == "failed"
    assert results[half.label].error == "host lost: its worker sent no heartbeat for 95 s"
    assert (
        results[gone.label].error == "host offline: no worker picked up its run"
        and len(results[gone.label].run_ids) == 2
    )
    assert results[broke.label].error == "EngineError: engine never came up"  # the host's own row stands for it
    rows = {(r["cell"], r["concurrency"]): r for r in batch_rows(tmp_path, PRICES, "night")}
    assert rows[(half.label, 2)]["status"] == "failed" and rows[(half.label, 1)]["status"] == "ok"
    assert (
        rows[(gone.label, 1)]["error"] == rows[(gone.label, 2)]["error"] == "host offline: no worker picked up its run"
    )
    assert (broke.label, 1) not in rows  # no extra rows for a cell its host already recorded as failed
    again = settle(tmp_path, PRICES, [half, gone], "night", outcomes)  # idempotent: nothing more is missing
    assert len(batch_rows(tmp_path, PRICES, "night")) == len(rows) and [r.status for r in again] == ["failed"] * 2


def test_a_retried_level_counts_by_its_newest_row(tmp_path: Path) -> None:
    retried = cell("host-a")
    stored(tmp_path, retried, 1, status="failed", started=1, error="engine died")
    stored(tmp_path, retried, 1, started=5), stored(tmp_path, retried, 2, status="partial", started=6, error="1 of 4")
    (result,) = settle(tmp_path, PRICES, [retried], "night", {"host-a": HostOutcome("host-a", "completed", None, "r")})
    assert (result.status, result.error, len(result.run_ids)) == ("partial", "1 of 4", 3)


def _measured(store: Path, c: Cell, level: int, status: str, failures: int, requests: int = 10) -> RunRecord:
    """A run of ``requests`` measured requests, ``failures`` of them with an error."""
    error = f"{failures} of {requests} failed" if failures else None
    run = make_run(
        run_id=f"{c.label}-{level}",
        batch_id="night",
        host=c.host.name,
        cell=c.label,
        concurrency=level,
        status=RunStatus(status),
        error=error,
    )
    rows = [
        make_request(run_id=run.run_id, request_index=i, error="HTTP 500" if i < failures else None)
        for i in range(requests)
    ]
    write_results(store, run, rows)
    return run


def test_a_cell_exits_as_in_process_partial_over_the_threshold_is_4(tmp_path: Path) -> None:
    """The night's exit status per cell is tasks.runs.run_verdict's, with the night's partial threshold."""
    clean, few, many = cell("host-a"), cell("host-b"), cell("host-c")
    for level in (1, 2):
        _measured(tmp_path, clean, level, "ok", 0)
        _measured(tmp_path, few, level, "partial" if level == 2 else "ok", 1 if level == 2 else 0, requests=40)
        _measured(tmp_path, many, level, "partial" if level == 2 else "ok", 3 if level == 2 else 0)
    outcomes = {h: HostOutcome(h, "completed", None, "r") for h in ("host-a", "host-b", "host-c")}
    results = {r.cell: r for r in settle(tmp_path, PRICES, [clean, few, many], "night", outcomes)}
    assert results[clean.label].exit_code == ExitCode.ok
    assert (results[few.label].status, results[few.label].exit_code) == ("partial", ExitCode.ok)  # 2.5% <= 5%
    assert (results[many.label].status, results[many.label].exit_code) == ("partial", ExitCode.partial)  # 30%
    assert results[many.label].error == "3 of 10 failed"
    strict = {r.cell: r for r in settle(tmp_path, PRICES, [few], "night", outcomes, threshold=0.01)}
    assert strict[few.label].exit_code == ExitCode.partial  # 2.5% > 1%


@pytest.mark.parametrize(
    ("status", "failures", "requests"),
    [("ok", 0, 10), ("partial", 1, 40), ("partial", 3, 10), ("partial", 10, 10), ("interrupted", 0, 10)],
)
def test_a_fleet_cell_settles_as_the_in_process_night_judges_it(
    tmp_path: Path, status: str, failures: int, requests: int
) -> None:
    """The same stored runs: run_cells (in process, from the counts its process committed) and settle (fleet, read
    back from the store) give the cell the same status and exit status, at every partial threshold."""
    c = cell("host-a")
    runs = [_measured(tmp_path, c, 1, "ok", 0), _measured(tmp_path, c, 2, status, failures, requests)]
    counts = pa.table(
        {
            "run_id": [r.run_id for r in runs],
            "status": [r.status.value for r in runs],
            "n": [10, requests],
            "errors": [0, failures],
        }
    )

    def measured_in_process(*args: Any, **kwargs: Any) -> Any:
        return SimpleNamespace(run_ids=[r.run_id for r in runs], summary=None, run_rows=counts, runs=runs)

    outcomes = {"host-a": HostOutcome("host-a", "completed", None, "r")}
    for threshold in (0.01, 0.05, 0.5):
        (here,) = run_cells(
            [c], measured_in_process, PRICES, tmp_path, tmp_path, "night", attempts=1, partial_threshold=threshold
        )
        (there,) = settle(tmp_path, PRICES, [c], "night", outcomes, threshold)
        assert (there.status, there.exit_code) == (here.status, here.exit_code), threshold
