"""report: one self-contained HTML file over the stored runs, and a Markdown summary for Prefect artifacts.

Sections: the headline comparison (``--a``/``--b``, by default the cheapest pair of platforms of different GPU
vendors, with a bootstrap CI and the verdict on a claimed ratio), the record card per platform, throughput vs
concurrency, TTFT and inter-token latency distributions, cost per 1M output tokens with CI per platform and cost
basis, cost vs latency (Pareto), energy per token, cost at latency targets and sensitivity to utilisation, the
capacity plan of a recorded trace (``--trace``: `tcobench plan`'s fleets for the headline pair), the nightly trend
with flagged changes, and the provenance of every run and price, identical platforms grouped.
Charts are inline SVG drawn here (tasks/report/assets); the page loads nothing from anywhere, and a small
in-page filter (host / model / workload, plain JavaScript) hides the runs a reader is not looking at.

A platform is (host, GPU, hardware key, model, workload, engine); labels drop the parts all platforms share.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import duckdb

from tcobench.errors import ConfigError, QueryError, StoreError
from tcobench.schemas import CompareOptions, PriceTable, TraceConfig
from tcobench.tasks.analysis.compare import parse_selection
from tcobench.tasks.analysis.compare.candidates import left_out_runs
from tcobench.tasks.analysis.compare.selection import left_out_words
from tcobench.tasks.analysis.history import HISTORY_MACROS, Series, detect_changes
from tcobench.tasks.analysis.operations import (
    Adaptation,
    availability_of,
    changes_of,
    measured_adaptation_of,
    with_measured_adaptation,
)
from tcobench.tasks.analysis.summarise import rows_by_equality
from tcobench.tasks.report.assets import (
    Platform,
    ReportContext,
    ReportRun,
    cost_figure,
    distribution_figure,
    energy_figure,
    engine_load_section,
    filter_bar,
    group_platforms,
    headline_section,
    operations_section,
    page,
    pareto_figure,
    plan_section,
    provenance_section,
    record_card_section,
    register_platforms,
    series_slug,
    targets_section,
    throughput_figure,
    trend_label,
    trend_section,
)
from tcobench.tasks.store.query import FROZEN_VIEWS, connect, describe_snapshot, freeze_views, register_prices
from tcobench.tasks.store.rows import IDS, RecordCardRow, collection_paused, fetch_rows, typed_rows
from tcobench.tasks.store.store import StoreRef
from tcobench.tasks.workload.profile_trace import profile_trace

__all__ = [
    "MARKDOWN_VIEWS",
    "REPORT_RUNS_SQL",
    "Platform",
    "build_report",
    "markdown_of",
    "summary_markdown",
    "write_report",
]

_SECTIONS = (
    ("headline", "Headline"),
    ("record-card", "Record card"),
    ("performance", "Throughput and latency"),
    ("engine", "Inside the engine"),
    ("cost", "Cost and energy"),
    ("targets", "Latency targets"),
    ("plan", "Capacity plan"),  # only with a trace (report --trace)
    ("trend", "Nightly trend"),
    ("operations", "Operations"),
    ("provenance", "Provenance"),
)


def _nav(plan: bool) -> str:
    """The table of contents; the capacity plan's entry only when the report has that section."""
    shown = (f'<a href="#{anchor}">{text}</a>' for anchor, text in _SECTIONS if plan or anchor != "plan")
    return '<nav class="toc">' + " · ".join(shown) + "</nav>"


REPORT_RUNS_SQL = "SELECT * FROM report_runs()"  # macro report_runs (tcobench/sql/macros)


def _context(
    con: duckdb.DuckDBPyConnection,
    select: str | None,
    claim: float | None,
    resamples: int,
    seed: int,
    pair: tuple[str | None, str | None] = (None, None),
    interactivity: float | None = None,
) -> ReportContext:
    runs = fetch_rows(con, REPORT_RUNS_SQL, ReportRun)
    selection = parse_selection(select, "--select") if select else None
    if selection is not None:
        runs = [r for r in runs if selection.matches(r)]
    if not runs:
        why = f" matches --select {select!r}" if select else " is stored"
        words = left_out_words(left_out_runs(con), selection)  # failed and interrupted runs: how many, and why out
        if words is not None:
            why += f": {'it matches ' if select else ''}{words}; only ok and partial runs are reported"
        raise QueryError(f"no measured run to report{why}")
    groups = group_platforms(runs)
    of_run = {run_id: p for p in groups for run_id in p.run_ids}
    register_platforms(con, of_run)
    return ReportContext(con, runs, groups, of_run, select, claim, resamples, seed, *pair, interactivity=interactivity)


def _saturation_warning(ctx: ReportContext) -> str:
    """A warning naming the runs whose client was saturated (their timings are not trustworthy), or nothing."""
    flagged = [r for r in ctx.runs if r["client_saturated"]]
    if not flagged:
        return ""
    names = ", ".join(f"{r['run_id'][:8]} ({r['host']}, c={r['concurrency']})" for r in flagged)
    first = escape(str(flagged[0]["client_check_note"]))
    return (
        f'<p class="warning"><strong>Client saturated in {len(flagged)} run(s):</strong> {escape(names)}. The '
        "load generator itself was a limit there (event-loop lag or CPU over its threshold), so those latencies "
        f"and rates understate the engine. First: {first}</p>"
    )


def _shape_warning(ctx: ReportContext) -> str:
    """A warning naming the runs whose served input or output lengths missed the asked ones (view run_shape), with
    the likely cause, or nothing."""
    shown = {r["run_id"]: r for r in ctx.runs}
    found = [
        (run_id, note)
        for run_id, note in ctx.con.execute("SELECT * FROM shape_mismatches()").fetchall()
        if run_id in shown
    ]
    if not found:
        return ""
    names = ", ".join(
        f"{run_id[:8]} ({shown[run_id]['host']}, c={shown[run_id]['concurrency']})" for run_id, _ in found[:10]
    ) + (", ..." if len(found) > 10 else "")
    return (
        f'<p class="warning"><strong>shape_mismatch in {len(found)} run(s):</strong> {escape(names)}. Their '
        "served input or output lengths differ from the asked ones by more than the shape tolerance, so they do "
        f"not measure the workload asked for. First: {escape(str(found[0][1]))}</p>"
    )


_COMPARE_DEFAULTS = CompareOptions()  # the report's bootstrap is compare's: the same runs give the same interval


@collection_paused()  # tens of thousands of row objects over a year's store (tasks/store/rows.py)
def build_report(
    store: StoreRef,
    prices: PriceTable,
    *,
    snapshot: int | None = None,
    select: str | None = None,
    a: str | None = None,
    b: str | None = None,
    claim: float | None = None,
    resamples: int = _COMPARE_DEFAULTS.resamples,
    seed: int = _COMPARE_DEFAULTS.seed,
    price_table: str = "the shipped price table",
    interactivity: float | None = None,
    trace: TraceConfig | None = None,
    adaptation: Adaptation = "assumed",
) -> str:
    """The report's HTML (one string, self-contained). ``a`` and ``b``: the headline pair (selections, both or
    neither; default: the cheapest pair of different vendors). ``claim``: a ratio the headline is checked against
    (None: no claim is stated); ``interactivity``: the headline's target in tok/s per user (None: the middle of
    the overlap of both sides' measured ranges); ``trace``: a recorded trace to plan the headline pair's fleets for
    at ``interactivity`` (the "Capacity plan" section, `tcobench plan`'s figures; None: no such section);
    ``adaptation`` 'measured': every figure prices each platform's measured adaptation days, as compare does."""
    if (a is None) != (b is None):
        given, value, missing = ("--a", a, "--b") if b is None else ("--b", b, "--a")
        raise ConfigError(
            f"give both --a and --b for the headline pair, or neither: {given} {value!r} was given without {missing}"
        )
    for text, label in ((a, "--a"), (b, "--b")):
        if text is not None:
            parse_selection(text, label)  # a bad selection fails before the store is opened
    profile = None
    if trace is not None:
        if interactivity is None:
            raise ConfigError(
                f"--trace {trace.path}: give --interactivity too, the capacity plan's target in tok/s per user"
            )
        profile = profile_trace(trace)  # a bad trace line fails before the store is opened
    # the per-run views computed as they are defined (connect's ``freeze``), but with measured adaptation only once
    # its prices are registered: every cost figure reads them
    con = connect(store, prices, snapshot=snapshot, freeze=FROZEN_VIEWS if adaptation != "measured" else ())
    try:
        measured = measured_adaptation_of(con)
        if adaptation == "measured":
            register_prices(con, with_measured_adaptation(prices, measured))
            freeze_views(con)
        ctx = _context(con, select, claim, resamples, seed, (a, b), interactivity)
        series = detect_changes(con)
        body = [
            "<h1>tcobench report: cost per token on your workload</h1>",
            _nav(profile is not None),
            _filter(ctx, series),
            f'<p class="meta">{len(ctx.runs)} runs, {len(ctx.platforms)} platforms, nights '
            f"{escape(ctx.runs[0]['date'])} to {escape(ctx.runs[-1]['date'])}; {escape(describe_snapshot(con))}; "
            f"prices: "
            f"{escape(price_table)}; generated {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
            f"{'; selection ' + escape(select) if select else ''}.</p>",
            _saturation_warning(ctx),
            _shape_warning(ctx),
            '<h2 id="headline">Headline</h2>',
            headline_section(ctx),
            record_card_section(ctx),
            '<h2 id="performance">Throughput and latency</h2>',
            '<div class="grid2">',
            throughput_figure(ctx),
            pareto_figure(ctx),
            distribution_figure(ctx, "ttft"),
            distribution_figure(ctx, "itl"),
            "</div>",
            engine_load_section(ctx),
            '<h2 id="cost">Cost and energy</h2>',
            '<div class="grid2">',
            cost_figure(ctx),
            energy_figure(ctx),
            "</div>",
            targets_section(ctx),
            *([plan_section(ctx, profile)] if profile is not None else []),  # without a trace, the page as before
            trend_section(ctx, series),
            operations_section(
                availability_of(con),
                changes_of(con, series),
                (measured, {key: row.adaptation_days for key, row in prices.hardware.items()}, adaptation),
            ),
            provenance_section(ctx),
        ]
    except duckdb.Error as exc:
        raise QueryError(f"report query failed: {' '.join(str(exc).split())}") from exc
    finally:
        con.close()
    return page("tcobench report", "\n".join(body))


def _filter(ctx: ReportContext, series: Sequence[Series]) -> str:
    """The page's filter: the hosts, models and workloads of the report's runs, and each chart series' facets."""
    choices = {
        "host": sorted({r["host"] for r in ctx.runs}),
        "model": sorted({r["model_name"] for r in ctx.runs}),
        "workload": sorted({r["workload"] for r in ctx.runs}),
    }
    facets: dict[str, dict[str, str]] = {}
    levels = sorted({r["concurrency"] for r in ctx.runs})
    for p in ctx.platforms:
        facet = {"host": p.key[0], "model": p.key[3], "workload": p.key[4]}
        for label in (p.label, *(f"{p.label}, c={c}" for c in levels), *(f"{p.label} (c={c})" for c in levels)):
            facets[series_slug(label)] = facet
    for s in series:  # the nightly trend's lines (tables.trend_section)
        facet = {"host": s.host, "model": s.model_name, "workload": s.workload}
        facets[series_slug(trend_label(s))] = facets[series_slug(s.key)] = facet  # its line, its flagged marks
    return filter_bar(choices, facets)


def write_report(store: StoreRef, prices: PriceTable, out: Path, **options: Any) -> Path:
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


class _SummaryCard(RecordCardRow):
    """A record_card row with its owned cost (view tco)."""

    usd_per_m_output_tokens: float | None
    power_basis: str


# what summary_markdown reads (detect_changes: history's macros)
MARKDOWN_VIEWS = (
    "record_card",
    "tco",
    "summary_cards",
    "nightly_trend",
    "trend_runs",
    "request_metrics",
    *HISTORY_MACROS,
)
_CARDS_SQL = f"SELECT * FROM summary_cards(one_run := $one, ids := {IDS})"  # macro summary_cards (tcobench/sql/macros)


def summary_markdown(store: StoreRef, prices: PriceTable, run_ids: Sequence[str] | None = None) -> str:
    """A short Markdown summary (record card and cost per run, flags) for a Prefect artifact."""
    # each view is read once here: no freeze_views (which would compute every run of the store, at every cell)
    con = connect(store, prices, needs=MARKDOWN_VIEWS)
    try:
        return markdown_of(con, run_ids)
    finally:
        con.close()


def markdown_of(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None = None) -> str:
    """``summary_markdown`` on a connection that defines ``MARKDOWN_VIEWS``."""
    ids = run_ids if run_ids is not None else [r for (r,) in con.execute("SELECT run_id FROM runs").fetchall()]
    # one call per run (rows_by_equality): DuckDB does not push a list filter down through the views; a night's
    # runs too, not one pass over the whole store, unless they are most of it
    cards = sorted(typed_rows(rows_by_equality(con, _CARDS_SQL, ids), _SummaryCard), key=_started)
    flags = [(s, p, c) for s in detect_changes(con, runs=ids) for p, c in s.flags if p.run_id in set(ids)]
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
            f"- {series.key}, {point.date}: {change.metric} {change.change_pct:+.1f}% (p={change.p_value:.2g}); "
            f"cost per 1M output tokens {_md(point.prior_usd_per_m_output_tokens, 4)} -> "
            f"{_md(point.usd_per_m_output_tokens, 4)}; {'; '.join(point.provenance_changes)}"
        )
    return "\n".join(lines) + "\n"


def _started(card: _SummaryCard) -> tuple[bool, str, str]:
    """Oldest first, runs without a start last (SQL's ORDER BY started), runs started together by run id."""
    return card["started"] is None, str(card["started"]), card["run_id"]


def _md(value: float | None, digits: int = 1, sci: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}g}" if sci else f"{value:,.{digits}f}"
