"""The report's Operations section: availability per platform (view availability) and the changes of each host's
environment with what followed them (view environment_changes, tasks/analysis/operations.py)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from tcobench.tasks.analysis.operations import EnvironmentChange, change_words
from tcobench.tasks.report.assets.context import fmt, table
from tcobench.tasks.store.rows import AvailabilityRow

__all__ = ["operations_section"]

_HEADERS = [
    "platform",
    "nights",
    "served",
    "availability",
    "by nights (95% CI)",
    "platform failures",
    "MTBPF nights",
    "mean recovery h",
    "failed cells: platform / engine / harness / infra / unknown",
]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _availability_table(rows: Sequence[AvailabilityRow]) -> str:
    cells = [
        [
            escape(r["platform"]),
            str(r["nights_scheduled"]),
            str(r["nights_served"]),
            _pct(r["availability"]),
            f"{_pct(r['night_availability'])} ({_pct(r['night_availability_ci_low'])}-"
            f"{_pct(r['night_availability_ci_high'])})",
            str(r["platform_failures"]),
            fmt(r["mtbpf_nights"], 1),
            fmt(r["recovery_hours_mean"], 1),
            f"{r['cells_failed_platform']} / {r['cells_failed_engine']} / {r['cells_failed_harness']} / "
            f"{r['cells_failed_infrastructure']} / {r['cells_failed_unknown']} of {r['cells']}",
        ]
        for r in rows
        if r["scope"] == "platform"
    ]
    return table(_HEADERS, cells, numeric=(1, 2, 3, 5, 6, 7))


def operations_section(availability: Sequence[AvailabilityRow], changes: Sequence[EnvironmentChange]) -> str:
    """Availability per platform over every night, then each environment change, oldest first per host."""
    html = ['<h2 id="operations">Operations</h2>']
    if availability:
        html += [
            "<p>Availability over the nightly cells: 1 - downtime / scheduled host hours (cells failed with class "
            "platform); by nights: 1 - platform failure nights / nights, with a 95% Wilson interval.</p>",
            _availability_table(availability),
        ]
    else:
        html.append("<p>No nightly cells: no availability.</p>")
    if changes:
        items = "".join(f"<li>{escape(change_words(c))}</li>" for c in changes)
        html.append(f"<p>Environment changes, each with what followed it:</p><ul>{items}</ul>")
    else:
        html.append("<p>No change of driver, runtime, kernel, engine version or image.</p>")
    return "".join(html)
