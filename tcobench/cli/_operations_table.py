"""`tcobench history --availability` and `--changes`: the operations tables (tasks/analysis/operations.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.markup import escape

from tcobench.cli._common import out
from tcobench.cli._fit import Col, number, print_table

if TYPE_CHECKING:
    from tcobench.tasks.analysis.operations import EnvironmentChange, Operations
    from tcobench.tasks.store.rows import AvailabilityRow, MeasuredAdaptationRow

__all__ = ["print_adaptation", "print_availability", "print_changes", "print_side_operations"]

_AVAILABILITY_COLS = [
    Col("platform", "left"),
    Col("host", "left"),
    Col("nights"),
    Col("served", drop=3),
    Col("availability"),
    Col("by nights (95% CI)", "left"),
    Col("platform failures"),
    Col("MTBPF nights", drop=2),
    Col("recovery h", drop=2),
    Col("down host-h", drop=4),
    Col("failed cells: platform/engine/harness/infra/unknown", "left", wrap=True, drop=1),
]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def print_availability(rows: Sequence[AvailabilityRow], window: str) -> None:
    """One row per platform then per host (view availability's figures over ``window``)."""
    table = [
        [
            escape(r["platform"]),
            escape(r["host"] or "(all)"),
            str(r["nights_scheduled"]),
            str(r["nights_served"]),
            _pct(r["availability"]),
            f"{_pct(r['night_availability'])} "
            f"({_pct(r['night_availability_ci_low'])}-{_pct(r['night_availability_ci_high'])})",
            f"{r['platform_failures']} ({r['unrecovered']} unrecovered)"
            if r["unrecovered"]
            else str(r["platform_failures"]),
            number(r["mtbpf_nights"]),
            number(r["recovery_hours_mean"]),
            number(r["downtime_host_hours"]),
            f"{r['cells_failed_platform']}/{r['cells_failed_engine']}/{r['cells_failed_harness']}/"
            f"{r['cells_failed_infrastructure']}/{r['cells_failed_unknown']} of {r['cells']}",
        ]
        for r in rows
    ]
    print_table(f"Availability per platform and per host, {window}", _AVAILABILITY_COLS, table)
    out.print(
        "availability: 1 - downtime / scheduled host hours (cells failed with class platform); by nights: 1 - platform "
        "failure nights / nights, 95% Wilson interval (docs/cost-model.md#availability).",
        style="dim",
        highlight=False,
    )


def print_changes(changes: Sequence[EnvironmentChange]) -> None:
    """One line per change of a host's environment, oldest first per host."""
    from tcobench.tasks.analysis.operations import change_words

    out.print(f"[bold]{len(changes)} environment change(s)[/], each with what followed it:", highlight=False)
    for c in changes:
        out.print("  " + escape(change_words(c)), highlight=False)


_ADAPTATION_COLS = [
    Col("platform", "left"),
    Col("assumed days"),
    Col("measured days"),
    Col("hosts adapted"),
    Col("failed attempts"),
]


def print_adaptation(rows: Sequence[MeasuredAdaptationRow], assumed: dict[str, float], used: str) -> None:
    """Each platform's adaptation_days assumption beside its measured days (view measured_adaptation)."""
    measured = {r["platform"]: r for r in rows if r["scope"] == "platform"}
    table = [
        [
            escape(key),
            number(days),
            number(measured[key]["measured_days"]) if key in measured else "-",
            f"{measured[key]['hosts_adapted']} of {measured[key]['hosts']}" if key in measured else "-",
            str(measured[key]["failed_attempts"]) if key in measured else "-",
        ]
        for key, days in sorted(assumed.items())
        if key in measured
    ]
    if not table:
        if used == "measured":
            out.print(
                "Adaptation: no platform of the price table has a nightly cell to measure it: the assumed days are "
                "used.",
                highlight=False,
            )
        return
    print_table(
        f"Adaptation days, assumed (price table) and measured (first cell to first ok run); used: {used}",
        _ADAPTATION_COLS,
        table,
    )


def print_side_operations(hosts: Sequence[str], ops: Operations) -> None:
    """compare's operations lines: the availability of the compared hosts and of their platforms, and the changes of
    those hosts' environment with the failures that followed; nothing where the runs are not nightly cells."""
    seen = set(hosts)
    platforms = {r["platform"] for r in ops.availability if r["host"] in seen}
    rows = [r for r in ops.availability if r["platform"] in platforms and (r["host"] is None or r["host"] in seen)]
    if rows:
        print_availability(rows, "every night (the compared hosts and their platforms)")
    changes = [c for c in ops.changes if c.row["host"] in seen]
    if changes:
        print_changes(changes)
