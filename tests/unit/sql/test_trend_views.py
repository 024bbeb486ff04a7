"""Given / expect tests of view availability (tcobench/sql/trend) over a small hand-built history."""

from __future__ import annotations

import math

from tcobench.schemas import FailureClass, RunRecord, RunStatus
from tests.unit.factories import T0_NS, make_run
from tests.unit.sql.given_expect import expect_rows, given, run

H = 3_600_000_000_000  # ns per hour
DAY = 24 * H
Z = 1.959963984540054  # the 95 % normal quantile


def _cell(
    host: str,
    cell: str,
    night: int,
    hours: float,
    status: RunStatus = RunStatus.ok,
    failure: FailureClass | None = None,
    platform: str = "hw1",
    levels: int = 1,
) -> list[RunRecord]:
    """A cell night of ``levels`` runs back to back, ``hours`` in all, starting at night ``night``'s start (+ 1 h for
    cell y, so a night starts with its cell x)."""
    start = T0_NS + night * DAY + (H if cell.endswith("/y") else 0)
    step = int(hours * H) // levels
    return [
        make_run(
            run_id=f"{cell}-{night}-{k}",
            batch_id=f"n{night}",
            host=host,
            cell=cell,
            hardware_key=platform,
            started_ns=start + k * step,
            finished_ns=start + (k + 1) * step,
            status=status,
            error=None if status is RunStatus.ok else "boom",
            failure_class=failure,
        )
        for k in range(levels)
    ]


P, INFRA, E = FailureClass.platform, FailureClass.infrastructure, FailureClass.engine
FAILED, PARTIAL = RunStatus.failed, RunStatus.partial


def _history() -> list[RunRecord]:
    """Host a (hw1): nights 1 and 4 ok; night 2 both cells fail (platform); night 3 cell x fails (platform) and y
    (infrastructure). a/x ok nights last 1 h (two levels) and 3 h: usual 2 h; a/y 2 h. Host b (hw1): night 1 partial
    (engine), night 2 failed (platform), never ok: its own durations count. Host c (hw2): one failed cell night stored
    before failure classes (no class). A run outside a nightly (no cell) does not count."""
    a = [
        *_cell("a", "a/x", 1, 1.0, levels=2),
        *_cell("a", "a/y", 1, 2.0),
        *_cell("a", "a/x", 2, 0.1, FAILED, P),
        *_cell("a", "a/y", 2, 0.05, FAILED, P),
        *_cell("a", "a/x", 3, 0.1, FAILED, P),
        *_cell("a", "a/y", 3, 0.2, FAILED, INFRA),
        *_cell("a", "a/x", 4, 3.0),
        *_cell("a", "a/y", 4, 2.0),
    ]
    b = [*_cell("b", "b/x", 1, 1.0, PARTIAL, E), *_cell("b", "b/x", 2, 0.5, FAILED, P)]
    c = _cell("c", "c/x", 1, 1.0, FAILED, None, platform="hw2")
    return [*a, *b, *c, make_run(run_id="adhoc", host="a", hardware_key="hw1", status=FAILED, error="x")]


def _wilson(p: float, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval, written out here apart from the view's SQL."""
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2))
    return centre - half, centre + half


def test_availability_per_host_and_per_platform() -> None:
    rows = run("availability", {"runs": given("runs", *_history())}, "SELECT * FROM availability ORDER BY ALL")
    a_low, a_high = _wilson(0.5, 4)
    b_low, b_high = _wilson(0.5, 2)
    p_low, p_high = _wilson(0.5, 6)
    c_low, c_high = _wilson(1.0, 1)
    zero = {"cells_failed_harness": 0}
    expect_rows(
        rows,
        [
            {
                "scope": "host",
                "host": "a",
                "platform": "hw1",
                "nights_scheduled": 4,
                "nights_served": 2,
                "cells": 8,
                "cells_failed_platform": 3,
                "cells_failed_engine": 0,
                "cells_failed_infrastructure": 1,
                "cells_failed_unknown": 0,
                "platform_failure_nights": 2,
                "platform_failures": 1,
                "mtbpf_nights": 4.0,
                "recoveries": 1,
                "recovery_hours_mean": 48.0,
                "unrecovered": 0,
                "scheduled_host_hours": 16.0,
                "downtime_host_hours": 6.0,
                "availability": 1 - 6 / 16,
                "night_availability": 0.5,
                "night_availability_ci_low": a_low,
                "night_availability_ci_high": a_high,
                **zero,
            },
            {
                "scope": "host",
                "host": "b",
                "platform": "hw1",
                "nights_scheduled": 2,
                "nights_served": 1,
                "cells": 2,
                "cells_failed_platform": 1,
                "cells_failed_engine": 1,
                "cells_failed_infrastructure": 0,
                "cells_failed_unknown": 0,
                "platform_failure_nights": 1,
                "platform_failures": 1,
                "mtbpf_nights": 2.0,
                "recoveries": 0,
                "recovery_hours_mean": None,
                "unrecovered": 1,
                "scheduled_host_hours": 1.5,
                "downtime_host_hours": 0.5,
                "availability": 1 - 0.5 / 1.5,
                "night_availability": 0.5,
                "night_availability_ci_low": b_low,
                "night_availability_ci_high": b_high,
                **zero,
            },
            {
                "scope": "host",
                "host": "c",
                "platform": "hw2",
                "nights_scheduled": 1,
                "nights_served": 0,
                "cells": 1,
                "cells_failed_platform": 0,
                "cells_failed_unknown": 1,
                "platform_failure_nights": 0,
                "platform_failures": 0,
                "mtbpf_nights": None,
                "recoveries": 0,
                "recovery_hours_mean": None,
                "unrecovered": 0,
                "downtime_host_hours": 0.0,
                "availability": 1.0,
                "night_availability": 1.0,
                "night_availability_ci_low": c_low,
                "night_availability_ci_high": c_high,
            },
            {
                "scope": "platform",
                "host": None,
                "platform": "hw1",
                "nights_scheduled": 6,
                "nights_served": 3,
                "cells": 10,
                "cells_failed_platform": 4,
                "cells_failed_engine": 1,
                "cells_failed_infrastructure": 1,
                "cells_failed_unknown": 0,
                "platform_failure_nights": 3,
                "platform_failures": 2,
                "mtbpf_nights": 3.0,
                "recoveries": 1,
                "recovery_hours_mean": 48.0,
                "unrecovered": 1,
                "scheduled_host_hours": 17.5,
                "downtime_host_hours": 6.5,
                "availability": 1 - 6.5 / 17.5,
                "night_availability": 0.5,
                "night_availability_ci_low": p_low,
                "night_availability_ci_high": p_high,
                **zero,
            },
            {"scope": "platform", "host": None, "platform": "hw2", "nights_scheduled": 1, "cells_failed_unknown": 1},
        ],
    )


def test_a_history_without_nightly_cells_has_no_availability_rows() -> None:
    rows = run("availability", {"runs": given("runs", make_run(run_id="adhoc"))})
    assert rows == []
