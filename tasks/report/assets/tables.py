"""The report's table-led sections: headline comparison, record card, nightly trend, provenance."""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Callable, Sequence
from html import escape
from typing import TypedDict, TypeVar

from tcobench.errors import TcobenchError
from tcobench.tasks.analysis.compare import CompareOptions, Comparison, Stratum, Verdict, compare_on, parse_selection
from tcobench.tasks.analysis.compare.claim_frame import judge
from tcobench.tasks.analysis.history import Point, Series
from tcobench.tasks.report.assets.context import (
    DASHES,
    Platform,
    ReportContext,
    ReportRun,
    accelerator,
    cheapest_tokens_per_usd,
    figure,
    fmt,
    query_rows,
    table,
    usd,
)
from tcobench.tasks.report.assets.frontier_figures import frontier_headline, frontier_section
from tcobench.tasks.report.assets.svg import Line, Mark, legend, line_chart
from tcobench.tasks.store.rows import IDS, RecordCardRow, id_list

__all__ = [
    "claim_verdict_html",
    "trend_label",
    "cheapest_pair",
    "headline_pair",
    "headline_section",
    "provenance_section",
    "record_card_section",
    "trend_section",
]


def _platform_selection(p: Platform) -> str:
    """A selection that takes exactly this platform's runs (host, price row, model, workload, engine)."""
    host, _, hardware, model, workload, engine = p.key
    return f"host={host},hardware={hardware},model={model},workload={workload},engine={engine}"


def cheapest_pair(ctx: ReportContext) -> tuple[Platform, Platform] | None:
    """The cheapest platform (most output tokens per USD, owned basis, at its best concurrency: night-weighted as
    everywhere) and the cheapest of a different GPU vendor, preferring one on the same model and workload;
    None when the report's runs have fewer than two vendors with a cost."""
    best = cheapest_tokens_per_usd(ctx)
    vendor = {ctx.of_run[r["run_id"]].label: r["gpu_vendor"] for r in ctx.runs}
    ranked = sorted(
        (p for p in ctx.platforms if p.label in best and vendor.get(p.label)), key=lambda p: (-best[p.label], p.label)
    )
    if not ranked:
        return None
    first = ranked[0]
    others = [p for p in ranked if vendor[p.label] != vendor[first.label]]
    alike = [p for p in others if p.key[3:5] == first.key[3:5]]
    return (first, (alike or others)[0]) if others else None


def _vendors(ctx: ReportContext, selection: str) -> str:
    """The GPU vendors of a side's runs, each marked when only declared (the inventory's, not detected)."""
    chosen = parse_selection(selection, "headline side")
    found = sorted(
        {(str(r["gpu_vendor"] or "cpu"), r["gpu_source"] == "declared") for r in ctx.runs if chosen.matches(r)}
    )
    return ", ".join(f"{vendor}{' declared' if declared else ''}" for vendor, declared in found) or "no runs"


def _headline(ctx: ReportContext) -> tuple[str, str, tuple[Platform, Platform] | None] | None:
    """The headline pair's selections (--a/--b, or the cheapest pair of different vendors; each narrowed by
    --select) and, when chosen by cost, that pair of platforms; None: no pair."""
    extra = f",{ctx.select}" if ctx.select else ""
    if ctx.a is not None and ctx.b is not None:
        return ctx.a + extra, ctx.b + extra, None
    pair = cheapest_pair(ctx)
    if pair is None:
        return None
    return _platform_selection(pair[0]) + extra, _platform_selection(pair[1]) + extra, pair


def headline_pair(ctx: ReportContext) -> tuple[str, str] | None:
    """The headline pair's selections, as headline_section compares them: what the capacity plan section plans
    (plan_section.py); None: no pair."""
    found = _headline(ctx)
    return None if found is None else (found[0], found[1])


def headline_section(ctx: ReportContext) -> str:
    """The comparison of the headline pair: --a/--b, or the cheapest pair of platforms of different vendors."""
    found = _headline(ctx)
    if found is None:
        return (
            '<p class="headline">Fewer than two GPU vendors with a cost in these runs: no cross-vendor '
            "comparison here (report --a/--b and tcobench compare take any two selections).</p>"
        )
    a, b, pair = found
    if pair is None:
        chosen, names = "chosen with --a/--b", (a, b)
    else:
        names = (pair[0].label, pair[1].label)
        chosen = (
            f"the cheapest pair of different vendors: {escape(pair[0].label)} vs {escape(pair[1].label)}; "
            "choose another with report --a/--b"
        )
    names = (f"{names[0]} ({_vendors(ctx, a)})", f"{names[1]} ({_vendors(ctx, b)})")
    pair_html = f"<code>{escape(a)}</code> vs <code>{escape(b)}</code>"
    try:
        options = CompareOptions(
            claim=ctx.claim,
            resamples=ctx.resamples,
            seed=ctx.seed,
            interactivity=None if ctx.interactivity is None else (ctx.interactivity,),
        )
        result = compare_on(ctx.con, a, b, options)
    except TcobenchError as exc:
        return f'<p class="headline">Comparison {pair_html} ({chosen}): {escape(str(exc))}</p>'
    return (
        f'<p class="note">Headline pair ({chosen}): A = {pair_html.replace(" vs ", ", B = ")}.</p>'
        + claim_verdict_html(result)
        + frontier_headline(result)
        + (_comparison_html(result, names) if result.strata else "")
        + frontier_section(result)
    )


def _verdict_text(verdict: Verdict | None, in_frame: bool) -> str:
    """A level's cell in the claim column: supported or not where the levels are the claim's frame
    (claim_frame.judge), else 'context'."""
    if verdict is None:
        return ""
    if not in_frame:
        return "context"
    supported = verdict is not Verdict.above
    words = "supported" if supported else "not supported"
    return f'<span class="verdict-{"inside" if supported else "above"}">{words}</span>'


def claim_verdict_html(c: Comparison) -> str:
    """The claim judged in its frame (claim_frame.judge), as compare prints it: the verdict, a line per target in
    words, and the other frame as context. '' without a claim."""
    found = judge(c)
    if found is None:
        return ""

    def css(supported: bool) -> str:
        return "verdict-inside" if supported else "verdict-above"

    lines = "".join(
        f'<li>claim {found.claim:g}x at {escape(t.where)}: <span class="{css(t.supported)}">'
        f"{escape(t.words)}</span></li>"
        for t in found.targets
    )
    context = f'<p class="note">{escape(found.context)}</p>' if found.context else ""
    return (
        f'<p class="headline" id="claim-verdict"><b>verdict</b>: <span class="{css(found.supported)}">'
        f"{escape(found.summary())}</span></p><ul>{lines}</ul>{context}"
    )


def _stratum_row(s: Stratum, in_frame: bool) -> list[str]:
    return [
        str(s.concurrency),
        f"{s.a_runs} / {s.a_nights}",
        f"{s.b_runs} / {s.b_nights}",
        fmt(s.a_tok_s),
        fmt(s.b_tok_s),
        usd(s.a_usd_per_m),
        usd(s.b_usd_per_m),
        f"{s.ratio:.2f}",
        f"{s.lo:.2f}-{s.hi:.2f}",
        _verdict_text(s.verdict, in_frame),
    ]


def _goodput_html(c: Comparison) -> str:
    """A line per concurrency level with an SLO: requests within it and cost per 1M good tokens, each side."""

    def side(fraction: float, cost: float) -> str:
        share = "-" if math.isnan(fraction) else f"{fraction:.1%}"
        return f"{share} of requests within the SLO, {'-' if math.isnan(cost) else usd(cost)} per 1M good tokens"

    lines = [
        f"Goodput at concurrency {s.concurrency}: A {side(s.a_good_fraction, s.a_good_usd_per_m)}; "
        f"B {side(s.b_good_fraction, s.b_good_usd_per_m)} (view goodput)."
        for s in c.strata
        if not (math.isnan(s.a_good_fraction) and math.isnan(s.b_good_fraction))
    ]
    return "".join(f'<p class="goodput">{escape(line)}</p>' for line in lines)


def _beside_terms(s: Stratum) -> list[list[str]]:
    """The downtime term and the carbon per 1M output tokens, beside the cost terms and never in the total, where
    either side has one (docs/cost-model.md#downtime, #carbon); '-' on a side without."""

    def show(value: float, shown: Callable[[float], str]) -> str:
        return "-" if math.isnan(value) else shown(value)

    rows = []
    a, b = s.a_downtime_usd_per_m, s.b_downtime_usd_per_m
    if not (math.isnan(a) and math.isnan(b)):
        rows.append(["downtime (beside the total)", show(a, usd), show(b, usd), show(b - a, usd)])
    a, b = s.a_gco2e_per_m_output_tokens, s.b_gco2e_per_m_output_tokens
    if not (math.isnan(a) and math.isnan(b)):
        grams = "{:,.1f} gCO2e".format
        rows.append(["carbon (not a cost)", show(a, grams), show(b, grams), show(b - a, "{:+,.1f} gCO2e".format)])
    return rows


def _comparison_html(c: Comparison, names: tuple[str, str]) -> str:
    """The headline sentence (at the highest concurrency), the table per level, and the cost terms."""
    level, pct, claim = c.strata[-1], f"{c.confidence:.0%}", c.claim or 0.0
    found = judge(c)
    in_frame = found is not None and found.frame == "concurrency"
    sentence = (
        f"At {escape(level.where)}, <b>{escape(names[0])}</b> (A) costs {usd(level.a_usd_per_m)} and "
        f"<b>{escape(names[1])}</b> (B) costs {usd(level.b_usd_per_m)} per 1M output tokens ({escape(str(c.basis))} "
        "basis); "
        f"A is <b>{level.ratio:.2f}x</b> as cost-efficient as B ({pct} CI {level.lo:.2f}-{level.hi:.2f})"
        f"{'' if in_frame or found is None else ' (not the claim frame: context)'}. Largest cost-term difference: "
        f"{escape(level.driver().term)}."
    )
    rows = [_stratum_row(s, in_frame) for s in c.strata]
    if c.pooled:
        ratio, lo, hi = c.pooled
        rows.append(
            [
                "all (geometric mean)",
                *[""] * 6,
                f"{ratio:.2f}",
                f"{lo:.2f}-{hi:.2f}",
                "context" if c.pooled_verdict is not None else "",
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
        f"claim {claim:g}x" if c.claim is not None else "claim (none stated)",
    ]
    terms = [[escape(t.term), usd(t.a_usd_per_m), usd(t.b_usd_per_m), usd(t.b_minus_a)] for t in level.terms]
    terms += _beside_terms(level)
    note = (
        f"A: {c.a_desc}. B: {c.b_desc}. Ratio = output tokens per USD of A / of B (= cost per 1M tokens of B / of "
        f"A). Each side's tok/s, $/1M and cost terms: the mean over nights of each night's mean over its runs "
        f"(view cost_basis; as in view platform_cost); a night is a nightly batch. CI: bootstrap, {c.resamples} "
        f"resamples of whole nights (all levels of a night together), runs within nights and requests within runs "
        f"(seed {c.seed}). {' '.join(c.notes)}{_flagged_note(c)}"
    )
    return (
        f'<p class="headline">{sentence}</p>'
        + table(headers, rows, numeric=range(1, 9))
        + _goodput_html(c)
        + f'<p class="note">{escape(note)}</p>'
        + f"<p>Cost terms per 1M output tokens at concurrency {level.concurrency}:</p>"
        + table(["term", "A", "B", "B - A"], terms, numeric=(1, 2, 3))
        + _claim_html(c)
    )


def _claim_html(c: Comparison) -> str:
    """The claim-grade stamp with each failed rule, and the setup differences (tcobench compare prints the same)."""
    html = ""
    if c.claim_grade is not None:
        head, *failed = c.claim_grade.lines()
        html += f'<p class="headline"><b>{escape(head)}</b></p>'
        html += "".join(f'<p class="note">{escape(line.strip())}</p>' for line in failed)
    if c.setup:
        rows = [[escape(d.setting), escape(", ".join(d.a)), escape(", ".join(d.b))] for d in c.setup]
        html += "<p>Setup differences, A vs B:</p>" + table(["setting", "A", "B"], rows, numeric=())
    return html


def _flagged_note(c: Comparison) -> str:
    """The runs of either side that `tcobench history` flags (kept in the comparison)."""
    if not c.flagged:
        return ""
    runs = "; ".join(f"{f.side}: {f.run_id} ({f.date}, {', '.join(f.changes)})" for f in c.flagged)
    return f" Flagged runs inside the sides (kept; tcobench compare --exclude-flagged leaves them out): {runs}."


Row = TypeVar("Row", RecordCardRow, ReportRun)
CardColumn = tuple[str, Callable[[RecordCardRow], str]]
RunColumn = tuple[str, Callable[[ReportRun], str]]


def _code(text: str | None, width: int = 12) -> str:
    return f"<code>{escape((text or '-')[:width])}</code>"


def _per_token(card: RecordCardRow) -> str:
    return (
        f"{usd(card['electricity_usd_per_output_token'])} ({usd(card['electricity_usd_per_m_output_tokens'])} per 1M)"
    )


# The record card (view record_card), then the host and software facts behind it.
def _gpu(card: RecordCardRow) -> str:
    """The GPU model, its count, and whether it was detected or only declared (flagged when they disagree)."""
    count = f"{card['gpu_count']} x " if card["gpu_source"] and card["gpu_count"] else ""
    source = f" ({card['gpu_source']})" if card["gpu_source"] else ""
    warning = card["identity_warning"]
    flag = f' <span class="warning" title="{escape(warning)}">declared/detected mismatch</span>' if warning else ""
    return escape(f"{count}{card['gpu_model']}{source}") + flag


def _engine(card: RecordCardRow) -> str:
    label = f"{card['engine_label']}: " if card["engine_label"] else ""
    return escape(f"{label}{card['engine']} {card['engine_version']}")


def _host_fact(text: str, card: RecordCardRow) -> str:
    """A host fact, marked when it was read on the load generator's machine rather than the engine's host."""
    return escape(
        text + (" (load generator; engine host not detected)" if card["host_facts_source"] == "client" else "")
    )


_CARD: list[CardColumn] = [
    ("GPU model", _gpu),
    ("driver version", lambda c: fmt(c["driver_version"])),
    ("engine version", _engine),
    ("model", lambda c: escape(c["model_name"])),
    ("concurrency", lambda c: str(c["concurrency"])),
    ("mean tok/s", lambda c: fmt(c["mean_tok_s"])),
    ("P50 tok/s", lambda c: fmt(c["p50_tok_s"])),
    ("P50 latency (ms)", lambda c: fmt(c["p50_latency_ms"], 0)),
    ("single-request time (ms)", lambda c: fmt(c["single_request_ms"], 0)),
    ("mean power (W)", lambda c: fmt(c["mean_power_w"])),
    ("peak VRAM (GiB)", lambda c: fmt(c["peak_vram_gib"], 2)),
    ("adaptation days", lambda c: fmt(c["adaptation_days"], 2)),
    ("electricity cost per token", _per_token),
    ("energy basis", lambda c: escape(str(c["energy_basis"]))),
    ("requests", lambda c: f"{c['requests_ok']}{'' if c['at_least_20'] else ' (< 20)'}"),
]
_HOST: list[CardColumn] = [
    ("OS / kernel", lambda c: _host_fact(f"{c['host_os']} / {c['host_kernel']}", c)),
    ("CPU", lambda c: _host_fact(c["host_cpu"], c)),
    ("cores", lambda c: str(c["host_cpu_count"])),
    ("RAM (GiB)", lambda c: fmt(c["host_mem_gib"])),
    ("CUDA / ROCm", lambda c: fmt(c["cuda_version"] or c["rocm_version"])),
    ("context length", lambda c: str(c["num_ctx"])),
    ("mean input tokens", lambda c: fmt(c["mean_input_tokens"])),
    ("output tokens", lambda c: str(c["max_tokens"])),
    ("prompt set", lambda c: _code(c["prompt_set_hash"])),
    ("concurrency", lambda c: str(c["concurrency"])),
]


def _made_by(run: ReportRun) -> str:
    """The tcobench version (and commit) that wrote the run, and for an imported run the file's tool and version."""
    made = f"{run['tool_version']} {(run['git_revision'] or '')[:10]}"
    return made if run["source"] is None else f"{made}; {run['source']}"


# Provenance: one row per group of runs that share every one of these (an identical platform and setup) ...
_SHARED: list[RunColumn] = [
    ("host", lambda r: escape(r["host"])),
    ("GPU", lambda r: escape(accelerator(r["gpu_name"], r["gpu_count"], r["host_cpu_count"]))),
    ("driver", lambda r: fmt(r["driver_version"])),
    ("CUDA / ROCm", lambda r: fmt(r["cuda_version"] or r["rocm_version"])),
    ("engine", lambda r: escape(f"{r['engine_name']} {r['engine_version']}")),
    ("image", lambda r: _code(r["image_digest"], 19)),
    ("model", lambda r: escape(r["model_name"])),
    ("model digest", lambda r: _code(r["model_digest"], 19)),
    ("prompt set", lambda r: _code(r["prompt_set_hash"])),
    ("context", lambda r: str(r["num_ctx"])),
    ("max tokens", lambda r: str(r["max_tokens"])),
    ("tcobench", lambda r: escape(_made_by(r))),
    (
        "prices: hardware / site / ops / utilisation",
        lambda r: escape(f"{r['hardware_key']} / {r['site_key']} / {r['ops_key']} / u={r['utilisation']:g}"),
    ),
]
# the run fields _SHARED's cells read: runs equal in these share every cell, so a group's cells are made once (escaping
# one run at a time is slow: docs/dev/performance.md#report-shared-cells; tests/unit/tasks/report/test_report.py checks
# the list)
_SHARED_FIELDS = (
    "host",
    "gpu_name",
    "gpu_count",
    "host_cpu_count",
    "driver_version",
    "cuda_version",
    "rocm_version",
    "engine_name",
    "engine_version",
    "image_digest",
    "model_name",
    "model_digest",
    "prompt_set_hash",
    "num_ctx",
    "max_tokens",
    "tool_version",
    "git_revision",
    "source",
    "hardware_key",
    "site_key",
    "ops_key",
    "utilisation",
)


# ... and what is summed up over the group's runs
def _group_cells(runs: Sequence[ReportRun]) -> list[str]:
    statuses = Counter(str(r["status"]) for r in runs)
    dates = sorted({r["date"] for r in runs})
    return [
        str(len(runs)),
        str(len({r["batch_id"] for r in runs})),
        escape(dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]} ({len(dates)})"),
        escape(", ".join(str(c) for c in sorted({r["concurrency"] for r in runs}))),
        escape(", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))),
        f"{sum(r['ok'] for r in runs)} / {sum(r['errors'] for r in runs)}",
    ]


_GROUP_HEADERS = ["runs", "nights", "dates (UTC)", "concurrency", "status", "requests ok / errors"]


_CARD_NOTE = (
    "The record card: what a reader needs to reproduce or question these figures. One row per run of the "
    "platform's latest batch (its latest night); nothing is averaged over runs or nights. Mean / P50 tok/s: the "
    "mean / median over the run's ok measured requests of each request's decode rate (the engine's eval_count / "
    "eval_duration where it reports it, else the client's). P50 latency: the median end-to-end time of the run's "
    "ok measured requests. Mean input tokens: the run's prompt tokens / its ok measured requests. Mean power: the "
    "devices' energy over the samples bracketing the measurement window / their span (view energy). Electricity "
    "cost per token: measured J/token x PUE x USD/kWh (an estimate from the price table without valid telemetry). "
    "Peak VRAM: model + KV cache as the driver reports it. GPU model: (detected) when a GPU sampler read it where "
    "the engine runs, (declared) when only the inventory says so; host facts read on the load generator's machine "
    "rather than the engine's host are marked."
)


def _columns_table(
    columns: Sequence[tuple[str, Callable[[Row], str]]],
    rows: Sequence[tuple[str, Row]],
    numeric: Sequence[int],
    row_attrs: Sequence[str] = (),
) -> str:
    """A table with a leading platform column (when labels are given) and one column per spec."""
    headers = (["platform"] if rows and rows[0][0] else []) + [name for name, _ in columns]
    cells = [([escape(label)] if label else []) + [cell(row) for _, cell in columns] for label, row in rows]
    return table(headers, cells, numeric=numeric, row_attrs=row_attrs)


def record_card_section(ctx: ReportContext) -> str:
    """The record card of each platform's latest batch (that of its last started run), one row per concurrency
    level, grouped by platform (the report's platform order) and sorted by concurrency within it. Only those runs'
    cards are read (docs/dev/performance.md#record-cards)."""
    latest = {ctx.of_run[r["run_id"]].label: r["batch_id"] for r in ctx.runs}  # runs oldest first: the last wins
    ids = [r["run_id"] for r in ctx.runs if latest[ctx.of_run[r["run_id"]].label] == r["batch_id"]]
    sql = f"SELECT * FROM record_cards({IDS})"
    order = {p.label: i for i, p in enumerate(ctx.platforms)}
    cards = query_rows(ctx.con, sql, RecordCardRow, ids)  # grouped by platform, then by concurrency
    cards.sort(key=lambda c: (order[ctx.of_run[c["run_id"]].label], c["concurrency"]))
    shown = [(ctx.of_run[c["run_id"]].label, c) for c in cards]
    keys = [ctx.of_run[c["run_id"]].key for _, c in shown]
    attrs = [_filter_attrs(k[0], k[3], k[4]) for k in keys]
    return (
        '<h2 id="record-card">Record card (latest night per platform)</h2>'
        + _columns_table(_CARD, shown, numeric=range(5, 13), row_attrs=attrs)
        + f'<p class="note">{escape(_CARD_NOTE)}</p>'
        + _identity_warnings(ctx)
        + _columns_table(_HOST, shown, numeric=(3, 4, 6, 7, 8, 10), row_attrs=attrs)
    )


def _identity_warnings(ctx: ReportContext) -> str:
    """One line per host whose declared and detected hardware disagree (any of the report's runs: view runs)."""
    seen = ctx.con.execute(f"SELECT * FROM identity_warnings({IDS})", {"ids": id_list(ctx.ids)}).fetchall()
    return "".join(f'<p class="warning">Host {escape(host)}: {escape(str(warning))}</p>' for host, warning in seen)


def _trend_line(s: Series, index: dict[tuple[str, str], int], color: str, dash: str | None) -> Line:
    """One series' medians per night (a nightly batch), the flagged decode-rate changes ringed."""
    pts = [
        (float(index[pt.date, pt.batch_id]), pt.decode_tok_s_p50) for pt in s.points if pt.decode_tok_s_p50 is not None
    ]
    marks = [
        Mark(
            float(index[pt.date, pt.batch_id]),
            pt.decode_tok_s_p50,
            f"flagged: {ch.metric} {ch.change_pct:+.1f}% (p={ch.p_value:.2g}, effect {ch.effect:+.2f}) "
            f"{'; '.join(pt.provenance_changes)}",
            "#d00",
            s.key,
            "changed",
            ring=True,
        )
        for pt, ch in s.flags
        if ch.metric == "decode_tok_s" and pt.decode_tok_s_p50 is not None
    ]
    return Line(trend_label(s), color, pts, dash, marks=marks)


def trend_label(s: Series) -> str:
    """The label (and so the data-series) of a series' line in the nightly trend."""
    return f"{s.gpu_name or 'CPU'} @ {s.host}, c={s.concurrency}"


_FLAG_HEADERS = [
    "series",
    "night",
    "run",
    "metric",
    "prior median -> median",
    "change",
    "p (Mann-Whitney)",
    "effect (rank-biserial)",
    "$/1M output tokens: prior median -> run",
    "what changed",
]
_TREND_NOTE = (
    "Each point: one run of a series (host, model, workload, concurrency) at its night (UTC date): the median over "
    "the run's ok measured requests of each request's decode rate, client clock (view run_summary's "
    "req_decode_tok_s_p50); nothing is averaged over runs or nights. Red rings: flagged changes (Mann-Whitney U of "
    "the run's per-request decode rates against those of up to 5 previous runs of its series, p < 0.01, "
    "|rank-biserial| >= 0.5, |change of the median| >= 5%, and beyond 3 sd of those runs' medians)."
)


def _cost_change(pt: Point) -> str:
    """What a flagged run's change did to cost: the prior runs' median cost per 1M output tokens -> the run's."""
    if pt.prior_usd_per_m_output_tokens is None or pt.usd_per_m_output_tokens is None:
        return "not priced"
    change = pt.cost_change_pct
    return f"{usd(pt.prior_usd_per_m_output_tokens)} -> {usd(pt.usd_per_m_output_tokens)}" + (
        f" ({change:+.1f}%)" if change is not None else ""
    )


def _flag_table(series: list[Series]) -> str:
    rows = [
        [
            escape(f"{s.gpu_name or 'CPU'} @ {s.host}, c={s.concurrency}"),
            escape(pt.date),
            _code(pt.run_id),
            escape(ch.metric),
            f"{ch.prior_median:.4g} -> {ch.median:.4g}",
            f"{ch.change_pct:+.1f}%",
            f"{ch.p_value:.2g}",
            f"{ch.effect:+.2f}",
            _cost_change(pt),
            escape("; ".join(pt.provenance_changes) or "-"),
        ]
        for s in series
        for pt, ch in s.flags
    ]
    attrs = [_filter_attrs(s.host, s.model_name, s.workload) for s in series for _ in s.flags]
    if not rows:
        return "<p>No change beyond run-to-run noise.</p>"
    return table(_FLAG_HEADERS, rows, numeric=(5, 6, 7), row_attrs=attrs)


def trend_section(ctx: ReportContext, series: list[Series]) -> str:
    """Each run's median decode rate, by night, of every series with a run in the report, and the flagged changes."""
    wanted = set(ctx.ids)
    series = [s for s in series if any(pt.run_id in wanted for pt in s.points)]
    if not series:
        return '<h2 id="trend">Nightly trend</h2><p>No series.</p>'
    # one x position per night (nightly batch), in order of its first run; same-date nights get "#2", "#3"...
    first: dict[tuple[str, str], dt.datetime] = {}
    for pt in (pt for s in series for pt in s.points):
        first[pt.date, pt.batch_id] = min(first.get((pt.date, pt.batch_id), pt.started), pt.started)
    index = {night: i for i, night in enumerate(sorted(first, key=lambda n: (first[n], n)))}
    colors = {p.key[0]: p.color for p in ctx.platforms}
    levels = sorted({s.concurrency for s in series})
    lines = [
        _trend_line(s, index, colors.get(s.host, "#555"), DASHES[levels.index(s.concurrency) % len(DASHES)])
        for s in series
    ]
    x_ticks, seen = [], Counter[str]()
    for (date, _), i in index.items():
        seen[date] += 1
        x_ticks.append((float(i), date[5:] + (f" #{seen[date]}" if seen[date] > 1 else "")))
    chart = line_chart(
        lines,
        "night (nightly batch; UTC date, #n: the n-th that date)",
        "median decode tokens/s per request",
        x_ticks=x_ticks,
        zero_y=False,
    )
    caption = "Median per-request decode rate of each run, by night"
    items = [(ln.label, ln.color, ln.dash) for ln in lines]
    return (
        '<h2 id="trend">Nightly trend</h2>' + figure(caption, chart, legend(items), _TREND_NOTE) + _flag_table(series)
    )


class _Source(TypedDict):
    """Where one price comes from: view tco_sources' term, key, source and as_of, and the [rental] rows'."""

    term: str
    key: str
    source: str | None
    as_of: dt.date | None


def provenance_section(ctx: ReportContext) -> str:
    """Every run's provenance, and where every price it was costed with comes from."""
    sources = query_rows(
        ctx.con,
        f"SELECT * FROM price_sources({IDS}, $hw)",
        _Source,
        ctx.ids,
        hw=sorted({r["hardware_key"] for r in ctx.runs}),
    )
    src_rows = [
        [escape(s["term"]), escape(s["key"]), escape(str(s["source"])), escape(str(s["as_of"]))] for s in sources
    ]
    same: dict[tuple[object, ...], list[ReportRun]] = {}
    for run in ctx.runs:
        same.setdefault(tuple(run[f] for f in _SHARED_FIELDS), []).append(run)  # type: ignore[literal-required]
    groups: dict[tuple[str, ...], list[ReportRun]] = {}
    for runs in same.values():  # raw values that differ may still read the same (a digest's first 19 characters)
        groups.setdefault(tuple(cell(runs[0]) for _, cell in _SHARED), []).extend(runs)
    rows = [[*_group_cells(runs), *shared] for shared, runs in groups.items()]
    headers = [*_GROUP_HEADERS, *(name for name, _ in _SHARED)]
    attrs = [_filter_attrs(runs[0]["host"], runs[0]["model_name"], runs[0]["workload"]) for runs in groups.values()]
    return (
        '<h2 id="provenance">Provenance</h2>'
        + f"<p>{len(ctx.runs)} runs in {len(groups)} group(s): runs that share host, GPU, driver, engine, image, "
        'model, prompts, settings and prices are one row (list every run with <code>tcobench query "SELECT * FROM '
        'runs"</code>).</p>'
        + table(headers, rows, numeric=(0, 1, 15, 16), row_attrs=attrs)
        + "<p>Where every price comes from:</p>"
        + table(["term", "key", "source", "as of"], src_rows)
    )


def _filter_attrs(host: str, model: str, workload: str) -> str:
    """The attributes the page's filter reads on a table row."""
    return f'data-host="{escape(host)}" data-model="{escape(model)}" data-workload="{escape(workload)}"'
