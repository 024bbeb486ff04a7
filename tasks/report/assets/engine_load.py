"""The report's "why throughput saturates" section: the engine's own queue depth and KV-cache use against
concurrency (view engine_load, from the metrics the engine reports about itself while a run is measured)."""

from __future__ import annotations

from tcobench.tasks.report.assets.context import NightWeightedRow, ReportContext, figure, night_weighted_rows
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


def _chart(ctx: ReportContext, value: str, y_label: str, scale: float = 1.0) -> tuple[str, list[Line]]:
    lines = _lines(ctx, night_weighted_rows(ctx, "engine_load", value), scale)
    if not lines:
        return "", lines
    levels = sorted({int(x) for line in lines for x, _ in line.points})
    log_x = max(levels) / max(min(levels), 1) >= 8
    axis = "concurrency (requests in flight)" + (", log scale" if log_x else "")
    ticks = [(float(c), str(c)) for c in levels]
    return line_chart(lines, axis, y_label, log_x=log_x, x_ticks=ticks), lines


def engine_load_section(ctx: ReportContext) -> str:
    """Two charts (requests running and waiting; KV-cache use) per platform against concurrency."""
    waiting, w_lines = _chart(ctx, "waiting_mean", "requests waiting in the engine (mean)")
    kv, k_lines = _chart(ctx, "kv_used_mean", "KV-cache in use (mean, %)", scale=100.0)
    if not waiting and not kv:
        return (
            '<h2 id="engine">Why throughput saturates</h2><p>No engine metrics in these runs (the engine offered no '
            "metrics endpoint, or telemetry.engine_metrics = none; each run row's engine_metrics_note says why).</p>"
        )
    caption = (
        "Night-weighted mean over the runs of each concurrency level (macro night_weighted_mean: the mean over nights "
        "of each night's mean over its runs) of the engine's own figure, averaged over the scrapes inside the run's "
        "measurement window. Bars span the lowest and highest night's mean."
    )
    parts = ['<h2 id="engine">Why throughput saturates</h2>', _INTRO, '<div class="grid2">']
    if waiting:
        keys = legend([(line.label, line.color, None) for line in w_lines])
        parts.append(figure("Queue depth inside the engine vs concurrency", waiting, keys, caption))
    if kv:
        keys = legend([(line.label, line.color, None) for line in k_lines])
        parts.append(figure("KV-cache use vs concurrency", kv, keys, caption))
    parts.append("</div>")
    return "\n".join(parts)
