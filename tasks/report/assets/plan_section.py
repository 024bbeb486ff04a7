"""The report's capacity plan (`tcobench report --trace FILE --interactivity X`, issue 45): `tcobench plan`'s fleets
for a recorded trace on the headline pair, from the same ``plan_on`` (tasks/analysis/compare/plan.py; no formula
here), each figure with its CI, and the ratio of the monthly costs. Without a trace, no section."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from tcobench.errors import TcobenchError
from tcobench.schemas import PlanOptions, TraceStatsRecord
from tcobench.tasks.analysis.compare.plan import Figure, PlanResult, PlatformPlan, plan_on
from tcobench.tasks.report.assets.context import ReportContext, fmt, table, usd
from tcobench.tasks.report.assets.tables import headline_pair

__all__ = ["plan_section"]

_HEAD = '<h2 id="plan">Capacity plan</h2>'


def _cell(f: Figure | None, show: Callable[[float], str]) -> str:
    """The figure and its interval (none for a replay's: PlatformPlan.ci_note)."""
    if f is None:
        return "-"
    if f.ci_low is None or f.ci_high is None:
        return show(f.value)
    return f'{show(f.value)}<br><span class="note">{show(f.ci_low)} - {show(f.ci_high)}</span>'


def _count(value: float) -> str:
    return f"{value:,.0f}"


def _pct(value: float) -> str:
    return f"{value:+.0%}"


def _source(p: PlatformPlan) -> str:
    if p.time_scale is None:
        return escape(p.source)
    return f"{escape(p.source)} (time scale {p.time_scale:g}; no CI)"


def _rows(result: PlanResult) -> tuple[list[str], list[list[str]]]:
    bases = sorted(
        {c.basis for p in result.platforms for c in p.costs}, key=lambda b: (b != str(result.options.basis), b)
    )
    headers = [
        "side",
        "platform",
        "deploys",
        "sized from",
        "tok/s per GPU at the target",
        "GPUs an instance",
        "instances",
        "GPUs",
        "hosts",
        "headroom at the busiest minute",
        *(f"USD per month, {b}" for b in bases),
    ]
    rows = []
    for p in result.platforms:
        named = [escape(p.side), f"{escape(p.name)}<br><code>{escape(p.selection)}</code>"]
        if p.reason is not None or p.gpus is None:
            rows.append([*named, f"cannot plan: {escape(p.reason or '')}", *["-"] * (len(headers) - 3)])
            continue
        costs = {c.basis: c for c in p.costs}
        rows.append(
            [
                *named,
                escape(p.config or ""),
                _source(p),
                _cell(p.tok_s_per_gpu, _count),
                fmt(p.replica_gpus),
                _cell(p.replicas, _count),
                _cell(p.gpus, _count),
                _cell(p.hosts, _count),
                _cell(p.headroom_at_peak, _pct),
                *(_cell(costs[b].usd_month, usd) if b in costs else "-" for b in bases),
            ]
        )
    return headers, rows


def _ratio(result: PlanResult) -> str:
    o, r = result.options, result.ratio
    if r is None:
        return "<p>No ratio: the two platforms do not both have a fleet priced on the chosen basis.</p>"
    ci = "" if r.ci_low is None or r.ci_high is None else f" ({o.confidence:.0%} CI {r.ci_low:.2f}-{r.ci_high:.2f})"
    return (
        f'<p class="headline">Serving this traffic on A costs <strong>{r.value:.2f}x</strong> what it costs on B per '
        f"month, {escape(str(o.basis))} basis, at {o.interactivity:g} tok/s/user{ci}.</p>"
    )


def plan_section(ctx: ReportContext, profile: TraceStatsRecord | None) -> str:
    """The section, or '' without a trace; the headline pair is planned at ctx.interactivity (report checks it is
    given with the trace), sized for the trace's p95 per-minute output rate on the owned basis (plan's defaults)."""
    if profile is None or ctx.interactivity is None:
        return ""
    pair = headline_pair(ctx)
    if pair is None:
        return (
            _HEAD + "<p>Fewer than two GPU vendors with a cost in these runs: no pair to plan for this trace "
            "(report --a/--b and tcobench plan take any two selections).</p>"
        )
    a, b = pair
    options = PlanOptions(interactivity=ctx.interactivity, resamples=ctx.resamples, seed=ctx.seed)
    try:
        result = plan_on(ctx.con, profile, a, b, options)
    except TcobenchError as exc:
        return _HEAD + f"<p>Capacity plan of {escape(profile.path)} on the headline pair: {escape(str(exc))}</p>"
    o = result.options
    lead = (
        f"<p>{escape(profile.path)}: {profile.requests:,} requests over {profile.minutes:,} min; sized for its "
        f"{escape(str(o.at))} per-minute output rate, {result.need_tok_s:,.1f} tok/s (busiest minute "
        f"{result.peak_tok_s:,.1f} tok/s), at {o.interactivity:g} tok/s/user on the headline pair, as "
        f"<code>tcobench plan --trace {escape(profile.path)} --interactivity {o.interactivity:g} --a {escape(repr(a))} "
        f"--b {escape(repr(b))}</code> "
        f"sizes it (docs/plan.md). Each figure with its {o.confidence:.0%} CI from the frontier's bootstrap, "
        "beneath it.</p>"
    )
    headers, rows = _rows(result)
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in result.notes)
    return _HEAD + lead + table(headers, rows, numeric=range(4, len(headers))) + _ratio(result) + notes
