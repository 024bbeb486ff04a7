"""The report's chart-led sections: throughput, latency distributions, cost with CIs, Pareto, energy, targets."""

from __future__ import annotations

from collections import defaultdict
from html import escape
from typing import Any

import numpy as np

from ..compare import bootstrap_efficiency, load_candidates, load_samples, point_efficiency
from .context import DASHES, Platform, ReportContext, cheapest_level, figure, fmt, query_rows, table, usd
from .svg import Bar, Line, Mark, bar_chart, ecdf_chart, legend, line_chart, scatter_chart

__all__ = [
    "cost_figure",
    "distribution_figure",
    "energy_figure",
    "pareto_figure",
    "targets_section",
    "throughput_figure",
]


def throughput_figure(ctx: ReportContext) -> str:
    lines = []
    for p in ctx.platforms:
        by_level: dict[int, list[float]] = defaultdict(list)
        for r in ctx.runs:
            if r["run_id"] in p.run_ids:
                by_level[r["concurrency"]].append(r["output_tok_s"])
        pts = [(float(c), float(np.mean(v))) for c, v in sorted(by_level.items())]
        errs = [(float(c), min(v), max(v)) for c, v in sorted(by_level.items()) if len(v) > 1]
        lines.append(Line(p.label, p.color, pts, errors=errs))
    levels = {r["concurrency"] for r in ctx.runs}
    log_x = max(levels) / max(min(levels), 1) >= 8
    chart = line_chart(
        lines,
        "concurrency (requests in flight)" + (", log scale" if log_x else ""),
        "aggregate output tokens/s",
        log_x=log_x,
        x_ticks=[(float(c), str(c)) for c in sorted(levels)],
    )
    return figure(
        "Throughput vs concurrency",
        chart,
        legend([(p.label, p.color, None) for p in ctx.platforms]),
        "Mean over nights; bars span the lowest and highest night.",
    )


_PROBS = [i / 100 for i in range(101)]


def distribution_figure(ctx: ReportContext, metric: str) -> str:
    if metric == "ttft":
        source = "SELECT run_id, ttft_ns / 1e6 AS v FROM requests WHERE ttft_ns IS NOT NULL"
        caption, axis = "Time to first token (TTFT), distribution", "TTFT (ms), log scale"
    else:
        source = "SELECT run_id, unnest(itl_ns) / 1e6 AS v FROM requests"
        caption, axis = "Inter-token latency (ITL), distribution", "gap between tokens (ms), log scale"
    sql = (
        f"WITH x AS ({source}{' AND' if metric == 'ttft' else ' WHERE'} phase = 'measure' AND error IS NULL "
        "AND list_contains($ids, run_id)) SELECT x.run_id, r.concurrency, quantile_cont(v, $p) AS q "
        "FROM x JOIN runs AS r USING (run_id) GROUP BY ALL"
    )
    rows = ctx.con.sql(sql, params={"ids": ctx.ids, "p": _PROBS}).to_arrow_table().to_pylist()
    per_line: dict[tuple[str, int], list[list[float]]] = defaultdict(list)
    for row in rows:
        per_line[(ctx.of_run[row["run_id"]].label, row["concurrency"])].append(row["q"])
    levels = sorted({c for _, c in per_line})
    lines, items = [], []
    for p in ctx.platforms:
        for c in levels:
            if (p.label, c) not in per_line:
                continue
            quantiles = np.mean(np.array(per_line[(p.label, c)]), axis=0)  # mean quantile curve over runs
            dash = DASHES[levels.index(c) % len(DASHES)]
            label = f"{p.label}, c={c}"
            lines.append(
                Line(label, p.color, [(max(float(q), 1e-3), pr) for q, pr in zip(quantiles, _PROBS, strict=True)], dash)
            )
            items.append((label, p.color, dash))
    note = "Each curve: the quantiles of a run's ok measured requests, averaged over the runs (nights) of that line."
    return figure(caption, ecdf_chart(lines, axis), legend(items), note)


_COST_NOTE = (
    "Each platform at its cheapest concurrency on the owned basis. Solid: owned (capex amortised + power + ops + "
    "adaptation); dashed outline: per-GPU-hour rates (rented or published all-in owned rates) + ops + adaptation. "
    "Whiskers: bootstrap 95% CI over nights, runs and requests."
)


def _cost_bar(ctx: ReportContext, p: Platform, basis: str, rows: list[dict[str, Any]], rng: np.random.Generator) -> Bar:
    """Cost per 1M output tokens of these runs (1e6 / tokens per USD) with its bootstrap 95% CI."""
    samples = load_samples(ctx.con, rows, "output")
    reps = bootstrap_efficiency(samples, ctx.resamples, rng)
    lo, hi = (1e6 / float(v) for v in np.percentile(reps, [97.5, 2.5]))
    value, level = 1e6 / point_efficiency(samples), rows[0]["concurrency"]
    title = (f"{p.label}, {basis}, concurrency {level}: {usd(value)} per 1M output tokens, 95% CI {usd(lo)}-"
             f"{usd(hi)} ({len(rows)} runs)")  # fmt: skip
    return Bar(f"{basis} (c={level})", value, p.color, lo, hi, title=title, hollow=basis != "owned",
               series=p.label, note=f"{usd(value)} ({usd(lo)}-{usd(hi)})", group=p.label)  # fmt: skip


def cost_figure(ctx: ReportContext) -> str:
    """Cost per 1M output tokens with CI, per platform and cost basis (owned, then every GPU-hour tier)."""
    query = "SELECT DISTINCT basis FROM cost_basis ORDER BY basis <> 'owned', basis"
    candidates = {basis: load_candidates(ctx.con, basis) for (basis,) in ctx.con.execute(query).fetchall()}
    owned = {r["run_id"]: r for r in candidates.get("owned", [])}
    rng = np.random.default_rng(ctx.seed)
    bars = []
    for p in ctx.platforms:
        level = cheapest_level(p, owned)
        for basis, rows in candidates.items():
            mine = [r for r in rows if r["run_id"] in p.run_ids and r["concurrency"] == level]
            if mine:
                bars.append(_cost_bar(ctx, p, basis, mine, rng))
    if not bars:
        return "<p>No priced run: cost per 1M tokens needs the run's hardware, site and ops price rows.</p>"
    chart = bar_chart(bars, "USD per 1M output tokens", label_width=230)
    caption = "Cost per 1M output tokens, 95% CI, per platform and cost basis"
    return figure(caption, chart, legend([(p.label, p.color, None) for p in ctx.platforms]), _COST_NOTE)


def pareto_figure(ctx: ReportContext) -> str:
    tco = {r["run_id"]: r for r in query_rows(ctx.con, "SELECT * FROM tco WHERE list_contains($ids, run_id)", ctx.ids)}
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in ctx.runs:
        if tco.get(r["run_id"], {}).get("usd_per_m_output_tokens") is not None and r["e2e_p90_ms"] is not None:
            groups[(ctx.of_run[r["run_id"]].label, r["concurrency"])].append(r)
    points = []
    for (label, level), rows in groups.items():
        p = next(p for p in ctx.platforms if p.label == label)
        x = float(np.mean([r["e2e_p90_ms"] for r in rows]))
        y = float(np.mean([tco[r["run_id"]]["usd_per_m_output_tokens"] for r in rows]))
        points.append((x, y, p, level))
    if not points:
        return "<p>No priced run with latency figures: no cost vs latency chart.</p>"
    frontier, best = [], float("inf")
    for x, y, _, _ in sorted(points, key=lambda t: (t[0], t[1])):
        if y < best:
            frontier.append((x, y))
            best = y
    on_front = set(frontier)
    marks = [
        Mark(
            x,
            y,
            f"{p.label}, concurrency {c}: e2e p90 {x:,.0f} ms, {usd(y)} per 1M output tokens"
            + (" (Pareto-optimal)" if (x, y) in on_front else ""),
            p.color,
            p.label,
            f"c={c}",
        )
        for x, y, p, c in points
    ]
    marks += [Mark(x, y, "Pareto-optimal", "#222", "", "", ring=True) for x, y in frontier]
    chart = scatter_chart(
        marks,
        "end-to-end latency p90 (ms)",
        "USD per 1M output tokens (owned)",
        frontier=frontier,
        log_x=max(p[0] for p in points) / min(p[0] for p in points) > 20,
    )
    return figure(
        "Cost vs latency (Pareto)",
        chart,
        legend([(p.label, p.color, None) for p in ctx.platforms]),
        "One point per platform and concurrency (mean over nights). Ringed points are Pareto-optimal: no "
        "other point is both faster and cheaper.",
    )


def energy_figure(ctx: ReportContext) -> str:
    rows = query_rows(ctx.con, "SELECT * FROM efficiency WHERE list_contains($ids, run_id)", ctx.ids)
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["j_per_output_token"] is not None:
            groups[(ctx.of_run[r["run_id"]].label, r["concurrency"])].append(r)
    bars = []
    for p in ctx.platforms:
        for (label, level), items in sorted(groups.items(), key=lambda kv: kv[0][1]):
            if label != p.label:
                continue
            j = float(np.mean([i["j_per_output_token"] for i in items]))
            measured = all(i["energy_basis"] == "measured" for i in items)
            per_kwh = 3.6e6 / j if j else 0.0
            bars.append(
                Bar(
                    f"concurrency {level}",
                    j,
                    p.color,
                    hollow=not measured,
                    series=p.label,
                    title=f"{p.label}, concurrency {level}: {j:.3g} J per output token, "
                    f"{per_kwh / 1e6:.2f}M tokens per kWh ({'measured' if measured else 'estimate'})",
                    note=f"{j:.3g} J · {per_kwh / 1e6:.2f}M tok/kWh",
                    group=p.label,
                )
            )
    if not bars:
        return "<p>No energy figure (no valid telemetry and no price-table watts).</p>"
    return figure(
        "Energy per output token",
        bar_chart(bars, "joules per output token (device)", label_width=150),
        legend([(p.label, p.color, None) for p in ctx.platforms]),
        "Solid: measured (energy counter or integrated power over the measurement window / output "
        "tokens). Dashed outline: estimate from the price table's load watts / throughput.",
    )


_TARGET_HEADERS = ["target", "TTFT p90 / TPOT p90 limit (ms)", "platform", "runs meeting / runs",
                   "best concurrency", "output tok/s", "TTFT p90 (ms)", "TPOT p90 (ms)",
                   "$ per 1M output tokens"]  # fmt: skip
_TARGET_NOTE = (
    "Best throughput among runs whose TTFT p90 and TPOT p90 meet the target (view cost_at_latency_target; "
    "targets from the price table's [latency_target] rows)."
)
_SENSITIVITY_NOTE = (
    "View sensitivity: the same run re-priced at other utilisations (also: electricity price, lifetime). A card "
    "at 30% utilisation is not cheaper than one at 80%."
)


def _platform_key(r: dict[str, Any]) -> tuple[str, ...]:
    fields = (r["host"], r["gpu_name"] or "CPU", r["hardware_key"], r["model_name"], r["workload"], r["engine_name"])
    return tuple(str(f) for f in fields)


def _target_rows(ctx: ReportContext) -> list[list[str]]:
    found = query_rows(
        ctx.con,
        "SELECT * FROM cost_at_latency_target WHERE list_contains($ids, best_run_id) OR best_run_id IS NULL "
        "ORDER BY target, usd_per_m_output_tokens NULLS LAST",
        ctx.ids,
    )
    labels = {p.key: p.label for p in ctx.platforms}
    return [
        [escape(r["target"]), f"{r['target_ttft_p90_ms']:g} / {r['target_tpot_p90_ms']:g}",
         escape(labels[_platform_key(r)]), f"{r['runs_meeting']} / {r['runs']}", fmt(r["concurrency"]),
         fmt(r["output_tok_s"]), fmt(r["ttft_p90_ms"], 0), fmt(r["tpot_p90_ms"]), usd(r["usd_per_m_output_tokens"])]
        for r in found
        if _platform_key(r) in labels
    ]  # fmt: skip


def _sensitivity_lines(ctx: ReportContext) -> list[Line]:
    """Per platform, at its cheapest concurrency: cost per 1M output tokens against utilisation."""
    found = query_rows(
        ctx.con,
        "SELECT run_id, value, usd_per_m_output_tokens FROM sensitivity "
        "WHERE parameter = 'utilisation' AND list_contains($ids, run_id)",
        ctx.ids,
    )
    owned = {r["run_id"]: r for r in load_candidates(ctx.con, "owned")}
    lines = []
    for p in ctx.platforms:
        level = cheapest_level(p, owned)
        curve: dict[float, list[float]] = defaultdict(list)
        for s in found:
            priced = owned.get(s["run_id"]) if s["run_id"] in p.run_ids else None
            if priced is not None and priced["concurrency"] == level and s["usd_per_m_output_tokens"] is not None:
                curve[s["value"]].append(s["usd_per_m_output_tokens"])
        if curve:
            points = [(u, float(np.mean(v))) for u, v in sorted(curve.items())]
            lines.append(Line(f"{p.label} (c={level})", p.color, points))
    return lines


def targets_section(ctx: ReportContext) -> str:
    """Cost at the price table's latency targets, and the sensitivity of cost to utilisation."""
    out = '<h2 id="targets">Cost at latency targets</h2>' + table(_TARGET_HEADERS, _target_rows(ctx), range(3, 9))
    out += f'<p class="note">{escape(_TARGET_NOTE)}</p>'
    lines = _sensitivity_lines(ctx)
    if lines:
        x_label, y_label = "utilisation (fraction of the month serving)", "USD per 1M output tokens"
        chart = line_chart(lines, x_label, y_label, log_y=True, zero_y=False)
        items = [(ln.label, ln.color, None) for ln in lines]
        caption = "Sensitivity: cost per 1M output tokens vs utilisation (owned)"
        out += figure(caption, chart, legend(items), _SENSITIVITY_NOTE)
    return out
