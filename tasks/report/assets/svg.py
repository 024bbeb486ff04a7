"""Inline SVG charts drawn in Python: line (with error bars and marked points), ECDF, horizontal bars, scatter.

Every chart is one ``<svg class="chart">`` string with no external reference. Data marks carry the class
``mark`` and a ``<title>`` (the browser's tooltip); elements of one series share ``data-series`` so the page's
legend can hide and show them. Numbers are formatted here for display only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

__all__ = [
    "PALETTE",
    "Bar",
    "Line",
    "Mark",
    "bar_chart",
    "ecdf_chart",
    "legend",
    "line_chart",
    "scatter_chart",
    "series_slug",
]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
_W, _H = 640, 340
_LEFT, _RIGHT, _TOP, _BOTTOM = 68, 18, 14, 50


@dataclass(frozen=True)
class Mark:
    """One point drawn as a circle (scatter points, flagged changes)."""

    x: float
    y: float
    title: str
    color: str = "#333"
    series: str = ""
    label: str = ""  # short text next to the point
    ring: bool = False  # hollow, larger: a highlighted point


@dataclass(frozen=True)
class Line:
    """A series of (x, y) points, optionally with vertical error bars (x, lo, hi) and marked points."""

    label: str
    color: str
    points: Sequence[tuple[float, float]]
    dash: str | None = None
    errors: Sequence[tuple[float, float, float]] = ()
    marks: Sequence[Mark] = ()
    step: bool = False  # draw as a step function (ECDF)
    dots: bool = True


@dataclass(frozen=True)
class Bar:
    """One horizontal bar with an optional interval [lo, hi]."""

    label: str
    value: float
    color: str
    lo: float | None = None
    hi: float | None = None
    title: str = ""
    hollow: bool = False  # an estimate rather than a measurement
    series: str = ""
    note: str = ""  # text right of the bar
    group: str = ""  # bars of one group follow a header row with this text


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "series"


def series_slug(label: str) -> str:
    """The ``data-series`` value of a series drawn with this label (legends and the page's filter match on it)."""
    return _slug(label)


def _num(value: float) -> str:
    """A tick or value label: 3 significant digits, thousands separated."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return f"{value:.2g}"


def _nice_step(span: float, count: int) -> float:
    raw = span / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    return float(next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw))


# mantissas of log-axis ticks, sparsest first: the first set that gives at least _MIN_LOG_TICKS ticks is used
_LOG_MANTISSAS = (
    (1.0,),
    (1.0, 2.0, 5.0),
    (1.0, 2.0, 3.0, 5.0, 7.0),
    (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0),
)
_MIN_LOG_TICKS, _MAX_LOG_TICKS = 4, 12


def _log_ticks(lo: float, hi: float) -> tuple[float, ...]:
    """Readable ticks for a log axis over [lo, hi]: decades, then 1-2-5, then finer mantissas until there are at
    least four (at most twelve); over a range too narrow for that, evenly spaced round values."""
    low, high = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    ticks: tuple[float, ...] = ()
    for mantissas in _LOG_MANTISSAS:
        found = tuple(
            float(f"{m * 10.0**e:.6g}") for e in range(low, high + 1) for m in mantissas if lo <= m * 10.0**e <= hi
        )
        if len(found) > _MAX_LOG_TICKS and ticks:
            break
        ticks = found
        if len(ticks) >= _MIN_LOG_TICKS:
            return ticks
    step = _nice_step(hi - lo, _MIN_LOG_TICKS)
    first = math.ceil(lo / step) * step
    even = tuple(float(f"{first + i * step:.6g}") for i in range(int((hi - first) / step) + 1))
    return even if len(even) > len(ticks) else ticks


@dataclass(frozen=True)
class _Scale:
    lo: float
    hi: float
    start: float  # pixel of lo
    end: float  # pixel of hi
    log: bool = False
    ticks: tuple[float, ...] = field(default_factory=tuple)

    def __call__(self, value: float) -> float:
        if self.log:
            t = (math.log10(value) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        else:
            t = (value - self.lo) / (self.hi - self.lo)
        return self.start + t * (self.end - self.start)


def _scale(values: Sequence[float], start: float, end: float, log: bool = False, zero: bool = False) -> _Scale:
    finite = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if log:
        lo, hi = lo / 1.25, (hi if hi > lo else lo * 10) * 1.25
        return _Scale(lo, hi, start, end, True, _log_ticks(lo, hi))
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:  # one value: an axis around it; a lone 0 from 0 to 1, not from -1
        lo, hi = (0.0, 1.0) if lo == 0 else (lo - 1, hi + 1)
    step = _nice_step(hi - lo, 5)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    ticks = tuple(lo + i * step for i in range(round((hi - lo) / step) + 1))
    return _Scale(lo, hi, start, end, False, ticks)


def _frame(x: _Scale, y: _Scale, x_label: str, y_label: str, x_ticks: Sequence[tuple[float, str]] | None) -> list[str]:
    """Grid, ticks and axis labels."""
    parts = [
        f'<rect x="{_LEFT}" y="{_TOP}" width="{_W - _LEFT - _RIGHT}" height="{_H - _TOP - _BOTTOM}" class="plot-area"/>'
    ]
    for t in y.ticks:
        py = y(t)
        parts.append(f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{py:.1f}" y2="{py:.1f}" class="grid"/>')
        parts.append(f'<text x="{_LEFT - 6}" y="{py + 4:.1f}" class="tick" text-anchor="end">{_num(t)}</text>')
    for t, text in x_ticks if x_ticks is not None else [(t, _num(t)) for t in x.ticks]:
        px = x(t)
        parts.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{_TOP}" y2="{_H - _BOTTOM}" class="grid"/>')
        parts.append(
            f'<text x="{px:.1f}" y="{_H - _BOTTOM + 16}" class="tick" text-anchor="middle">{escape(text)}</text>'
        )
    parts.append(
        f'<text x="{(_LEFT + _W - _RIGHT) / 2}" y="{_H - 8}" class="axis-label" text-anchor="middle">'
        f"{escape(x_label)}</text>"
    )
    parts.append(
        f'<text transform="translate(14,{(_TOP + _H - _BOTTOM) / 2}) rotate(-90)" class="axis-label" '
        f'text-anchor="middle">{escape(y_label)}</text>'
    )
    return parts


def _svg(kind: str, title: str, parts: list[str], marks: int, height: int = _H) -> str:
    return (
        f'<svg class="chart" data-kind="{kind}" data-marks="{marks}" viewBox="0 0 {_W} {height}" '
        f'width="{_W}" height="{height}" role="img" aria-label="{escape(title)}" '
        f'xmlns="http://www.w3.org/2000/svg">' + "".join(parts) + "</svg>"
    )


def _mark(m: Mark, x: _Scale, y: _Scale) -> str:
    px, py = x(m.x), y(m.y)
    radius, style = (7, 'fill="none" stroke-width="2.5"') if m.ring else (4, f'fill="{m.color}"')
    anchor, dx = ("end", -7) if px > _W - _RIGHT - 60 else ("start", 7)
    label = (
        f'<text x="{px + dx:.1f}" y="{py - 7:.1f}" class="point-label" text-anchor="{anchor}">{escape(m.label)}</text>'
        if m.label
        else ""
    )
    return (
        f'<g data-series="{_slug(m.series)}"><circle class="mark" cx="{px:.1f}" cy="{py:.1f}" r="{radius}" '
        f'stroke="{m.color}" {style}><title>{escape(m.title)}</title></circle>{label}</g>'
    )


def _path(points: Sequence[tuple[float, float]], x: _Scale, y: _Scale, step: bool) -> str:
    coords: list[str] = []
    for i, (vx, vy) in enumerate(points):
        if step and i:
            coords.append(f"{x(vx):.1f},{y(points[i - 1][1]):.1f}")
        coords.append(f"{x(vx):.1f},{y(vy):.1f}")
    return "M" + " L".join(coords)


def _line(line: Line, x: _Scale, y: _Scale) -> tuple[str, int]:
    series = _slug(line.label)
    dash = f' stroke-dasharray="{line.dash}"' if line.dash else ""
    parts = [f'<g data-series="{series}">']
    if line.points:
        d = _path(line.points, x, y, line.step)
        parts.append(
            f'<path class="mark series-line" d="{d}" fill="none" stroke="{line.color}" stroke-width="2"'
            f"{dash}><title>{escape(line.label)}</title></path>"
        )
    for vx, lo, hi in line.errors:
        parts.append(
            f'<line x1="{x(vx):.1f}" x2="{x(vx):.1f}" y1="{y(lo):.1f}" y2="{y(hi):.1f}" '
            f'stroke="{line.color}" stroke-width="1.5"/>'
        )
    if line.dots and not line.step:
        for vx, vy in line.points:
            parts.append(
                f'<circle cx="{x(vx):.1f}" cy="{y(vy):.1f}" r="3" fill="{line.color}">'
                f"<title>{escape(line.label)}: {_num(vx)}, {_num(vy)}</title></circle>"
            )
    parts += [_mark(m, x, y) for m in line.marks]
    parts.append("</g>")
    return "".join(parts), len(line.points) + len(line.marks)


def line_chart(
    lines: Sequence[Line],
    x_label: str,
    y_label: str,
    *,
    title: str = "",
    log_x: bool = False,
    log_y: bool = False,
    zero_y: bool = True,
    y_domain: tuple[float, float] | None = None,
    x_ticks: Sequence[tuple[float, str]] | None = None,
) -> str:
    """Lines over a shared x axis; ``x_ticks`` replaces numeric x ticks with labels (dates...)."""
    xs = [p[0] for line in lines for p in line.points]
    ys = [p[1] for line in lines for p in line.points] + [e for line in lines for _, *lh in line.errors for e in lh]
    x = _scale(xs, _LEFT, _W - _RIGHT, log=log_x)
    y = _scale(list(y_domain) if y_domain else ys, _H - _BOTTOM, _TOP, log=log_y, zero=zero_y and not log_y)
    parts = _frame(x, y, x_label, y_label, x_ticks)
    marks = 0
    for line in lines:
        drawn, count = _line(line, x, y)
        parts.append(drawn)
        marks += count
    return _svg("line", title or y_label, parts, marks)


def ecdf_chart(lines: Sequence[Line], x_label: str, *, title: str = "", log_x: bool = True) -> str:
    """Empirical distribution functions: each line's points are (value, cumulative fraction) steps."""
    stepped = [Line(ln.label, ln.color, ln.points, ln.dash, step=True, dots=False) for ln in lines]
    return line_chart(stepped, x_label, "fraction of requests", title=title, log_x=log_x, y_domain=(0.0, 1.0))


def bar_chart(bars: Sequence[Bar], x_label: str, *, title: str = "", label_width: int = 250) -> str:
    """Horizontal bars, one row each (a header row before each new ``group``), with interval whiskers;
    hollow bars are estimates."""
    row = 24
    rows: list[Bar | str] = []
    for b in bars:
        if b.group and (not rows or b.group != _group_of(rows)):
            rows.append(b.group)
        rows.append(b)
    height = _TOP + row * max(len(rows), 1) + _BOTTOM
    values = [v for b in bars for v in (b.value, b.hi) if v is not None]
    x = _scale(values, label_width, _W - _RIGHT - 130, zero=True)
    parts = []
    for t in x.ticks:
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{_TOP}" y2="{height - _BOTTOM}" class="grid"/>')
        parts.append(
            f'<text x="{x(t):.1f}" y="{height - _BOTTOM + 16}" class="tick" text-anchor="middle">{_num(t)}</text>'
        )
    parts.append(
        f'<text x="{(label_width + _W) / 2}" y="{height - 8}" class="axis-label" text-anchor="middle">'
        f"{escape(x_label)}</text>"
    )
    for i, item in enumerate(rows):
        top = _TOP + i * row + 4
        if isinstance(item, str):
            parts.append(f'<text x="8" y="{top + 13}" class="group-label">{escape(item)}</text>')
        else:
            parts.append(_bar(item, x, top, row, label_width))
    return _svg("bar", title or x_label, parts, len(bars), height)


def _group_of(rows: Sequence[Bar | str]) -> str:
    return next(r if isinstance(r, str) else r.group for r in reversed(rows))


def _bar(b: Bar, x: _Scale, top: float, row: int, label_width: int) -> str:
    fill = f'fill="none" stroke="{b.color}" stroke-dasharray="4 2"' if b.hollow else f'fill="{b.color}"'
    parts = [
        f'<g data-series="{_slug(b.series or b.label)}">',
        f'<text x="{label_width - 6}" y="{top + 12}" class="tick" text-anchor="end">{escape(b.label)}</text>',
        f'<rect class="mark" x="{x(0):.1f}" y="{top}" width="{max(x(b.value) - x(0), 1):.1f}" '
        f'height="{row - 8}" {fill}><title>{escape(b.title or b.label)}</title></rect>',
    ]
    if b.lo is not None and b.hi is not None:
        mid = top + (row - 8) / 2
        parts.append(
            f'<path d="M{x(b.lo):.1f},{mid - 5} v10 M{x(b.lo):.1f},{mid} H{x(b.hi):.1f} '
            f'M{x(b.hi):.1f},{mid - 5} v10" stroke="#222" stroke-width="1.5" fill="none"/>'
        )
    right = max(v for v in (b.value, b.hi) if v is not None)
    parts.append(
        f'<text x="{x(right) + 6:.1f}" y="{top + 12}" class="point-label">{escape(b.note or _num(b.value))}</text></g>'
    )
    return "".join(parts)


def scatter_chart(
    marks: Sequence[Mark],
    x_label: str,
    y_label: str,
    *,
    frontier: Sequence[tuple[float, float]] = (),
    title: str = "",
    log_x: bool = False,
    log_y: bool = False,
) -> str:
    """Points, and optionally a frontier drawn as a step line through the given points."""
    x = _scale([m.x for m in marks], _LEFT, _W - _RIGHT, log=log_x)
    y = _scale([m.y for m in marks], _H - _BOTTOM, _TOP, log=log_y, zero=not log_y)
    parts = _frame(x, y, x_label, y_label, None)
    if len(frontier) > 1:
        parts.append(
            f'<path class="frontier" d="{_path(frontier, x, y, True)}" fill="none" stroke="#555" '
            'stroke-width="1.5" stroke-dasharray="5 3"><title>Pareto frontier</title></path>'
        )
    parts += [_mark(m, x, y) for m in marks]
    return _svg("scatter", title or y_label, parts, len(marks))


def legend(items: Sequence[tuple[str, str, str | None]]) -> str:
    """HTML legend (label, colour, dash); a click on an entry hides or shows that series in the figure."""
    entries = []
    for label, color, dash in items:
        stroke = f' stroke-dasharray="{dash}"' if dash else ""
        swatch = (
            f'<svg width="26" height="10" aria-hidden="true"><line x1="0" x2="26" y1="5" y2="5" '
            f'stroke="{color}" stroke-width="3"{stroke}/></svg>'
        )
        entries.append(
            f'<button type="button" class="legend-item" data-series="{_slug(label)}">{swatch}{escape(label)}</button>'
        )
    return '<div class="legend">' + "".join(entries) + "</div>"
