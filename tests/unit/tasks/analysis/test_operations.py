"""tasks/analysis/operations.py over a stored simulated history (tests/unit/operations_history.py): the windowed
availability, the change lines, and the measured adaptation bound into the one TCO formula."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import RequestRecord
from tcobench.tasks.analysis.history import CHANGES_OF_RUNS_VIEWS, HISTORY_VIEWS, detect_changes
from tcobench.tasks.analysis.operations import (
    adaptation_choice,
    availability,
    change_words,
    changes_of,
    environment_changes,
    measured_adaptation,
    with_measured_adaptation,
)
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect, freeze_views
from tcobench.tasks.store.store import RunRows, write_runs
from tests.unit.factories import make_request, write_fleet
from tests.unit.operations_history import history

PRICES = load_prices()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The history; amd-01's first ok run (night 2, cell x) has requests, so that it has a TCO row."""
    path = tmp_path_factory.mktemp("ops")
    rows = []
    for run in history():
        requests: tuple[RequestRecord, ...] = ()
        if run.run_id == "amd-01-x-2":
            requests = tuple(
                make_request(
                    run_id=run.run_id,
                    date=run.date,
                    host=run.host,
                    request_index=i,
                    start_ns=run.started_ns + 10**9 + i * 10**8,
                )
                for i in range(3)
            )
        rows.append(RunRows(run, requests))
    write_runs(path, rows)
    return path


def test_availability_over_a_window_and_an_empty_one(store: Path) -> None:
    every = availability(store, PRICES)
    assert [(r["scope"], r["platform"], r["host"]) for r in every] == [
        ("platform", "amd-mi300x", None),
        ("platform", "nvidia-h100-sxm", None),
        ("host", "amd-mi300x", "amd-01"),
        ("host", "amd-mi300x", "amd-02"),
        ("host", "nvidia-h100-sxm", "nv-01"),
    ]
    since = availability(store, PRICES, dt.date(2023, 11, 18))  # nights 4, 5, 6
    amd01 = next(r for r in since if r["host"] == "amd-01")
    assert (amd01["nights_scheduled"], amd01["nights_served"], amd01["platform_failure_nights"]) == (3, 2, 2)
    assert availability(store, PRICES, dt.date(2030, 1, 1)) == []


def test_change_lines_equal_the_hand_written_ones(store: Path) -> None:
    assert [change_words(c) for c in environment_changes(store, PRICES)] == [
        "amd-01: ROCm 6.2 -> 6.3 on 2023-11-18; 3 platform failures in the next 2 nights",
        "nv-01: kernel 6.1.0 -> 6.8.0 on 2023-11-17; 0 platform failures in the next 2 nights",
        "nv-01: image vllm/vllm-openai sha256:aa -> sha256:bb on 2023-11-18; 0 platform failures in the next 2 nights",
    ]


def test_change_flags_are_those_of_the_whole_history(tmp_path: Path) -> None:
    """Only the runs inside the changes' windows are tested (macro environment_change_runs): the flags are those
    that detect_changes over every series of the store gives among them."""
    write_fleet(tmp_path)  # gpu-amd-1 at concurrency 4 decodes 15% slower on the last night, after a driver update
    found = environment_changes(tmp_path, PRICES)
    # what changes_of reads, and detect_changes over the whole store
    needs = {"environment_changes", "environment_change_runs", *HISTORY_VIEWS, *CHANGES_OF_RUNS_VIEWS}
    con = connect(tmp_path, PRICES, needs=needs)
    try:
        freeze_views(con)
        whole = changes_of(con, detect_changes(con, costs=False))
    finally:
        con.close()
    assert found == whole
    assert [change_words(c) for c in found] == [
        "gpu-amd-1: driver 6.10.5 -> 6.10.5.1 on 2026-11-26; 0 platform failures in the next 1 night; "
        "decode tok/s -11% (flagged)",
        "gpu-amd-1: driver 6.10.5.1 -> 6.10.5 on 2026-11-26; 0 platform failures in the next 1 night",
    ]


def test_measured_days_replace_the_assumption_in_the_one_tco_formula(store: Path) -> None:
    measured = with_measured_adaptation(PRICES, measured_adaptation(store, PRICES))
    assert measured.hardware["amd-mi300x"].adaptation_days == 2.0  # was 7.0
    assert measured.hardware["nvidia-h100-sxm"].adaptation_days == 0.0
    assert measured.hardware["amd-mi325x"] == PRICES.hardware["amd-mi325x"]  # nothing measured: kept
    con = connect(store, measured, needs={"tco"})
    try:
        found = con.execute(
            "SELECT adaptation_days, adaptation_usd_month FROM tco WHERE run_id = 'amd-01-x-2'"
        ).fetchall()
    finally:
        con.close()
    hw = PRICES.hardware["amd-mi300x"]
    daily = PRICES.ops["default"].daily_usd
    assert found == [(2.0, pytest.approx(2.0 * daily / hw.lifetime_months, rel=1e-12))]


def test_an_unknown_adaptation_lists_the_valid_ones() -> None:
    assert adaptation_choice("measured") == "measured"
    with pytest.raises(ConfigError, match=r"^--adaptation 'guess': choose assumed or measured$"):
        adaptation_choice("guess")
