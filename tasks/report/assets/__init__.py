"""Building blocks of the HTML report: inline SVG charts drawn in Python, the page's CSS and script, and the
report's sections (tables.py: headline, record card, trend, provenance; figures.py: the charts)."""

from __future__ import annotations

from tcobench.tasks.report.assets.context import (
    Platform,
    ReportContext,
    ReportRun,
    group_platforms,
    query_rows,
    register_platforms,
)
from tcobench.tasks.report.assets.engine_load import engine_load_section
from tcobench.tasks.report.assets.figures import (
    cost_figure,
    distribution_figure,
    energy_figure,
    pareto_figure,
    targets_section,
    throughput_figure,
)
from tcobench.tasks.report.assets.operations import operations_section
from tcobench.tasks.report.assets.page import PAGE_CSS, PAGE_SCRIPT, filter_bar, page
from tcobench.tasks.report.assets.plan_section import plan_section
from tcobench.tasks.report.assets.svg import (
    PALETTE,
    Bar,
    Line,
    Mark,
    bar_chart,
    ecdf_chart,
    legend,
    line_chart,
    scatter_chart,
    series_slug,
)
from tcobench.tasks.report.assets.tables import (
    headline_section,
    provenance_section,
    record_card_section,
    trend_label,
    trend_section,
)

__all__ = [
    "PAGE_CSS",
    "PAGE_SCRIPT",
    "PALETTE",
    "Bar",
    "Line",
    "Mark",
    "Platform",
    "ReportContext",
    "ReportRun",
    "bar_chart",
    "cost_figure",
    "distribution_figure",
    "ecdf_chart",
    "energy_figure",
    "engine_load_section",
    "filter_bar",
    "headline_section",
    "legend",
    "line_chart",
    "operations_section",
    "page",
    "pareto_figure",
    "plan_section",
    "group_platforms",
    "provenance_section",
    "record_card_section",
    "query_rows",
    "register_platforms",
    "scatter_chart",
    "series_slug",
    "targets_section",
    "throughput_figure",
    "trend_label",
    "trend_section",
]
