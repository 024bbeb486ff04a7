"""The report's Operations section: availability per platform (view availability), the changes of each host's
environment with what followed them (view environment_changes, tasks/analysis/operations.py), and each platform's
assumed adaptation days beside its measured ones (view measured_adaptation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from tcobench.tasks.analysis.operations import EnvironmentChange, change_words
from tcobench.tasks.report.assets.context import fmt, table
from tcobench.tasks.store.rows import AvailabilityRow, MeasuredAdaptationRow

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


_ADAPTATION_HEADERS = ["platform", "assumed days", "measured days", "hosts adapted", "failed attempts"]


def _adaptation(rows: Sequence[MeasuredAdaptationRow], assumed: Mapping[str, float], used: str) -> str:
    """The price table's adaptation_days beside each platform's measured days, for the platforms with both."""
    measured = {r["platform"]: r for r in rows if r["scope"] == "platform"}
    cells = [
        [
            escape(key),
            fmt(days, 2),
            fmt(measured[key]["measured_days"], 2),
            f"{measured[key]['hosts_adapted']} of {measured[key]['hosts']}",
            str(measured[key]["failed_attempts"]),
        ]
        for key, days in sorted(assumed.items())
        if key in measured
    ]
    if not cells:
        return ""
    return (
        f"<p>Adaptation days, assumed (price table) and measured (a host's first nightly cell to its first ok run); "
        f"the cost figures use the {escape(used)} days (<code>--adaptation</code>).</p>"
        + table(_ADAPTATION_HEADERS, cells, numeric=(1, 2, 4))
    )


def operations_section(
    availability: Sequence[AvailabilityRow],
    changes: Sequence[EnvironmentChange],
    adaptation: tuple[Sequence[MeasuredAdaptationRow], Mapping[str, float], str] = ((), {}, "assumed"),
) -> str:
    """Availability per platform over every night, then each environment change, oldest first per host, then the
    adaptation days (``adaptation``: measured_adaptation's rows, the price table's days per hardware key, and which
    the figures use)."""
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
        html.append("<p>No change of driver, runtime, firmware, kernel, engine version or image.</p>")
    html.append(_adaptation(*adaptation))
    return "".join(html)
