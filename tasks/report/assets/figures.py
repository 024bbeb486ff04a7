"""The report's chart-led sections: throughput, latency distributions, cost with CIs, Pareto, energy, targets."""

from __future__ import annotations

from collections import defaultdict
from html import escape

import duckdb
import numpy as np

from tcobench.schemas import CostBasis
from tcobench.schemas.units import tokens_per_kwh, usd_per_m
from tcobench.tasks.analysis.compare import (
    RunSample,
    bootstrap_bases,
    load_priced,
    percentile_interval,
    samples_of,
)
from tcobench.tasks.report.assets.context import (
    DASHES,
    NightWeightedRow,
    Platform,
    PlatformKey,
    ReportContext,
    cheapest_levels,
    figure,
    fmt,
    left_out,
    night_weighted_rows,
    platform_costs,
    platform_key,
    query_rows,
    table,
    usd,
)
from tcobench.tasks.report.assets.svg import Bar, Line, Mark, bar_chart, ecdf_chart, legend, line_chart, scatter_chart
from tcobench.tasks.store.rows import IDS, CostAtLatencyTargetRow

__all__ = [
    "cost_figure",
    "distribution_figure",
    "energy_figure",
    "pareto_figure",
    "targets_section",
    "throughput_figure",
]


def throughput_figure(ctx: ReportContext) -> str:
    rows = night_weighted_rows(ctx, "run_summary", "output_tok_s")
    lines = []
    for p in ctx.platforms:
        mine = [r for r in rows if r["platform"] == p.label]
        pts = [(float(r["concurrency"]), r["mean"]) for r in mine]
        errs = [(float(r["concurrency"]), r["lowest"], r["highest"]) for r in mine if r["nights"] > 1]
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
        "Aggregate output tokens/s of a run (view run_summary), averaged over nights: the mean over nights of each "
        "night's mean over its runs (macro night_weighted_mean). Bars span the lowest and highest night's mean.",
    )


_PROBS = [i / 100 for i in range(101)]  # view run_statistics' probabilities: its lists' element i at _PROBS[i - 1]


def distribution_figure(ctx: ReportContext, metric: str) -> str:
    if metric == "ttft":
        column = "ttft_ms_q"
        caption, axis = "Time to first token (TTFT), distribution", "TTFT (ms), log scale"
    else:
        column = "itl_ms_q"
        caption, axis = "Inter-token latency (ITL), distribution", "gap between tokens (ms), log scale"
    # per run: its quantile at every probability of _PROBS (view run_statistics), one value each (i: 1-based)
    curves: dict[tuple[str, int], list[tuple[int, float]]] = defaultdict(list)
    for row in night_weighted_rows(ctx, "run_statistics", column, lists=True):
        curves[(row["platform"], row["concurrency"])].append((row["i"], row["mean"]))
    levels = sorted({c for _, c in curves})
    lines, items = [], []
    for p in ctx.platforms:
        for c in levels:
            if (p.label, c) not in curves:
                continue
            dash = DASHES[levels.index(c) % len(DASHES)]
            label = f"{p.label}, c={c}"
            pts = [(max(q, 1e-3), _PROBS[i - 1]) for i, q in sorted(curves[(p.label, c)])]
            lines.append(Line(label, p.color, pts, dash))
            items.append((label, p.color, dash))
    if not lines:
        return left_out(caption, f"no run in the report has {'a first token' if metric == 'ttft' else 'two tokens'}")
    note = (
        "Each curve: at every probability, the quantile (quantile_cont) of each run's ok measured requests (view "
        "run_statistics), averaged over nights (the mean over nights of each night's mean over its runs)."
    )
    return figure(caption, ecdf_chart(lines, axis), legend(items), note)


_COST_NOTE = (
    "Each platform at its cheapest concurrency on the owned basis. Cost per 1M output tokens = 1e6 / tokens per USD, "
    "where tokens per USD (view cost_basis) is averaged over nights: the mean over nights of each night's mean over "
    "its runs, as in view platform_cost. Solid: owned (capex amortised + power + ops + adaptation); dashed outline: "
    "per-GPU-hour rates (rented or published all-in owned rates) + ops + adaptation. Whiskers: bootstrap 95% CI "
    "over nights, runs and requests; a platform's bases share one resampling of the same runs, so their whiskers "
    "differ by the prices alone."
)


def _cost_bars(
    ctx: ReportContext,
    p: Platform,
    points: list[NightWeightedRow],
    runs: list[list[RunSample]],
    rng: np.random.Generator,
) -> list[Bar]:
    """A platform's bars at one concurrency, one per cost basis (``points``, with each basis' priced ``runs``):
    cost per 1M output tokens (1e6 / night-weighted tokens per USD) with its bootstrap 95% CI. Bases pricing the
    same runs share one resampling (compare.bootstrap_bases), so their whiskers differ by the prices alone."""
    groups: dict[frozenset[str], list[int]] = defaultdict(list)
    for i, samples in enumerate(runs):
        groups[frozenset(s.run_id for s in samples)].append(i)
    replicates: dict[int, np.ndarray] = {}
    for members in groups.values():
        replicates.update(zip(members, bootstrap_bases([runs[i] for i in members], ctx.resamples, rng), strict=True))
    bars = []
    for i, point in enumerate(points):
        fewest, most = percentile_interval(replicates[i], 0.95)  # tokens per USD
        lo, hi = usd_per_m(most), usd_per_m(fewest)
        value, level, basis = usd_per_m(point["mean"]), point["concurrency"], point["basis"]
        title = (
            f"{p.label}, {basis}, concurrency {level}: {usd(value)} per 1M output tokens, 95% CI {usd(lo)}-"
            f"{usd(hi)} ({point['runs']} runs over {point['nights']} nights)"
        )
        bars.append(
            Bar(
                f"{basis} (c={level})",
                value,
                p.color,
                lo,
                hi,
                title=title,
                hollow=basis != "owned",
                series=p.label,
                note=f"{usd(value)} ({usd(lo)}-{usd(hi)})",
                group=p.label,
            )
        )
    return bars


def _cost_points(ctx: ReportContext) -> list[NightWeightedRow]:
    """Night-weighted output tokens per USD per platform, concurrency and basis (owned first)."""
    rows = platform_costs(ctx)
    return sorted(rows, key=lambda r: (r["basis"] != "owned", r["basis"]))


def cost_figure(ctx: ReportContext) -> str:
    """Cost per 1M output tokens with CI, per platform and cost basis (owned, then every GPU-hour tier)."""
    points = _cost_points(ctx)
    cheapest = cheapest_levels([r for r in points if r["basis"] == "owned"])
    wanted = [r["run_id"] for r in ctx.runs if r["concurrency"] == cheapest.get(ctx.of_run[r["run_id"]].label)]
    candidates = load_priced(ctx.con, [CostBasis.parse(b) for b in dict.fromkeys(r["basis"] for r in points)], wanted)
    rng = np.random.default_rng(ctx.seed)
    bars: list[Bar] = []
    known: dict[str, RunSample] = {}
    # every bar's runs' requests in one query (a bar resamples its own from these), not one query per platform
    samples_of(ctx.con, list({r["run_id"]: r for rows in candidates.values() for r in rows}.values()), "output", known)
    for p in ctx.platforms:
        ids = set(p.run_ids)
        level = cheapest.get(p.label)
        mine = [point for point in points if point["platform"] == p.label and point["concurrency"] == level]
        runs = [
            samples_of(
                ctx.con,
                [
                    r
                    for r in candidates[point["basis"]]
                    if r["run_id"] in ids and r["concurrency"] == point["concurrency"]
                ],
                "output",
                known,
            )
            for point in mine
        ]
        bars += _cost_bars(ctx, p, mine, runs, rng) if mine else []
    if not bars:
        return "<p>No priced run: cost per 1M tokens needs the run's hardware, site and ops price rows.</p>"
    chart = bar_chart(bars, "USD per 1M output tokens", label_width=230)
    caption = "Cost per 1M output tokens, 95% CI, per platform and cost basis"
    return figure(caption, chart, legend([(p.label, p.color, None) for p in ctx.platforms]), _COST_NOTE)


def pareto_figure(ctx: ReportContext) -> str:
    latency = {
        (r["platform"], r["concurrency"]): r["mean"] for r in night_weighted_rows(ctx, "run_summary", "e2e_p90_ms")
    }
    owned = [r for r in _cost_points(ctx) if r["basis"] == "owned"]
    by_label = {p.label: p for p in ctx.platforms}
    points = [
        (latency[key], usd_per_m(r["mean"]), by_label[r["platform"]], r["concurrency"])
        for r in owned
        if (key := (r["platform"], r["concurrency"])) in latency
    ]
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
        "One point per platform and concurrency: x the runs' e2e p90 latency (view run_summary), y 1e6 / tokens per "
        "USD (view cost_basis, owned), each averaged over nights (the mean over nights of each night's mean over its "
        "runs). Ringed points are Pareto-optimal: no other point is both faster and cheaper.",
    )


def energy_figure(ctx: ReportContext) -> str:
    # every: each run of the bar measured its energy
    is_measured = duckdb.ColumnExpression("energy_basis") == duckdb.ConstantExpression("measured")
    rows = night_weighted_rows(ctx, "efficiency", "j_per_output_token", every=is_measured)
    bars = []
    for p in ctx.platforms:
        for row in (r for r in rows if r["platform"] == p.label):
            j, level, measured = row["mean"], row["concurrency"], row["every"]
            per_kwh = tokens_per_kwh(j) if j else 0.0
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
        "Joules per output token (view efficiency) averaged over nights: the mean over nights of each night's mean "
        "over its runs. Solid: every run measured (energy counter or integrated power over the measurement window / "
        "output tokens). Dashed outline: an estimate from the price table's load watts / throughput for some run.",
    )


_TARGET_HEADERS = [
    "target",
    "TTFT p90 / TPOT p90 limit (ms)",
    "platform",
    "runs meeting / runs",
    "best concurrency",
    "output tok/s",
    "TTFT p90 (ms)",
    "TPOT p90 (ms)",
    "$ per 1M output tokens",
]
_TARGET_NOTE = (
    "Best throughput among runs whose TTFT p90 and TPOT p90 meet the target (view cost_at_latency_target; "
    "targets from the price table's [latency_target] rows)."
)
_SENSITIVITY_NOTE = (
    "View sensitivity: the same runs re-priced at other utilisations (also: electricity price, lifetime); cost per "
    "1M output tokens = 1e6 / tokens per USD averaged over nights (the mean over nights of each night's mean over "
    "its runs). A card at 30% utilisation is not cheaper than one at 80%."
)


def _platform_key(r: CostAtLatencyTargetRow) -> PlatformKey:
    return platform_key(r["host"], r["gpu_name"], r["hardware_key"], r["model_name"], r["workload"], r["engine_name"])


def _target_rows(ctx: ReportContext) -> list[list[str]]:
    found = query_rows(
        ctx.con,
        f"SELECT * FROM latency_target_rows({IDS})",
        CostAtLatencyTargetRow,
        ctx.ids,
    )
    labels = {p.key: p.label for p in ctx.platforms}
    return [
        [
            escape(r["target"]),
            f"{r['target_ttft_p90_ms']:g} / {r['target_tpot_p90_ms']:g}",
            escape(labels[_platform_key(r)]),
            f"{r['runs_meeting']} / {r['runs']}",
            fmt(r["concurrency"]),
            fmt(r["output_tok_s"]),
            fmt(r["ttft_p90_ms"], 0),
            fmt(r["tpot_p90_ms"]),
            usd(r["usd_per_m_output_tokens"]),
        ]
        for r in found
        if _platform_key(r) in labels
    ]


def _sensitivity_lines(ctx: ReportContext) -> list[Line]:
    """Per platform, at its cheapest concurrency: cost per 1M output tokens against utilisation."""
    utilisation = duckdb.ColumnExpression("parameter") == duckdb.ConstantExpression("utilisation")
    found = night_weighted_rows(
        ctx, ctx.con.view("sensitivity").filter(utilisation), "output_tokens_per_usd", by="value"
    )
    cheapest = cheapest_levels([r for r in _cost_points(ctx) if r["basis"] == "owned"])
    lines = []
    for p in ctx.platforms:
        level = cheapest.get(p.label)
        points = [
            (r["value"], usd_per_m(r["mean"])) for r in found if r["platform"] == p.label and r["concurrency"] == level
        ]
        if points:
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
