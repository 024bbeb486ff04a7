"""The analytics side of the command line: `tcobench compare`, `tcobench history`, `tcobench report`.

A thin face: parse, call a task, print. Errors cross it as one line (``_common.guard``).
"""

from __future__ import annotations

import datetime as dt
import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from tcobench.cli._common import PricesOpt, SnapshotOpt, StoreOpt, err, guard, out, print_json, read_settings, usd
from tcobench.cli._damage import tolerate_damage
from tcobench.cli._fit import Col, number, print_table
from tcobench.cli._flags import declared, overrides, parameter, with_parameters
from tcobench.schemas import CompareOptions, CostBasis

if TYPE_CHECKING:
    from collections.abc import Callable

    from tcobench.schemas import PriceTable
    from tcobench.tasks.analysis.compare import Comparison, Stratum
    from tcobench.tasks.store.store import StoreRef

__all__ = ["register"]

_SELECTION_HELP = (
    "Runs: key=value terms joined by ',' (all must hold), alternatives with '|'. Keys: vendor, gpu (substring), "
    "host, hardware, site, engine, engine_version, driver, model, workload, concurrency, date, since, until, "
    "run (id prefix), batch (id prefix), config (serving configuration id prefix), tp, max_num_seqs, gpus."
)


def _signedusd(value: float) -> str:
    return ("-" if value < 0 else "+") + usd(abs(value))


def _basis(value: str) -> CostBasis:
    try:
        return CostBasis.parse(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--basis") from None


_COMPARE_FLAGS = declared(CompareOptions)


def _compare_own(
    a: Annotated[str, typer.Option("--a", help=f"Selection A. {_SELECTION_HELP}")],
    b: Annotated[str, typer.Option("--b", help="Selection B, same syntax as --a.")],
    fmt: Annotated[str, typer.Option("--format", help="table, json (one document) or csv (flat rows).")] = "table",
    fail_if_unsupported: Annotated[
        bool,
        typer.Option(
            "--fail-if-unsupported", help="With --claim: exit 5 (ClaimError) where the data do not support the claim."
        ),
    ] = False,
    adaptation: Annotated[
        str,
        typer.Option(
            help="Days in the adaptation term: assumed (the price table's adaptation_days) or measured (each "
            "platform's mean time from a host's first nightly cell to its first ok run; view measured_adaptation)."
        ),
    ] = "assumed",
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
    snapshot: SnapshotOpt = None,
) -> None:
    """compare's options that are not CompareOptions' (their signature only: _compare takes every option)."""


def _compare(**values: Any) -> None:
    """Cost efficiency of A vs B (tokens per USD, A / B) with a bootstrap CI, its cost drivers and a verdict, per
    concurrency level and at equal interactivity (tok/s per user, on each side's throughput frontier)."""
    from tcobench.tasks.analysis.compare import compare_with_operations, parse_targets
    from tcobench.tasks.analysis.operations import adaptation_choice
    from tcobench.tasks.prices import load_prices

    fmt = values["fmt"]
    used = adaptation_choice(values["adaptation"])
    if fmt not in ("table", "json", "csv"):
        raise typer.BadParameter(f"{fmt!r}: choose table, json or csv", param_hint="--format")
    if values["fail_if_unsupported"] and values["claim"] is None:
        raise typer.BadParameter("needs --claim N (the ratio to check)", param_hint="--fail-if-unsupported")
    targets = parse_targets(values["interactivity"]) if values["interactivity"] is not None else None
    options = CompareOptions(**overrides(_COMPARE_FLAGS, values), basis=_basis(values["basis"]), interactivity=targets)
    store, prices = read_settings(values["store"]).store, load_prices(values["prices_file"])
    result, ops = compare_with_operations(
        store, prices, values["a"], values["b"], options, snapshot=values["snapshot"], adaptation=used
    )
    measured = ops.adaptation
    if fmt == "table":
        from tcobench.cli._operations_table import print_adaptation, print_side_operations

        _print_comparison(result)
        print_adaptation(measured, {key: row.adaptation_days for key, row in prices.hardware.items()}, used)
        print_side_operations((*result.a_hosts, *result.b_hosts), ops)
    else:
        _print_document(result, fmt)
    if values["fail_if_unsupported"]:
        _fail_if_unsupported(result)


_own = list(inspect.signature(_compare_own, eval_str=True).parameters.values())
with_parameters(_compare, [*_own[:2], *(parameter(n, d, CompareOptions) for n, d in _COMPARE_FLAGS.items()), *_own[2:]])


def _print_document(c: Comparison, fmt: str) -> None:
    """The comparison as one JSON document, or its rows as CSV (tasks/analysis/compare/document.py)."""
    import csv
    import sys

    from tcobench.tasks.analysis.compare.document import CSV_COLUMNS, comparison_document, comparison_rows

    if fmt == "json":
        print_json(comparison_document(c))
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(comparison_rows(c))


def _fail_if_unsupported(c: Comparison) -> None:
    from tcobench.errors import ClaimError
    from tcobench.tasks.analysis.compare import unsupported

    where = unsupported(c)
    if where:
        raise ClaimError(
            f"the claim 'A is {c.claim:g}x as cost-efficient as B' is not supported at "
            f"{len(where)} place(s): {'; '.join(where)}"
        )


def _print_comparison(c: Comparison) -> None:

    pct = f"{c.confidence:.0%}"
    out.print(f"read {escape(c.snapshot)}", style="dim", highlight=False)
    out.print(f"A = {escape(c.a.text)}: {escape(c.a_desc)}", highlight=False)
    out.print(f"B = {escape(c.b.text)}: {escape(c.b_desc)}", highlight=False)
    for line in c.differences:
        err.print(f"[yellow]compared despite a difference (--allow-different):[/] {escape(line)}", highlight=False)
    if c.strata:
        _print_strata(c, pct)
    _print_frontier(c)
    _print_drivers(c)
    _print_goodput(c)
    _print_flagged(c)
    for note in c.notes:
        out.print(f"note: {escape(note)}", style="dim", highlight=False)
    _print_verdict(c)
    _print_setup(c)
    _print_claim_grade(c)


def _print_frontier(c: Comparison) -> None:
    """The sides at equal interactivity: per target tok/s/GPU, $/1M and the ratio, the crossover, the verdicts."""
    from tcobench.tasks.analysis.compare.document import target_sentence

    f = c.frontier
    if f is None or not f.targets:
        return
    pct = f"{f.confidence:.0%}"
    cols = [
        Col("tok/s/user"),
        Col("tok/s/GPU A", drop=1),
        Col("tok/s/GPU B", drop=1),
        Col("$/1M A"),
        Col("$/1M B"),
        Col("ratio A/B"),
        Col(f"{pct} CI"),
        Col("note", "left", wrap=True, drop=2),
    ]
    rows = []
    for t in f.targets:
        if t.ratio is None:
            rows.append([f"{t.target:g}", "-", "-", "-", "-", "-", "-", "refused: see below"])
            continue
        note = "no clear winner" if t.no_clear_winner else ""
        if t.verdict and f.chosen:  # the claim's frame (claim_frame.judge): its verdict in words below the table
            supported = t.verdict != "above"
            words = "[green]supported[/]" if supported else "[bold red]not supported[/]"
            note = words + (f"; {note}" if note else "")
        rows.append(
            [
                f"{t.target:g}",
                number(t.a_tok_s_per_gpu),
                number(t.b_tok_s_per_gpu),
                usd(t.a_usd_per_m),
                usd(t.b_usd_per_m),
                f"{t.ratio:.3f}",
                f"{t.ci_low:.3f} - {t.ci_high:.3f}",
                note,
            ]
        )
    q = "median" if f.quantile == 0.5 else f"p{f.quantile * 100:g}"
    print_table(f"At equal interactivity (tok/s/user = 1000 / {q} TPOT ms; {c.basis} basis, output tokens)", cols, rows)
    out.print(
        f"A = {escape(f.a.name)}: frontier {f.a.range_text()}; B = {escape(f.b.name)}: frontier "
        f"{f.b.range_text()}. Targets {'asked for' if f.chosen else 'spread over the overlap'}; never "
        "extrapolated. CI: percentile bootstrap of whole nights, runs within nights and requests within runs, "
        "rebuilding both frontiers in every replicate.",
        style="dim",
        highlight=False,
    )
    cross = f.crossover
    if cross is not None:

        def spans(ranges: tuple[tuple[float, float], ...]) -> str:
            return ", ".join(f"{lo:g}-{hi:g}" for lo, hi in ranges) or "nowhere"

        where = (
            "the curves do not cross in the overlap"
            if cross.at is None
            else f"they cross at {cross.at:.1f} tok/s/user"
            + (
                f" ({pct} CI {cross.ci_low:.1f}-{cross.ci_high:.1f}, {cross.covered:.0%} of replicates cross)"
                if cross.ci_low is not None
                else ""
            )
        )
        out.print(
            f"crossover: A cheaper per token at {spans(cross.a_cheaper)} tok/s/user, B at "
            f"{spans(cross.b_cheaper)}; {where}",
            highlight=False,
        )
    for t in f.targets:
        out.print(f"[bold]at {t.target:g} tok/s/user[/]: {escape(target_sentence(f, t))}", highlight=False)
        shares = [
            f"{label}'s in {share:.0%}"
            for label, side, share in (("A", f.a, t.a_config_share), ("B", f.b, t.b_config_share))
            if len(side.configs) > 1 and share is not None
        ]
        if shares:
            out.print(
                f"  the winning configurations won in the bootstrap's replicates: {', '.join(shares)}",
                style="dim",
                highlight=False,
            )


def _short(key: str) -> str:
    """A configuration's key ('<hardware> <config_id>') as a table shows it: its config_id's first 6 characters."""
    return key.rsplit(" ", 1)[-1].removeprefix("legacy-")[:6]


def _print_strata(c: Comparison, pct: str) -> None:
    paired = any(s.pair for s in c.strata)
    cols = [
        Col("concurrency"),
        Col("runs A / B", drop=2),
        Col("nights A / B", drop=3),
        Col("tok/s A", drop=1),
        Col("tok/s B", drop=1),
        Col("$/1M A"),
        Col("$/1M B"),
        Col("ratio A/B"),
        Col(f"{pct} CI"),
    ]
    # the claim's frame is the levels unless targets of interactivity were asked for (claim_frame.judge)
    frame = c.claim is not None and (c.frontier is None or not c.frontier.chosen)
    if frame:
        cols.append(Col(f"claim {c.claim:g}x", "left"))
    rows = []
    for s in c.strata:
        verdict = [_supported_words(s.verdict != "above")] if frame and s.verdict else []
        rows.append(
            [
                _level(s),
                f"{s.a_runs} / {s.b_runs}",
                f"{s.a_nights} / {s.b_nights}",
                number(s.a_tok_s),
                number(s.b_tok_s),
                usd(s.a_usd_per_m),
                usd(s.b_usd_per_m),
                f"{s.ratio:.3f}",
                f"{s.lo:.3f} - {s.hi:.3f}",
                *verdict,
            ]
        )
    if c.pooled:
        ratio, lo, hi = c.pooled
        blank = [""] * 6
        rows.append(
            ["all (geo. mean)", *blank, f"{ratio:.3f}", f"{lo:.3f} - {hi:.3f}", *(["context"] if frame else [])]
        )
    print_table(f"Cost efficiency, A / B ({c.tokens} tokens per USD, {c.basis} basis)", cols, rows)
    if paired:  # the configurations' short ids beside each level (A's/B's), named once
        # a key is '<hardware> <config_id>': one configuration on both sides' hardware is one id, named once
        named: dict[str, str] = {}
        for s in c.strata:
            for k, v in ((s.a_config_id, s.a_config), (s.b_config_id, s.b_config)):
                named.setdefault(_short(k), v or k)
        out.print(
            "configurations: " + "; ".join(f"{k} = {escape(v)}" for k, v in sorted(named.items())),
            highlight=False,
        )
    out.print(
        f"ratio = {c.tokens} tokens per USD of A / of B (= cost per 1M tokens of B / of A): A is that many times "
        f"as cost-efficient as B. A night is a nightly batch (batch_id), not a calendar date. Each side's tok/s, "
        f"$/1M and cost terms: the mean over nights of each night's mean over its runs. CI: percentile bootstrap, "
        f"{c.resamples} resamples of whole nights (one draw per side for every concurrency level, so one bad night "
        f"hits all its levels), runs within nights and requests within runs, seed {c.seed}.",
        style="dim",
        highlight=False,
    )


def _print_setup(c: Comparison) -> None:
    """Every setting whose values differ between the sides, one table (tasks/analysis/compare/setup_table.py)."""
    if not c.setup:
        out.print(
            "Setup: no difference between A and B in engine, image, settings, model, driver, CUDA/ROCm, "
            "client placement or power limit.",
            highlight=False,
        )
        return
    rows = [[escape(d.setting), escape(", ".join(d.a)), escape(", ".join(d.b))] for d in c.setup]
    print_table(
        "Setup differences, A vs B",
        [Col("setting", "left"), Col("A", "left", wrap=True), Col("B", "left", wrap=True)],
        rows,
    )


def _print_claim_grade(c: Comparison) -> None:
    """'claim-grade: yes' or 'claim-grade: no' and each failed rule with its value and requirement."""
    if c.claim_grade is None:
        return
    head, *failed = c.claim_grade.lines()
    style = "green" if c.claim_grade.passed else "bold red"
    out.print(f"[{style}]{escape(head)}[/]", highlight=False)
    for line in failed:
        out.print(escape(line), highlight=False)


def _print_goodput(c: Comparison) -> None:
    """One line per concurrency level with an SLO on either side: requests within it and $/1M good tokens."""
    import math

    for s in c.strata:
        if math.isnan(s.a_good_fraction) and math.isnan(s.b_good_fraction):
            continue

        def side(fraction: float, cost: float) -> str:
            share = "-" if math.isnan(fraction) else f"{fraction:.1%}"
            return f"{share} within SLO, {'-' if math.isnan(cost) else usd(cost)}/1M good tokens"

        out.print(
            f"goodput at concurrency {s.concurrency}: A {side(s.a_good_fraction, s.a_good_usd_per_m)}; "
            f"B {side(s.b_good_fraction, s.b_good_usd_per_m)}",
            highlight=False,
        )


def _print_flagged(c: Comparison) -> None:
    """The runs inside each side that `tcobench history` flags, and whether they were left out."""
    if not c.flagged:
        out.print("Flagged runs: none in A or B (`tcobench history`, default rules).", highlight=False)
        return
    kept = "left out (--exclude-flagged)" if c.flagged[0].excluded else "kept; --exclude-flagged leaves them out"
    out.print(f"[bold]Flagged runs inside the sides[/] (`tcobench history`, default rules; {kept}):", highlight=False)
    for f in c.flagged:
        what = "regression" if f.worse else "improvement"
        out.print(
            f"  {f.side}: run {escape(f.run_id)} ({escape(f.series)}, {f.date}, batch {escape(f.batch_id)}): "
            f"{what}: {escape(', '.join(f.changes))}",
            highlight=False,
        )


def _level(s: Stratum) -> str:
    """A stratum's level as a table shows it: '4', or '4 (a1b2c3/d4e5f6)' where a side has several configurations."""
    return f"{s.concurrency} ({_short(s.a_config_id)}/{_short(s.b_config_id)})" if s.pair else str(s.concurrency)


def _print_drivers(c: Comparison) -> None:
    rows = []
    for s in c.strata:
        for t in s.terms:
            rows.append([_level(s), t.term, usd(t.a_usd_per_m), usd(t.b_usd_per_m), _signedusd(t.b_minus_a)])
        rows.append(
            [
                _level(s),
                "[bold]total[/]",
                usd(s.a_usd_per_m),
                usd(s.b_usd_per_m),
                _signedusd(s.b_usd_per_m - s.a_usd_per_m),
            ]
        )
        rows += _beside_rows(s)
    cols = [Col("concurrency"), Col("term", "left"), Col("A"), Col("B"), Col("B - A")]
    print_table(f"What drives the difference: cost terms per 1M {c.tokens} tokens", cols, rows)
    for s in c.strata:
        d = s.driver()
        side = "B" if d.b_minus_a > 0 else "A"
        out.print(
            f"{escape(s.where)}: throughput A/B = {s.a_tok_s / s.b_tok_s:.2f}x, monthly cost A/B = "
            f"{s.a_usd_month / s.b_usd_month:.2f}x; largest term difference: {d.term} ({side} pays "
            f"{usd(abs(d.b_minus_a))} more per 1M tokens)",
            highlight=False,
        )


def _beside_rows(s: Stratum) -> list[list[str]]:
    """The downtime term and the carbon per 1M output tokens, beside the total and never in it, where either side
    has one (docs/cost-model.md#downtime, #carbon); '-' on a side without (too little history, no rate, energy not
    measured)."""
    import math

    def show(value: float, shown: Callable[[float], str]) -> str:
        return "-" if math.isnan(value) else shown(value)

    rows = []
    a, b = s.a_downtime_usd_per_m, s.b_downtime_usd_per_m
    if not (math.isnan(a) and math.isnan(b)):
        rows.append([_level(s), "downtime (beside)", show(a, usd), show(b, usd), show(b - a, _signedusd)])
    a, b = s.a_gco2e_per_m_output_tokens, s.b_gco2e_per_m_output_tokens
    if not (math.isnan(a) and math.isnan(b)):
        grams = "{:,.1f} g".format
        rows.append(
            [_level(s), "gCO2e per 1M output", show(a, grams), show(b, grams), show(b - a, "{:+,.1f} g".format)]
        )
    return rows


def _supported_words(supported: bool) -> str:
    return "[green]supported[/]" if supported else "[bold red]not supported[/]"


def _print_verdict(c: Comparison) -> None:
    """The claim judged in its frame (claim_frame.judge): a line per target in words, the verdict, and the other
    frame as context."""
    from tcobench.tasks.analysis.compare.claim_frame import judge

    found = judge(c)
    if found is None:
        return
    for t in found.targets:
        style = "green" if t.supported else "bold red"
        out.print(f"claim {c.claim:g}x at {escape(t.where)}: [{style}]{escape(t.words)}[/]", highlight=False)
    style = "green" if found.supported else "bold red"
    out.print(f"[bold]verdict[/]: [{style}]{escape(found.summary())}[/]", highlight=False)
    if found.context:
        out.print(escape(found.context), style="dim", highlight=False)


def _history(
    series: Annotated[
        str | None, typer.Option(help="Only series whose name contains this (host | model | workload | c=N).")
    ] = None,
    window: Annotated[int, typer.Option(help="Previous runs each run is tested against.")] = 5,
    min_prior: Annotated[int, typer.Option(help="Previous runs needed before testing.")] = 2,
    alpha: Annotated[float, typer.Option(help="Significance level of the Mann-Whitney U test.")] = 0.01,
    min_change: Annotated[float, typer.Option(help="Smallest change of the median that counts, percent.")] = 5.0,
    min_effect: Annotated[float, typer.Option(help="Smallest |rank-biserial correlation| that counts.")] = 0.5,
    noise_k: Annotated[float, typer.Option(help="Change must exceed this many sd of prior runs' medians.")] = 3.0,
    flagged_only: Annotated[bool, typer.Option("--flagged-only", help="List only flagged changes.")] = False,
    detail: Annotated[
        bool,
        typer.Option(
            "--detail", help="Every run of every series, one table per series (the default when --series picks one)."
        ),
    ] = False,
    fail_on_change: Annotated[
        bool, typer.Option("--fail-on-change", help="Exit 1 when a change is flagged (for CI and cron).")
    ] = False,
    availability: Annotated[
        bool,
        typer.Option(
            "--availability",
            help="Instead of the trends: availability per platform and per host (view availability), over --since.",
        ),
    ] = False,
    since: Annotated[
        str | None,
        typer.Option(help="With --availability: only the nights that started on this date (YYYY-MM-DD, UTC) or later."),
    ] = None,
    changes: Annotated[
        bool,
        typer.Option(
            "--changes",
            help="Instead of the trends: each change of a host's driver, runtime, kernel, engine version or image, "
            "with the platform failures and flagged performance changes of the nights that followed.",
        ),
    ] = False,
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
    snapshot: SnapshotOpt = None,
) -> None:
    """Trends per (host, model, workload, concurrency) over nightly runs; flags changes beyond run-to-run noise.

    One row per series (its latest run's figures and its flagged changes), then each flagged change; --series NAME
    picking one series, or --detail, shows each run of a series. --availability and --changes show the operations
    history instead (docs/guide/history.md).
    """
    from tcobench.tasks.analysis.history import history
    from tcobench.tasks.prices import load_prices

    settings = read_settings(store)
    if since is not None and not availability:
        raise typer.BadParameter("needs --availability (the window of the availability figures)", param_hint="--since")
    if availability or changes:
        _operations(
            settings.store,
            load_prices(prices_file),
            snapshot,
            _since(since) if availability else None,
            availability=availability,
            changes=changes,
        )
        return
    found = history(
        settings.store,
        load_prices(prices_file),
        snapshot=snapshot,
        window=window,
        min_prior=min_prior,
        alpha=alpha,
        min_change=min_change / 100,
        min_effect=min_effect,
        noise_k=noise_k,
    )
    if series:
        found = [s for s in found if series.lower() in s.key.lower()]
    if not found:
        out.print(f"no series{' matches ' + repr(series) if series else ''} in {settings.store}", highlight=False)
        return
    from tcobench.cli._history_table import print_flags, print_overview, print_series

    flags = sum(len(s.flags) for s in found)
    if not flagged_only:
        if detail or len(found) == 1:
            for s in found:
                print_series(s)
        else:
            print_overview(found)
    print_flags(
        found,
        flags,
        f"Mann-Whitney U p < {alpha:g} on per-request samples against up to {window} previous "
        f"runs, |rank-biserial| >= {min_effect:g}, |change of median| >= {min_change:g}%, beyond "
        f"{noise_k:g} sd of the previous runs' medians",
    )
    if not flagged_only and not detail and len(found) > 1:
        out.print(
            "Each run of a series: --series NAME (a part of 'host | model | workload | c=N' that picks one series), "
            "or --detail for every series.",
            style="dim",
            highlight=False,
        )
    if fail_on_change and flags:
        from tcobench.errors import ChangeError

        first = next(f"{s.key}, {p.date}: {c.metric} {c.change_pct:+.1f}%" for s in found for p, c in s.flags)
        flagged_series = sum(1 for s in found if s.flags)
        raise ChangeError(
            f"{flags} flagged change(s) in {flagged_series} of {len(found)} series (--fail-on-change); first: {first}"
        )


def _since(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r}: not a date, use YYYY-MM-DD", param_hint="--since") from None


def _operations(
    store: StoreRef,
    prices: PriceTable,
    snapshot: int | None,
    since: dt.date | None,
    *,
    availability: bool,
    changes: bool,
) -> None:
    """history --availability and --changes (tasks/analysis/operations.py)."""
    from tcobench.cli._operations_table import print_availability, print_changes
    from tcobench.tasks.analysis import operations

    if availability:
        window = f"nights since {since}" if since else "every night"
        rows = operations.availability(store, prices, since, snapshot=snapshot)
        if not rows:
            out.print(f"no nightly cells in {store} ({window})", highlight=False, soft_wrap=True)
        else:
            print_availability(rows, window)
    if changes:
        found = operations.environment_changes(store, prices, snapshot=snapshot)
        if not found:
            out.print(
                f"no change of driver, runtime, firmware, kernel, engine version or image in {store}",
                highlight=False,
                soft_wrap=True,
            )
        else:
            print_changes(found)


def _report(
    path_out: Annotated[Path, typer.Option("--out", help="HTML file to write (self-contained).")] = Path("report.html"),
    select: Annotated[str | None, typer.Option(help=f"Report only these runs. {_SELECTION_HELP}")] = None,
    a: Annotated[
        str | None,
        typer.Option(
            "--a",
            help="Headline pair, side A (a selection; with --b). Default: the cheapest pair of "
            "platforms of different GPU vendors.",
        ),
    ] = None,
    b: Annotated[str | None, typer.Option("--b", help="Headline pair, side B (a selection; with --a).")] = None,
    claim: Annotated[
        float | None, typer.Option(help="Claimed ratio the headline comparison is checked against (default: none).")
    ] = None,
    interactivity: Annotated[
        float | None,
        typer.Option(help="The headline's interactivity target, tok/s per user (default: the middle of the overlap)."),
    ] = None,
    trace: Annotated[
        Path | None,
        typer.Option(
            "--trace",
            help="A recorded trace (docs/traces.md): add a capacity plan section, tcobench plan's fleets for the "
            "headline pair at --interactivity (default: none).",
        ),
    ] = None,
    resamples: Annotated[
        int, typer.Option(help="Bootstrap resamples for the confidence intervals (compare's default).")
    ] = CompareOptions.model_fields["resamples"].default,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap (compare's default).")] = CompareOptions.model_fields[
        "seed"
    ].default,
    adaptation: Annotated[
        str,
        typer.Option(
            help="Days in the adaptation term: assumed (the price table's adaptation_days) or measured (as compare)."
        ),
    ] = "assumed",
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
    snapshot: SnapshotOpt = None,
) -> None:
    """Write one self-contained HTML report: throughput, latency, cost with CIs, energy, trend, provenance."""
    from tcobench.schemas import TraceConfig
    from tcobench.tasks.analysis.operations import adaptation_choice
    from tcobench.tasks.prices import SHIPPED_TABLE, load_prices
    from tcobench.tasks.report.report import write_report

    if resamples < 100:
        raise typer.BadParameter(f"{resamples}: must be at least 100", param_hint="--resamples")
    settings = read_settings(store)
    path = write_report(
        settings.store,
        load_prices(prices_file),
        path_out,
        select=select,
        a=a,
        b=b,
        claim=claim,
        resamples=resamples,
        seed=seed,
        price_table=str(prices_file or SHIPPED_TABLE),
        snapshot=snapshot,
        interactivity=interactivity,
        trace=None if trace is None else TraceConfig(path=trace),
        adaptation=adaptation_choice(adaptation),
    )
    out.print(f"wrote {path} ({path.stat().st_size / 1024:,.0f} KiB); open it in any browser, offline", highlight=False)


def register(app: typer.Typer) -> None:
    """Add compare, history and report to the main app."""

    app.command("compare")(guard(tolerate_damage(_compare)))
    app.command("history")(guard(tolerate_damage(_history)))
    app.command("report")(guard(tolerate_damage(_report)))
