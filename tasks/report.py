"""report: one self-contained HTML file over the stored runs, and a Markdown summary for Prefect artifacts.

Sections: the headline comparison (first two GPU vendors, with a bootstrap CI and the verdict on a claimed
ratio), the seed's record card per platform, throughput vs concurrency, TTFT and inter-token latency
distributions, cost per 1M output tokens with CI per platform and cost basis, cost vs latency (Pareto),
energy per token, cost at latency targets and sensitivity to utilisation, the nightly trend with flagged
changes, and the provenance of every run and price. Charts are inline SVG drawn here (tasks/report_assets);
the page loads nothing from anywhere.

A platform is (host, GPU, hardware key, model, workload, engine); labels drop the parts all platforms share.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from tcobench.errors import QueryError, StoreError, TcobenchError
from tcobench.schemas import PriceTable

from .compare import (
    Comparison,
    bootstrap_efficiency,
    compare_on,
    load_candidates,
    load_samples,
    parse_selection,
    point_efficiency,
)
from .history import Series, detect_changes
from .query import connect, freeze_views
from .report_assets import PALETTE, Bar, Line, Mark, bar_chart, ecdf_chart, legend, line_chart, page, scatter_chart

__all__ = ["Platform", "build_report", "summary_markdown", "write_report"]

_DASHES = (None, "7 3", "2 3", "9 3 2 3", "4 4")
_NAV = (
    '<nav class="toc">'
    + " · ".join(
        f'<a href="#{anchor}">{text}</a>'
        for anchor, text in (
            ("headline", "Headline"),
            ("record-card", "Record card"),
            ("performance", "Throughput and latency"),
            ("cost", "Cost and energy"),
            ("targets", "Latency targets"),
            ("trend", "Nightly trend"),
            ("provenance", "Provenance"),
        )
    )
    + "</nav>"
)
_GROUP_FIELDS = ("host", "gpu", "hardware_key", "model_name", "workload", "engine_name")


@dataclass(frozen=True)
class Platform:
    """A group of runs drawn as one series: the same host, GPU, price row, model, workload and engine."""

    key: tuple[str, ...]
    label: str
    color: str
    run_ids: tuple[str, ...]


@dataclass(frozen=True)
class _Ctx:
    con: duckdb.DuckDBPyConnection
    runs: list[dict[str, Any]]  # runs + run_summary rows in the report, oldest first
    platforms: list[Platform]
    of_run: dict[str, Platform]
    select: str | None
    claim: float
    resamples: int
    seed: int

    @property
    def ids(self) -> list[str]:
        return [r["run_id"] for r in self.runs]


# ----------------------------------------------------------------------------------------------- data


def _rows(con: duckdb.DuckDBPyConnection, sql: str, ids: Sequence[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = con.sql(sql, params={"ids": list(ids)}).to_arrow_table().to_pylist()
    return rows


def _platforms(runs: list[dict[str, Any]]) -> list[Platform]:
    """Group runs; a label is 'GPU @ host' plus whichever of hardware key, model, workload, engine vary."""
    keys: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for r in runs:
        r["gpu"] = r["gpu_name"] or "CPU"
        keys[tuple(str(r[f]) for f in _GROUP_FIELDS)].append(r["run_id"])
    # a field joins the label only where it tells apart platforms of the same GPU and host
    varying = [
        i for i in range(2, len(_GROUP_FIELDS)) if len({k[:2] + (k[i],) for k in keys}) > len({k[:2] for k in keys})
    ]
    platforms = []
    for n, (key, ids) in enumerate(sorted(keys.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2:]))):
        label = " · ".join([f"{key[1]} @ {key[0]}", *(key[i] for i in varying)])
        platforms.append(Platform(key, label, PALETTE[n % len(PALETTE)], tuple(ids)))
    return platforms


def _context(con: duckdb.DuckDBPyConnection, select: str | None, claim: float, resamples: int, seed: int) -> _Ctx:
    runs = (
        con.sql(
            "SELECT r.*, s.* EXCLUDE (run_id, batch_id, host, date, engine_name, engine_version, model_name, workload, "
            "load_mode, concurrency, status) FROM runs AS r JOIN run_summary AS s USING (run_id) "
            "WHERE r.status <> 'failed' AND s.output_tok_s IS NOT NULL ORDER BY r.started_ns, r.run_id"
        )
        .to_arrow_table()
        .to_pylist()
    )
    if select:
        selection = parse_selection(select, "--select")
        runs = [r for r in runs if selection.matches(r)]
    if not runs:
        raise QueryError("no measured run to report" + (f" matches --select {select!r}" if select else " is stored"))
    platforms = _platforms(runs)
    of_run = {run_id: p for p in platforms for run_id in p.run_ids}
    return _Ctx(con, runs, platforms, of_run, select, claim, resamples, seed)


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return escape(str(value))


def _usd(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:,.4f}" if abs(value) >= 1e-4 else f"${value:.3g}"


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = (), flagged: Sequence[bool] = ()
) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cells = "".join(f'<td class="num">{c}</td>' if j in numeric else f"<td>{c}</td>" for j, c in enumerate(row))
        cls = ' class="flagged"' if flagged and flagged[i] else ""
        body.append(f"<tr{cls}>{cells}</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _figure(caption: str, chart: str, legend_html: str = "", note: str = "") -> str:
    note_html = f'<p class="note">{note}</p>' if note else ""
    return f"<figure><figcaption>{escape(caption)}</figcaption>{chart}{legend_html}{note_html}</figure>"


# ------------------------------------------------------------------------------------------ sections


def _headline(ctx: _Ctx) -> str:
    vendors = sorted({r["gpu_vendor"] for r in ctx.runs if r["gpu_vendor"]}, key=lambda v: (v != "nvidia", v))
    if len(vendors) < 2:
        return (
            '<p class="headline">Fewer than two GPU vendors in these runs: no cross-vendor comparison here '
            "(tcobench compare takes any two selections).</p>"
        )
    extra = f",{ctx.select}" if ctx.select else ""
    a, b = f"vendor={vendors[0]}{extra}", f"vendor={vendors[1]}{extra}"
    try:
        result = compare_on(ctx.con, a, b, claim=ctx.claim, resamples=ctx.resamples, seed=ctx.seed)
    except TcobenchError as exc:
        pair = f"<code>{escape(a)}</code> vs <code>{escape(b)}</code>"
        return f'<p class="headline">Comparison {pair}: {escape(str(exc))}</p>'
    return _comparison_html(result)


def _verdict_text(verdict: str | None, claim: float) -> str:
    if verdict is None:
        return ""
    words = {
        "inside": f"a claimed {claim:g}x lies inside the interval: consistent with these measurements",
        "above": f"a claimed {claim:g}x lies above the interval: not supported, the measured advantage is smaller",
        "below": f"a claimed {claim:g}x lies below the interval: the measured advantage is larger",
    }
    return f'<span class="verdict-{verdict}">{escape(words[verdict])}</span>'


def _comparison_html(c: Comparison) -> str:
    level = c.strata[-1]
    pct = f"{c.confidence:.0%}"
    sentence = (
        f"At concurrency {level.concurrency}, <b>{escape(c.a.text)}</b> costs {_usd(level.a_usd_per_m)} and "
        f"<b>{escape(c.b.text)}</b> costs {_usd(level.b_usd_per_m)} per 1M output tokens ({escape(c.basis)} basis); "
        f"A is <b>{level.ratio:.2f}x</b> as cost-efficient as B ({pct} CI {level.lo:.2f}-{level.hi:.2f}); "
        f"{_verdict_text(level.verdict, c.claim or 0)}. Largest cost-term difference: {escape(level.driver().term)}."
    )
    rows = [
        [
            str(s.concurrency),
            f"{s.a_runs} / {s.a_nights}",
            f"{s.b_runs} / {s.b_nights}",
            _fmt(s.a_tok_s),
            _fmt(s.b_tok_s),
            _usd(s.a_usd_per_m),
            _usd(s.b_usd_per_m),
            f"{s.ratio:.2f}",
            f"{s.lo:.2f}-{s.hi:.2f}",
            _verdict_text(s.verdict, c.claim or 0),
        ]
        for s in c.strata
    ]
    if c.pooled:
        ratio, lo, hi = c.pooled
        rows.append(
            [
                "all (geometric mean)",
                "",
                "",
                "",
                "",
                "",
                "",
                f"{ratio:.2f}",
                f"{lo:.2f}-{hi:.2f}",
                _verdict_text(c.pooled_verdict, c.claim or 0),
            ]
        )
    headers = [
        "concurrency",
        "A runs / nights",
        "B runs / nights",
        "A tok/s",
        "B tok/s",
        "A $/1M",
        "B $/1M",
        "ratio A/B",
        f"{pct} CI",
        f"claim {c.claim:g}x",
    ]
    terms = [[escape(t.term), _usd(t.a_usd_per_m), _usd(t.b_usd_per_m), _usd(t.b_minus_a)] for t in level.terms]
    return (
        f'<p class="headline">{sentence}</p>'
        + _table(headers, rows, numeric=range(1, 9))
        + f'<p class="note">A: {escape(c.a_desc)}. B: {escape(c.b_desc)}. Ratio = output tokens per USD of A / of B '
        f"(= cost per 1M tokens of B / of A). CI: bootstrap, {c.resamples} resamples of nights, runs within nights "
        f"and requests within runs (seed {c.seed}). {' '.join(escape(n) for n in c.notes)}</p>"
        + f"<p>Cost terms per 1M output tokens at concurrency {level.concurrency}:</p>"
        + _table(["term", "A", "B", "B - A"], terms, numeric=(1, 2, 3))
    )


def _record_card(ctx: _Ctx) -> str:
    cards = _rows(ctx.con, "SELECT * FROM record_card WHERE list_contains($ids, run_id) ORDER BY started", ctx.ids)
    latest: dict[str, str] = {}
    for card in cards:
        latest[ctx.of_run[card["run_id"]].label] = card["batch_id"]
    rows, rows2 = [], []
    for card in cards:
        p = ctx.of_run[card["run_id"]]
        if latest[p.label] != card["batch_id"]:
            continue
        per_m = card["electricity_usd_per_output_token"]
        rows.append(
            [
                escape(p.label),
                escape(card["gpu_model"]),
                _fmt(card["driver_version"]),
                escape(f"{card['engine']} {card['engine_version']}"),
                escape(card["model_name"]),
                str(card["concurrency"]),
                _fmt(card["mean_tok_s"]),
                _fmt(card["p50_tok_s"]),
                _fmt(card["p50_latency_ms"], 0),
                _fmt(card["single_request_ms"], 0),
                _fmt(card["mean_power_w"]),
                _fmt(card["peak_vram_gib"], 2),
                _fmt(card["adaptation_days"], 2),
                f"{_usd(per_m)} ({_usd(per_m * 1e6 if per_m is not None else None)} per 1M)",
                escape(str(card["energy_basis"])),
                f"{card['requests_ok']}{'' if card['at_least_20'] else ' (< 20)'}",
            ]
        )
        rows2.append(
            [
                escape(p.label),
                escape(f"{card['host_os']} / {card['host_kernel']}"),
                escape(card["host_cpu"]),
                str(card["host_cpu_count"]),
                _fmt(card["host_mem_gib"]),
                _fmt(card["cuda_version"] or card["rocm_version"]),
                str(card["num_ctx"]),
                _fmt(card["mean_input_tokens"]),
                str(card["max_tokens"]),
                f"<code>{escape(card['prompt_set_hash'][:12])}</code>",
                str(card["concurrency"]),
            ]
        )
    headers = [
        "platform",
        "GPU model",
        "driver version",
        "engine version",
        "model",
        "concurrency",
        "mean tok/s",
        "P50 tok/s",
        "P50 latency (ms)",
        "single-request time (ms)",
        "mean power (W)",
        "peak VRAM (GiB)",
        "adaptation days",
        "electricity cost per token",
        "energy basis",
        "requests",
    ]
    headers2 = [
        "platform",
        "OS / kernel",
        "CPU",
        "cores",
        "RAM (GiB)",
        "CUDA / ROCm",
        "context length",
        "mean input tokens",
        "output tokens",
        "prompt set",
        "concurrency",
    ]
    return (
        '<h2 id="record-card">Record card (latest night per platform)</h2>'
        + _table(headers, rows, numeric=range(5, 13))
        + '<p class="note">The seed article\'s record template. Mean / P50 tok/s: per-request decode rate (the '
        "engine's eval_count / eval_duration where it reports it, else the client's). P50 latency: end-to-end. "
        "Electricity cost per token: measured J/token x PUE x USD/kWh (an estimate from the price table without "
        "valid telemetry). Peak VRAM: model + KV cache as the driver reports it.</p>"
        + _table(headers2, rows2, numeric=(3, 4, 6, 7, 8, 10))
    )


def _throughput(ctx: _Ctx) -> str:
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
    return _figure(
        "Throughput vs concurrency",
        chart,
        legend([(p.label, p.color, None) for p in ctx.platforms]),
        "Mean over nights; bars span the lowest and highest night.",
    )


_PROBS = [i / 100 for i in range(101)]


def _distribution(ctx: _Ctx, metric: str) -> str:
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
            dash = _DASHES[levels.index(c) % len(_DASHES)]
            label = f"{p.label}, c={c}"
            lines.append(
                Line(label, p.color, [(max(float(q), 1e-3), pr) for q, pr in zip(quantiles, _PROBS, strict=True)], dash)
            )
            items.append((label, p.color, dash))
    note = "Each curve: the quantiles of a run's ok measured requests, averaged over the runs (nights) of that line."
    return _figure(caption, ecdf_chart(lines, axis), legend(items), note)


def _cost_bars(ctx: _Ctx) -> str:
    bases = [
        b
        for (b,) in ctx.con.execute("SELECT DISTINCT basis FROM cost_basis ORDER BY basis <> 'owned', basis").fetchall()
    ]
    candidates = {basis: load_candidates(ctx.con, basis) for basis in bases}
    owned = {r["run_id"]: r for r in candidates.get("owned", [])}
    rng = np.random.default_rng(ctx.seed)
    bars = []
    for p in ctx.platforms:
        level = _cheapest_level(p, owned)
        if level is None:
            continue
        for basis in bases:
            rows = [r for r in candidates[basis] if r["run_id"] in p.run_ids and r["concurrency"] == level]
            if not rows:
                continue
            samples = load_samples(ctx.con, rows, "output")
            eff = point_efficiency(samples)
            reps = bootstrap_efficiency(samples, ctx.resamples, rng)
            lo, hi = (1e6 / float(v) for v in np.percentile(reps, [97.5, 2.5]))
            value = 1e6 / eff
            bars.append(
                Bar(
                    f"{basis} (c={level})",
                    value,
                    p.color,
                    lo,
                    hi,
                    title=f"{p.label}, {basis}, concurrency {level}: {_usd(value)} per 1M output tokens, "
                    f"95% CI {_usd(lo)}-{_usd(hi)} ({len(rows)} runs)",
                    hollow=basis != "owned",
                    series=p.label,
                    note=f"{_usd(value)} ({_usd(lo)}-{_usd(hi)})",
                    group=p.label,
                )
            )
    if not bars:
        return (
            "<p>No priced run: cost per 1M tokens needs the run's hardware, site and ops rows in the price table.</p>"
        )
    chart = bar_chart(bars, "USD per 1M output tokens", label_width=230)
    return _figure(
        "Cost per 1M output tokens, 95% CI, per platform and cost basis",
        chart,
        legend([(p.label, p.color, None) for p in ctx.platforms]),
        "Each platform at its cheapest concurrency on the owned basis. Solid: owned (capex amortised + "
        "power + ops + adaptation); dashed outline: per-GPU-hour rates (rented or published all-in owned "
        "rates) + ops + adaptation. Whiskers: bootstrap 95% CI over nights, runs and requests.",
    )


def _cheapest_level(p: Platform, owned: dict[str, dict[str, Any]]) -> int | None:
    costs: dict[int, list[float]] = defaultdict(list)
    for run_id in p.run_ids:
        if run_id in owned:
            costs[owned[run_id]["concurrency"]].append(owned[run_id]["output_tokens_per_usd"])
    return max(costs, key=lambda c: float(np.mean(costs[c]))) if costs else None


def _pareto(ctx: _Ctx) -> str:
    tco = {r["run_id"]: r for r in _rows(ctx.con, "SELECT * FROM tco WHERE list_contains($ids, run_id)", ctx.ids)}
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
            f"{p.label}, concurrency {c}: e2e p90 {x:,.0f} ms, {_usd(y)} per 1M output tokens"
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
    return _figure(
        "Cost vs latency (Pareto)",
        chart,
        legend([(p.label, p.color, None) for p in ctx.platforms]),
        "One point per platform and concurrency (mean over nights). Ringed points are Pareto-optimal: no "
        "other point is both faster and cheaper.",
    )


def _energy(ctx: _Ctx) -> str:
    rows = _rows(ctx.con, "SELECT * FROM efficiency WHERE list_contains($ids, run_id)", ctx.ids)
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
    return _figure(
        "Energy per output token",
        bar_chart(bars, "joules per output token (device)", label_width=150),
        legend([(p.label, p.color, None) for p in ctx.platforms]),
        "Solid: measured (energy counter or integrated power over the measurement window / output "
        "tokens). Dashed outline: estimate from the price table's load watts / throughput.",
    )


def _targets_and_sensitivity(ctx: _Ctx) -> str:
    rows = _rows(
        ctx.con,
        "SELECT * FROM cost_at_latency_target WHERE list_contains($ids, best_run_id) OR "
        "best_run_id IS NULL ORDER BY target, usd_per_m_output_tokens NULLS LAST",
        ctx.ids,
    )
    keys = {(p.key[0], p.key[2], p.key[3], p.key[4]) for p in ctx.platforms}
    table = [
        [
            escape(r["target"]),
            f"{r['target_ttft_p90_ms']:g} / {r['target_tpot_p90_ms']:g}",
            escape(f"{r['gpu_name'] or 'CPU'} @ {r['host']}"),
            f"{r['runs_meeting']} / {r['runs']}",
            _fmt(r["concurrency"]),
            _fmt(r["output_tok_s"]),
            _fmt(r["ttft_p90_ms"], 0),
            _fmt(r["tpot_p90_ms"]),
            _usd(r["usd_per_m_output_tokens"]),
        ]
        for r in rows
        if (r["host"], r["hardware_key"], r["model_name"], r["workload"]) in keys
    ]
    headers = [
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
    sens = _rows(
        ctx.con,
        "SELECT run_id, value, usd_per_m_output_tokens FROM sensitivity WHERE parameter = "
        "'utilisation' AND list_contains($ids, run_id)",
        ctx.ids,
    )
    owned = {r["run_id"]: r for r in load_candidates(ctx.con, "owned")}
    lines = []
    for p in ctx.platforms:
        level = _cheapest_level(p, owned)
        curve: dict[float, list[float]] = defaultdict(list)
        for s in sens:
            priced = owned.get(s["run_id"])
            if priced is not None and priced["concurrency"] == level and s["usd_per_m_output_tokens"] is not None:
                curve[s["value"]].append(s["usd_per_m_output_tokens"])
        if curve:
            lines.append(
                Line(f"{p.label} (c={level})", p.color, [(u, float(np.mean(v))) for u, v in sorted(curve.items())])
            )
    out = '<h2 id="targets">Cost at latency targets</h2>' + _table(headers, table, numeric=range(3, 9))
    out += (
        '<p class="note">Best throughput among runs whose TTFT p90 and TPOT p90 meet the target '
        "(view cost_at_latency_target; targets from the price table's [latency_target] rows).</p>"
    )
    if lines:
        chart = line_chart(
            lines, "utilisation (fraction of the month serving)", "USD per 1M output tokens", log_y=True, zero_y=False
        )
        out += _figure(
            "Sensitivity: cost per 1M output tokens vs utilisation (owned)",
            chart,
            legend([(ln.label, ln.color, None) for ln in lines]),
            "View sensitivity: the same run re-priced at other utilisations (also: electricity price, "
            "lifetime). A card at 30% utilisation is not cheaper than one at 80%.",
        )
    return out


def _trend(ctx: _Ctx, series: list[Series]) -> str:
    wanted = set(ctx.ids)
    series = [s for s in series if any(pt.run_id in wanted for pt in s.points)]
    dates = sorted({pt.date for s in series for pt in s.points})
    index = {d: i for i, d in enumerate(dates)}
    lines, items, flags = [], [], []
    colors = {p.key[0]: p.color for p in ctx.platforms}
    levels = sorted({s.concurrency for s in series})
    for s in series:
        color = colors.get(s.host, "#555")
        dash = _DASHES[levels.index(s.concurrency) % len(_DASHES)]
        pts = [(float(index[pt.date]), pt.decode_tok_s_p50) for pt in s.points if pt.decode_tok_s_p50 is not None]
        marks = []
        for pt in s.points:
            for ch in pt.changes:
                if ch.flagged:
                    flags.append((s, pt, ch))
                    if ch.metric == "decode_tok_s" and pt.decode_tok_s_p50 is not None:
                        marks.append(
                            Mark(
                                float(index[pt.date]),
                                pt.decode_tok_s_p50,
                                f"flagged: {ch.metric} {ch.change_pct:+.1f}% (p={ch.p_value:.2g}, "
                                f"effect {ch.effect:+.2f}) {'; '.join(pt.provenance_changes)}",
                                "#d00",
                                s.key,
                                "changed",
                                ring=True,
                            )
                        )
        label = f"{s.gpu_name or 'CPU'} @ {s.host}, c={s.concurrency}"
        lines.append(Line(label, color, pts, dash, marks=marks))
        items.append((label, color, dash))
    if not lines:
        return '<h2 id="trend">Nightly trend</h2><p>No series.</p>'
    x_ticks = [(float(i), d[5:]) for d, i in index.items()]
    chart = line_chart(lines, "night (UTC date)", "median decode tokens/s per request", x_ticks=x_ticks, zero_y=False)
    rows = [
        [
            escape(f"{s.gpu_name or 'CPU'} @ {s.host}, c={s.concurrency}"),
            escape(pt.date),
            f"<code>{escape(pt.run_id[:12])}</code>",
            escape(ch.metric),
            f"{ch.prior_median:.4g} -> {ch.median:.4g}",
            f"{ch.change_pct:+.1f}%",
            f"{ch.p_value:.2g}",
            f"{ch.effect:+.2f}",
            escape("; ".join(pt.provenance_changes) or "-"),
        ]
        for s, pt, ch in flags
    ]
    flag_table = (
        _table(
            [
                "series",
                "night",
                "run",
                "metric",
                "prior median -> median",
                "change",
                "p (Mann-Whitney)",
                "effect (rank-biserial)",
                "what changed",
            ],
            rows,
            numeric=(5, 6, 7),
        )
        if rows
        else "<p>No change beyond run-to-run noise.</p>"
    )
    return (
        '<h2 id="trend">Nightly trend</h2>'
        + _figure(
            "Median per-request decode rate per night",
            chart,
            legend(items),
            "Red rings: flagged changes (Mann-Whitney U on per-request samples against up to 5 previous "
            "nights, p < 0.01, |rank-biserial| >= 0.5, |change| >= 5%, and beyond 3 sd of the previous "
            "nights' medians).",
        )
        + flag_table
    )


def _provenance(ctx: _Ctx) -> str:
    rows = []
    for r in ctx.runs:
        rows.append(
            [
                f"<code>{escape(r['run_id'][:12])}</code>",
                escape(r["date"]),
                escape(r["host"]),
                escape(f"{r['gpu_name'] or 'CPU'} x{r['gpu_count'] or 0}"),
                _fmt(r["driver_version"]),
                _fmt(r["cuda_version"] or r["rocm_version"]),
                escape(f"{r['engine_name']} {r['engine_version']}"),
                f"<code>{escape((r['image_digest'] or '-')[:19])}</code>",
                escape(r["model_name"]),
                f"<code>{escape((r['model_digest'] or '-')[:19])}</code>",
                f"<code>{escape(r['prompt_set_hash'][:12])}</code>",
                str(r["num_ctx"]),
                str(r["max_tokens"]),
                str(r["concurrency"]),
                escape(str(r["status"])),
                f"{r['ok']} / {r['errors']}",
                escape(f"{r['tool_version']} {(r['git_revision'] or '')[:10]}"),
                escape(f"{r['hardware_key']} / {r['site_key']} / {r['ops_key']} / u={r['utilisation']:g}"),
            ]
        )
    headers = [
        "run",
        "date",
        "host",
        "GPU",
        "driver",
        "CUDA / ROCm",
        "engine",
        "image",
        "model",
        "model digest",
        "prompt set",
        "context",
        "max tokens",
        "concurrency",
        "status",
        "ok / errors",
        "tcobench",
        "prices: hardware / site / ops / utilisation",
    ]
    sources = _rows(
        ctx.con,
        "SELECT DISTINCT term, key, source, as_of FROM tco_sources "
        "WHERE list_contains($ids, run_id) ORDER BY term, key",
        ctx.ids,
    )
    hw = sorted({r["hardware_key"] for r in ctx.runs})
    rental = _rows(
        ctx.con,
        "SELECT 'rental' AS term, key, source, as_of FROM rental WHERE list_contains($ids, hardware) ORDER BY key",
        hw,
    )
    src_rows = [
        [escape(s["term"]), escape(s["key"]), escape(str(s["source"])), escape(str(s["as_of"]))]
        for s in sources + rental
    ]
    return (
        '<h2 id="provenance">Provenance</h2>'
        + _table(headers, rows, numeric=(11, 12, 13))
        + "<p>Where every price comes from:</p>"
        + _table(["term", "key", "source", "as of"], src_rows)
    )


def build_report(
    store: Path,
    prices: PriceTable,
    *,
    select: str | None = None,
    claim: float = 5.0,
    resamples: int = 1000,
    seed: int = 0,
    price_table: str = "the shipped price table",
) -> str:
    """The report's HTML (one string, self-contained)."""
    con = connect(store, prices)
    try:
        freeze_views(con)
        ctx = _context(con, select, claim, resamples, seed)
        series = detect_changes(con)
        body = [
            "<h1>tcobench report: cost per token on your workload</h1>",
            _NAV,
            f'<p class="meta">{len(ctx.runs)} runs, {len(ctx.platforms)} platforms, nights '
            f"{escape(ctx.runs[0]['date'])} to {escape(ctx.runs[-1]['date'])}; store {escape(str(store))}; prices: "
            f"{escape(price_table)}; generated {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
            f"{'; selection ' + escape(select) if select else ''}.</p>",
            '<h2 id="headline">Headline</h2>',
            _headline(ctx),
            _record_card(ctx),
            '<h2 id="performance">Throughput and latency</h2>',
            '<div class="grid2">',
            _throughput(ctx),
            _pareto(ctx),
            _distribution(ctx, "ttft"),
            _distribution(ctx, "itl"),
            "</div>",
            '<h2 id="cost">Cost and energy</h2>',
            '<div class="grid2">',
            _cost_bars(ctx),
            _energy(ctx),
            "</div>",
            _targets_and_sensitivity(ctx),
            _trend(ctx, series),
            _provenance(ctx),
        ]
    except duckdb.Error as exc:
        raise QueryError(f"report query failed: {' '.join(str(exc).split())}") from exc
    finally:
        con.close()
    return page("tcobench report", "\n".join(body))


def write_report(store: Path, prices: PriceTable, out: Path, **options: Any) -> Path:
    """Write build_report's HTML to ``out`` atomically (a temporary file renamed into place)."""
    html = build_report(store, prices, **options)
    tmp = out.parent / f".{out.name}.{uuid.uuid4().hex}.tmp"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(html, encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        raise StoreError(f"cannot write the report to {out}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return out


def summary_markdown(store: Path, prices: PriceTable, run_ids: Sequence[str] | None = None) -> str:
    """A short Markdown summary (record card and cost per run, flags) for a Prefect artifact."""
    con = connect(store, prices)
    try:
        freeze_views(con)
        ids = run_ids if run_ids is not None else [r for (r,) in con.execute("SELECT run_id FROM runs").fetchall()]
        cards = _rows(
            con,
            "SELECT c.*, t.usd_per_m_output_tokens, t.power_basis FROM record_card AS c JOIN tco AS t "
            "USING (run_id) WHERE list_contains($ids, run_id) ORDER BY c.started",
            ids,
        )
        flags = [(s, p, c) for s in detect_changes(con) for p, c in s.flags if p.run_id in set(ids)]
    finally:
        con.close()
    lines = [
        "# tcobench summary",
        "",
        "| run | host | GPU model | driver | engine | model | c | mean tok/s | P50 latency ms | mean power W | "
        "peak VRAM GiB | adaptation days | electricity $/token | $ per 1M output tokens |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cards:
        cells = [
            c["run_id"][:8],
            c["host"],
            c["gpu_model"],
            c["driver_version"],
            f"{c['engine']} {c['engine_version']}",
            c["model_name"],
            c["concurrency"],
            _md(c["mean_tok_s"]),
            _md(c["p50_latency_ms"]),
            _md(c["mean_power_w"]),
            _md(c["peak_vram_gib"], 2),
            _md(c["adaptation_days"], 2),
            _md(c["electricity_usd_per_output_token"], 3, sci=True),
            _md(c["usd_per_m_output_tokens"], 4),
        ]
        lines.append("| " + " | ".join("-" if v is None else str(v).replace("|", "/") for v in cells) + " |")
    lines += ["", f"{len(cards)} run(s). Changes beyond run-to-run noise: {len(flags) or 'none'}."]
    for series, point, change in flags:
        lines.append(
            f"- {series.key}, {point.date}: {change.metric} {change.change_pct:+.1f}% (p={change.p_value:.2g}) "
            f"{'; '.join(point.provenance_changes)}"
        )
    return "\n".join(lines) + "\n"


def _md(value: float | None, digits: int = 1, sci: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}g}" if sci else f"{value:,.{digits}f}"
