"""The headline at equal interactivity and its two charts (issue 30).

The sentence states the ratio at the chosen interactivity (report --interactivity), or at the middle of the
overlap of both sides' measured ranges, with its CI. Charts: tok/s per GPU against tok/s per user per side (the
levels as points, Pareto points ringed, the interpolated frontier and its bootstrap band as dashed lines), and
cost per 1M output tokens against tok/s per user along both frontiers, the crossover marked. Their series are the
headline's sides (selections, not platforms): named "side A: ...", they stay when the page's filter hides platforms.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from tcobench.tasks.analysis.compare import Comparison, FrontierComparison, FrontierSide, Level, TargetRow
from tcobench.tasks.analysis.compare.document import target_sentence
from tcobench.tasks.report.assets.context import figure
from tcobench.tasks.report.assets.svg import PALETTE, Line, Mark, legend, line_chart

__all__ = ["frontier_headline", "frontier_section"]


def _headline_target(f: FrontierComparison) -> TargetRow | None:
    """The chosen target (the first asked for), or the middle one of those spread over the overlap."""
    if not f.targets:
        return None
    return f.targets[0] if f.chosen else f.targets[len(f.targets) // 2]


def frontier_headline(c: Comparison) -> str:
    """The headline sentence at equal interactivity, or '' without a frontier comparison."""
    f = c.frontier
    target = _headline_target(f) if f is not None else None
    if f is None or target is None:
        return ""
    where = "chosen with --interactivity" if f.chosen else "the middle of the overlap of both measured ranges"
    return (
        f'<p class="headline" id="headline-interactivity">{escape(target_sentence(f, target))} '
        f"({escape(where)}; {escape(str(c.basis))} basis, output tokens).</p>"
    )


def _level_marks(name: str, levels: Sequence[Level], color: str) -> list[Mark]:
    return [
        Mark(
            lv.interactivity,
            lv.tok_s_per_gpu,
            f"{name}, concurrency {lv.concurrency}: "
            f"{lv.interactivity:.1f} tok/s/user, {lv.tok_s_per_gpu:.1f} tok/s/GPU" + (" (Pareto)" if lv.pareto else ""),
            color,
            name,
            f"c={lv.concurrency}",
            ring=lv.pareto,
        )
        for lv in levels
    ]


def _stretches(side: FrontierSide, letter: str) -> list[Mark]:
    """Where each stretch of the envelope begins, labelled with the short name of the configuration that wins it
    (A1, A2...: the legend's "side A configuration 1"; the mark's title names it in full)."""
    keys = [c.key for c in side.configs]
    marks, last = [], None
    for x, y, key in zip(side.curve_x, side.curve_y, side.curve_config, strict=True):
        if key and key != last:
            curve = side.config(key)
            label = curve.label if curve is not None else key
            short = f"{letter}{keys.index(key) + 1}" if key in keys else label
            marks.append(Mark(x, y, f"envelope from {x:.1f} tok/s/user: {label}", "#222", "", short, ring=False))
        last = key
    return marks


def _side_lines(f: FrontierComparison) -> list[Line]:
    """Per side: with one configuration its curve (bold) and band; with several, each configuration's curve thin with
    its levels, and the envelope over them bold, each stretch labelled with the configuration that wins it."""
    lines = []
    for (label, side), color in zip((("A", f.a), ("B", f.b)), PALETTE, strict=False):
        name = f"side {label}: {side.name}"
        several = len(side.configs) > 1
        if several:
            for k, curve in enumerate(side.configs):
                own = f"side {label} configuration {k + 1} ({label}{k + 1}): {curve.label}"
                points = list(zip(curve.curve_x, curve.curve_y, strict=True))
                marks = _level_marks(own, curve.levels, color)
                lines.append(Line(own, color, points, dash="6 2" if k % 2 else None, marks=marks, dots=False, width=1))
        marks = _stretches(side, label) if several else _level_marks(name, side.levels, color)
        envelope = f"{name}{' (envelope)' if several else ''}"
        width = 3.5 if several else 2.0
        lines.append(
            Line(
                envelope,
                color,
                list(zip(side.curve_x, side.curve_y, strict=True)),
                marks=marks,
                dots=False,
                width=width,
            )
        )
        if side.band_low:
            for which, band in (("low", side.band_low), ("high", side.band_high)):
                points = list(zip(side.curve_x, band, strict=True))
                lines.append(Line(f"{name} band {which}", color, points, dash="3 3", dots=False))
    return lines


def _cost_lines(f: FrontierComparison) -> list[Line]:
    lines = []
    for (label, side), color in zip((("A", f.a), ("B", f.b)), PALETTE, strict=False):
        points = list(zip(side.curve_x, side.curve_usd_per_m, strict=True))
        lines.append(Line(f"side {label}: {side.name}", color, points, dots=False))
    cross = f.crossover
    if cross is not None and cross.at is not None and f.a.curve_x:
        cost = _cost_at(f.a.curve_x, f.a.curve_usd_per_m, cross.at)
        ci = f" (CI {cross.ci_low:.1f}-{cross.ci_high:.1f})" if cross.ci_low is not None else ""
        lines.append(
            Line(
                "side crossover",
                "#222",
                [],
                marks=[
                    Mark(
                        cross.at,
                        cost,
                        f"crossover at {cross.at:.1f} tok/s/user{ci}",
                        "#222",
                        "side crossover",
                        "crossover",
                        ring=True,
                    )
                ],
            )
        )
    return lines


def _cost_at(xs: tuple[float, ...], ys: tuple[float, ...], at: float) -> float:
    """Linear reading of a sampled curve at ``at`` (for placing the crossover mark only)."""
    for (x0, y0), (x1, y1) in zip(zip(xs, ys, strict=True), zip(xs[1:], ys[1:], strict=True), strict=False):
        if x0 <= at <= x1:
            return y0 + (y1 - y0) * (at - x0) / (x1 - x0) if x1 > x0 else y0
    return ys[-1]


def frontier_section(c: Comparison) -> str:
    """The two charts at equal interactivity, or a line saying why there are none."""
    f = c.frontier
    if f is None or f.a.low is None or f.b.low is None:
        return "<p>No frontier on both sides (each needs two Pareto points): no chart at equal interactivity.</p>"
    q = "median" if f.quantile == 0.5 else f"p{f.quantile * 100:g}"
    x_label = f"interactivity (tok/s per user = 1000 / {q} TPOT ms)"
    sides = _side_lines(f)
    throughput = figure(
        "Throughput per GPU vs interactivity (frontier)",
        line_chart(sides, x_label, "output tok/s per GPU"),
        legend([(line.label, line.color, line.dash) for line in sides if "band" not in line.label]),
        "Points: each concurrency level's interactivity (1000 / the TPOT quantile of a run's ok requests) and output "
        "tok/s per GPU (view frontier), each the mean over nights of each night's mean over its runs (ringed: Pareto "
        "points). Solid: the monotone cubic (PCHIP) through the Pareto points, never extrapolated; dashed: the "
        "bootstrap band (percentile, both frontiers rebuilt in every replicate). A side of several serving "
        "configurations: each configuration's curve thin, the envelope (at each interactivity its configuration with "
        "the lowest cost per token) bold, each stretch labelled with the configuration that wins it.",
    )
    costs = _cost_lines(f)
    cross = f.crossover
    cross_note = ""
    if cross is not None and cross.at is None:
        cross_note = "The curves do not cross inside the overlap."
    elif cross is not None and cross.at is not None:
        ci = f" ({f.confidence:.0%} CI {cross.ci_low:.1f}-{cross.ci_high:.1f})" if cross.ci_low is not None else ""
        cross_note = f"They cross at {cross.at:.1f} tok/s/user{ci}."
    cost = figure(
        "Cost per 1M output tokens vs interactivity",
        line_chart(costs, x_label, f"USD per 1M output tokens ({c.basis})", log_y=True),
        legend([(line.label, line.color, None) for line in costs]),
        "Cost per 1M tokens along each frontier: 1e6 x the interpolated cost rate per GPU-second (tok/s per GPU / "
        "tokens per USD, views frontier and cost_basis) / the interpolated tok/s per GPU; each level's figures are "
        f"the mean over nights of each night's mean over its runs. {cross_note}",
    )
    return '<div class="grid2">' + throughput + cost + "</div>"
