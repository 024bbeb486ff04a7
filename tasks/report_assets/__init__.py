"""Building blocks of the HTML report: inline SVG charts drawn in Python, and the page's CSS and script."""

from __future__ import annotations

from .page import PAGE_CSS, PAGE_SCRIPT, page
from .svg import (
    PALETTE,
    Bar,
    Line,
    Mark,
    bar_chart,
    ecdf_chart,
    legend,
    line_chart,
    scatter_chart,
)

__all__ = [
    "PAGE_CSS",
    "PAGE_SCRIPT",
    "PALETTE",
    "Bar",
    "Line",
    "Mark",
    "bar_chart",
    "ecdf_chart",
    "legend",
    "line_chart",
    "page",
    "scatter_chart",
]
