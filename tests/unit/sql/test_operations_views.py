"""Given / expect tests of views environment_changes and measured_adaptation and macro availability_since
(tcobench/sql/trend, sql/macros) over the simulated history of tests/unit/operations_history.py, against values
worked out by hand from its docstring."""

from __future__ import annotations

import datetime as dt

from tests.unit.factories import T0_NS, make_run
from tests.unit.operations_history import DAY, history
from tests.unit.sql.given_expect import expect_rows, given, run


def _at(ns: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ns / 1e9, dt.UTC).replace(tzinfo=None)


def test_environment_changes_are_each_change_with_the_failures_of_its_next_two_nights() -> None:
    rows = run("environment_changes", {"runs": given("runs", *history())})
    common = {"nights_after": 2, "nights_seen": 2}
    expect_rows(
        rows,
        [
            {
                "host": "amd-01",
                "platform": "amd-mi300x",
                "item": "ROCm",
                "before": "6.2",
                "after": "6.3",
                "changed_at": _at(T0_NS + 4 * DAY),
                "run_id": "amd-01-x-4",
                "batch_id": "n4",
                **common,
                "platform_failed_cells": 3,  # night 4: x and y; night 5: x
                "failed_cells": 3,
                "window_end": _at(T0_NS + 6 * DAY),
            },
            {
                "host": "nv-01",
                "item": "kernel",  # the client-side run's 5.15.0 is not nv-01's kernel
                "before": "6.1.0",
                "after": "6.8.0",
                "run_id": "nv-01-x-3",
                **common,
                "platform_failed_cells": 0,
                "failed_cells": 0,
                "window_end": _at(T0_NS + 5 * DAY),
            },
            {
                "host": "nv-01",
                "item": "image vllm/vllm-openai",
                "before": "sha256:aa",
                "after": "sha256:bb",
                "run_id": "nv-01-x-4",
                **common,
                "platform_failed_cells": 0,
                "failed_cells": 1,  # night 5: harness
                "window_end": _at(T0_NS + 6 * DAY),
            },
        ],
    )


def test_a_change_near_the_last_night_has_fewer_nights_and_no_window_end() -> None:
    runs = [
        make_run(run_id=f"r{n}", batch_id=f"n{n}", started_ns=T0_NS + n * DAY, driver_version=v)
        for n, v in enumerate(["1", "1", "2"])
    ]
    rows = run("environment_changes", {"runs": given("runs", *runs)})
    expect_rows(rows, [{"item": "driver", "before": "1", "after": "2", "nights_seen": 1, "window_end": None}])


def test_a_firmware_update_is_a_change_and_an_unread_firmware_neither_starts_nor_ends_one() -> None:
    runs = [
        make_run(run_id=f"r{n}", batch_id=f"n{n}", started_ns=T0_NS + n * DAY, gpu_firmware=v)
        for n, v in enumerate(["96.00.74.00.01", None, "96.00.74.00.01", "96.00.89.00.01", "96.00.89.00.01"])
    ]
    rows = run("environment_changes", {"runs": given("runs", *runs)})
    expect_rows(
        rows,
        [{"item": "firmware", "before": "96.00.74.00.01", "after": "96.00.89.00.01", "run_id": "r3", "nights_seen": 2}],
    )


def test_measured_adaptation_is_first_cell_to_first_ok_run_per_host_and_platform() -> None:
    rows = run(
        "measured_adaptation",
        {"runs": given("runs", *history())},
        "SELECT * FROM measured_adaptation ORDER BY scope DESC, platform, host NULLS FIRST",
    )
    expect_rows(
        rows,
        [
            # amd-01: 2.0 days, 4 failed runs; amd-02 never ok: 2 failed runs, left out of the mean
            {
                "scope": "platform",
                "platform": "amd-mi300x",
                "hosts": 2,
                "hosts_adapted": 1,
                "failed_attempts": 6,
                "measured_days": 2.0,
                "first_attempt": _at(T0_NS),
                "first_ok": _at(T0_NS + 2 * DAY),
            },
            {
                "scope": "platform",
                "platform": "nvidia-h100-sxm",
                "hosts": 1,
                "hosts_adapted": 1,
                "failed_attempts": 0,
                "measured_days": 0.0,
                "first_ok": _at(T0_NS),
            },
            {"scope": "host", "host": "amd-01", "failed_attempts": 4, "measured_days": 2.0},
            {
                "scope": "host",
                "host": "amd-02",
                "hosts_adapted": 0,
                "failed_attempts": 2,
                "measured_days": None,
                "first_attempt": _at(T0_NS + 5 * DAY),
                "first_ok": None,
            },
            {"scope": "host", "host": "nv-01", "failed_attempts": 0, "measured_days": 0.0},
        ],
    )


_SORTED = "SELECT * FROM availability_since($since) ORDER BY ALL"


def test_availability_since_counts_only_the_nights_from_then_on() -> None:
    runs = history()
    since = T0_NS + 4 * DAY  # nights 4, 5 and 6
    windowed = run("availability_since", {"runs": given("runs", *runs)}, _SORTED, {"since": since})
    later = [r for r in runs if r.started_ns >= since and r.batch_id != "adhoc"]
    by_hand = run("availability", {"runs": given("runs", *later)}, "SELECT * FROM availability ORDER BY ALL")
    assert windowed == by_hand and len(windowed) == 5  # 3 hosts, 2 platforms
    amd01 = next(r for r in windowed if r["host"] == "amd-01")
    assert (amd01["nights_scheduled"], amd01["cells_failed_platform"], amd01["platform_failures"]) == (3, 3, 1)


def test_availability_since_null_is_the_view_and_an_empty_window_has_no_row() -> None:
    tables = {"runs": given("runs", *history())}
    every = run("availability_since", tables, _SORTED, {"since": None})
    assert every == run("availability", tables, "SELECT * FROM availability ORDER BY ALL") and len(every) == 5
    assert run("availability_since", tables, _SORTED, {"since": T0_NS + 7 * DAY}) == []
