"""Interrupted runs (stopped early by a signal or their deadline) are stored for the record but never mixed into
cost figures: platform_cost, compare and history take ok and partial runs only."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tcobench.schemas import RunStatus
from tcobench.tasks.analysis.compare import CompareOptions, compare
from tcobench.tasks.analysis.history import history
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import write_results
from tests.unit.factories import make_prices, make_request, make_run


def _store(tmp_path: Path) -> Path:
    runs = [
        make_run(run_id="a1", gpu_vendor="nvidia"),
        make_run(
            run_id="a2",
            gpu_vendor="nvidia",
            status=RunStatus.interrupted,
            error="interrupted by SIGINT: kept 1 of 20 measured requests (1 ok)",
        ),
        make_run(run_id="b1", gpu_vendor="amd"),
    ]
    for run in runs:
        count = 1 if run.status is RunStatus.interrupted else 3
        write_results(tmp_path, run, [make_request(run_id=run.run_id, request_index=i) for i in range(count)])
    return tmp_path


def test_interrupted_runs_stay_out_of_cost_figures(tmp_path: Path) -> None:
    store = _store(tmp_path)
    con: duckdb.DuckDBPyConnection = connect(store, make_prices(), needs={"runs", "platform_cost"})
    try:
        status = dict(con.execute("SELECT run_id, status FROM runs").fetchall())
        assert status == {"a1": "ok", "a2": "interrupted", "b1": "ok"}  # stored, with its status
        runs = con.execute("SELECT sum(runs) FROM platform_cost WHERE gpu_vendor = 'nvidia'").fetchone()
        assert runs == (1,)
    finally:
        con.close()
    result = compare(store, make_prices(), "vendor=nvidia", "vendor=amd", CompareOptions(resamples=100))
    assert result.strata[0].a_runs == 1
    points = [p.run_id for s in history(store, make_prices()) for p in s.points]
    assert "a2" not in points and "a1" in points
