"""The report's "why throughput saturates" section: the engine's own queue depth and KV-cache use against
concurrency (view engine_load, from the metrics the engine reports about itself while a run is measured)."""

from __future__ import annotations

from tcobench.tasks.report.assets.context import (
    NightWeightedRow,
    ReportContext,
    figure,
    left_out,
    night_weighted_rows,
)
from tcobench.tasks.report.assets.svg import Line, legend, line_chart

__all__ = ["engine_load_section"]

_INTRO = (
    "<p>What the engine said about itself while each run was measured (table engine_metrics: llama.cpp "
    "<code>/metrics</code> and <code>/slots</code>, vLLM <code>/metrics</code>, Ollama <code>/api/ps</code>; view "
    "engine_load). When throughput stops growing with concurrency, a queue inside the engine or a full KV-cache "
    "says why: the engine cannot run more requests at once.</p>"
)


def _lines(ctx: ReportContext, rows: list[NightWeightedRow], scale: float) -> list[Line]:
    lines = []
    for p in ctx.platforms:
        mine = [r for r in rows if r["platform"] == p.label]
        if mine:
            pts = [(float(r["concurrency"]), r["mean"] * scale) for r in mine]
            spread = [r for r in mine if r["nights"] > 1]
            errs = [(float(r["concurrency"]), r["lowest"] * scale, r["highest"] * scale) for r in spread]
            lines.append(Line(p.label, p.color, pts, errors=errs))
    return lines


def _empty(lines: list[Line], zero: str) -> str | None:
    """Why a chart of these lines would show nothing (no point, or every value 0 on an axis from -1 to 1), or None."""
    if not lines:
        return "no run in the report has this figure (the engine does not report it)"
    values = [y for line in lines for _, y in line.points] + [v for line in lines for _, *lh in line.errors for v in lh]
    return zero if all(v == 0 for v in values) else None


# (view engine_load's column, caption, y axis, scale, why a chart of zeros is left out)
_CHARTS = (
    (
        "waiting_mean",
        "Queue depth inside the engine vs concurrency",
        "requests waiting in the engine (mean)",
        1.0,
        "every run's mean queue depth is 0 (no request waited inside the engine)",
    ),
    (
        "kv_used_mean",
        "KV-cache use vs concurrency",
        "KV-cache in use (mean, %)",
        100.0,
        "every run's mean KV-cache use is 0%",
    ),
)


def _chart(lines: list[Line], y_label: str) -> str:
    levels = sorted({int(x) for line in lines for x, _ in line.points})
    log_x = max(levels) / max(min(levels), 1) >= 8
    axis = "concurrency (requests in flight)" + (", log scale" if log_x else "")
    ticks = [(float(c), str(c)) for c in levels]
    return line_chart(lines, axis, y_label, log_x=log_x, x_ticks=ticks)


def engine_load_section(ctx: ReportContext) -> str:
    """Two charts (requests waiting; KV-cache use) per platform against concurrency; a chart with nothing to show
    (no run has its figure, or every value is 0) is left out with one line saying why."""
    found = [
        (caption, y_label, zero, _lines(ctx, night_weighted_rows(ctx, "engine_load", value), scale))
        for value, caption, y_label, scale, zero in _CHARTS
    ]
    if not any(lines for *_, lines in found):
        return (
            '<h2 id="engine">Why throughput saturates</h2><p>No engine metrics in these runs (the engine offered no '
            "metrics endpoint, or telemetry.engine_metrics = none; each run row's engine_metrics_note says why).</p>"
        )
    caption_note = (
        "Night-weighted mean over the runs of each concurrency level (macro night_weighted_mean: the mean over nights "
        "of each night's mean over its runs) of the engine's own figure, averaged over the scrapes inside the run's "
        "measurement window. Bars span the lowest and highest night's mean."
    )
    figures, notes = [], []
    for caption, y_label, zero, lines in found:
        why = _empty(lines, zero)
        if why is not None:
            notes.append(left_out(caption, why))
            continue
        keys = legend([(line.label, line.color, None) for line in lines])
        figures.append(figure(caption, _chart(lines, y_label), keys, caption_note))
    grid = ['<div class="grid2">', *figures, "</div>"] if figures else []
    return "\n".join(['<h2 id="engine">Why throughput saturates</h2>', _INTRO, *grid, *notes])
