"""run_cells' failure and retry rules. The benchmark flow is replaced by a callable here (the subject is
the loop); tests/integration/test_nightly_docker.py runs the real flow against two real Docker daemons."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pyarrow as pa
import pytest

from tcobench.errors import ConfigError, EngineError, ExitCode, Interrupted
from tcobench.schemas import RunStatus
from tcobench.tasks.fleet.nightly import is_io_error, nightly_markdown, run_cells
from tcobench.tasks.inventory import load_plan
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect
from tests.unit.tasks.load.test_shutdown import Termination, interrupted_query

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"
PRICES = load_prices(None)


def cells() -> list[Any]:
    plan = load_plan(
        EXAMPLES / "inventory.toml", [EXAMPLES / "matrix-nvidia.toml", EXAMPLES / "matrix-amd.toml"], PRICES
    )
    return plan.cells_of("gpu-nv-01")


def ok_result(
    run_id: str, status: str = "ok", n: int = 20, errors: int = 0, warning: str | None = None
) -> SimpleNamespace:
    runs = pa.table({"run_id": [run_id], "status": [status], "n": [n], "errors": [errors]})
    rows = [SimpleNamespace(run_id=run_id, status=RunStatus(status), identity_warning=warning)]
    return SimpleNamespace(run_ids=[run_id], summary=None, run_rows=runs, runs=rows)


@pytest.mark.parametrize(
    ("status", "errors", "code"),
    [
        ("ok", 0, ExitCode.ok),
        ("partial", 1, ExitCode.ok),
        ("partial", 2, ExitCode.partial),
        ("partial", 20, ExitCode.failed),
        ("interrupted", 0, ExitCode.partial),
    ],
)
def test_cells_carry_the_exit_status_their_runs_call_for(
    tmp_path: Path, status: str, errors: int, code: ExitCode
) -> None:
    def run(*args: Any, **kwargs: Any) -> Any:
        return ok_result("r1", status, 20, errors)

    (result,) = run_cells(cells(), run, PRICES, tmp_path, tmp_path, "night1", attempts=1, partial_threshold=0.05)
    assert result.exit_code is code


def test_identity_warnings_of_a_cell_reach_the_night_summary(tmp_path: Path) -> None:
    warning = "declared and detected hardware differ: GPU count declared 1, detected 8"

    def run(*args: Any, **kwargs: Any) -> Any:
        return ok_result("r1", warning=warning)

    (result,) = run_cells(cells(), run, PRICES, tmp_path, tmp_path, "night1", attempts=1)
    assert result.warnings == (warning,)
    assert f"- warning: host gpu-nv-01: {warning}" in nightly_markdown("night1", [result])


def test_a_signal_stops_the_night_instead_of_failing_a_cell(tmp_path: Path) -> None:
    def stopped(*args: Any, **kwargs: Any) -> Any:
        raise Interrupted("SIGTERM: stopped", ExitCode.terminated)

    with pytest.raises(Interrupted):
        run_cells(cells() * 2, stopped, PRICES, tmp_path, tmp_path, "night1", attempts=2, backoff_s=0)
    assert not list(tmp_path.rglob("*.parquet"))  # no failed-cell rows for an interruption


def test_a_signal_that_broke_off_a_query_stops_the_night_with_its_own_exception(tmp_path: Path) -> None:
    """Prefect cancels a worker's run with SIGTERM, whose handler raises where the main thread is; in a DuckDB query
    that became "Query interrupted", the cell was stored as failed and the host ran its next cell."""
    calls: list[str] = []

    def queried(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["cell"])
        raise interrupted_query()

    with pytest.raises(Termination):
        run_cells(cells() * 2, queried, PRICES, tmp_path, tmp_path, "night1", attempts=2, backoff_s=0)
    assert len(calls) == 1  # neither retried nor the next cell
    assert not list(tmp_path.rglob("*.parquet"))  # no failed-cell row: the signal's owner says what happened


def test_io_failure_is_retried_then_succeeds(tmp_path: Path) -> None:
    calls: list[str] = []

    def flaky(
        config: Any, prices: Any, store: Path, host: str, cache: Path, batch_id: str, cell: str, summarise: bool
    ) -> Any:
        calls.append(host)
        assert cell.startswith("gpu-nv-01/")
        assert summarise is False  # a night's cells do not summarise one by one: the night publishes one summary
        if len(calls) == 1:
            raise EngineError("cannot reach the daemon") from httpx.ConnectError("refused")
        return ok_result("r1")

    (result,) = run_cells(cells(), flaky, PRICES, tmp_path, tmp_path, "night1", attempts=2, backoff_s=0)
    assert result.status == "ok" and result.attempts == 2 and result.run_ids == ["r1"] and calls == ["gpu-nv-01"] * 2


def test_other_failures_are_final_and_stored(tmp_path: Path) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ConfigError("model not pulled")

    (result,) = run_cells(cells(), broken, PRICES, tmp_path, tmp_path, "night1", attempts=3, backoff_s=0)
    assert result.status == "failed" and result.attempts == 1 and result.error == "ConfigError: model not pulled"
    con = connect(tmp_path, PRICES, needs={"runs"})
    rows = con.sql("select host, batch_id, status, error, hardware_key, cell from runs").to_arrow_table().to_pylist()
    assert rows == [
        {
            "host": "gpu-nv-01",
            "batch_id": "night1",
            "status": "failed",
            "error": "ConfigError: model not pulled",
            "hardware_key": "nvidia-h200-sxm",
            "cell": result.cell,
        }
    ]
    assert "0 of 1 cells succeeded" in nightly_markdown("night1", [result])


def test_is_io_error_follows_the_cause_chain() -> None:
    try:
        try:
            raise ConnectionRefusedError(111, "refused")
        except OSError as inner:
            raise EngineError("docker daemon unreachable") from inner
    except EngineError as outer:
        assert is_io_error(outer)
    assert not is_io_error(ConfigError("bad"))
    request = httpx.Request("POST", "http://127.0.0.1:4200/api/task_runs/")
    busy = httpx.HTTPStatusError("503", request=request, response=httpx.Response(503, request=request))
    assert is_io_error(busy)
    refused = httpx.HTTPStatusError("422", request=request, response=httpx.Response(422, request=request))
    assert not is_io_error(refused)
