"""`tcobench best`: each platform's serving configurations ranked by cost per token at one interactivity, among those
that meet an SLO, and the one to deploy (tasks/analysis/compare/best.py). A thin face: parse, call the task, print."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from tcobench.cli._common import PricesOpt, SnapshotOpt, StoreOpt, guard, out, print_json, settings_for, usd
from tcobench.cli._damage import tolerate_damage
from tcobench.cli._fit import Col, number, print_table
from tcobench.cli._flags import declared, overrides, parameter, with_parameters
from tcobench.schemas import BestOptions, CostBasis

if TYPE_CHECKING:
    from tcobench.tasks.analysis.compare.best import BestResult, PlatformBest

__all__ = ["register"]

_FLAGS = declared(BestOptions)


def _own(
    a: Annotated[str, typer.Option("--a", help="Platform A: a selection of runs, as compare's --a.")],
    interactivity: Annotated[float, typer.Option("--interactivity", help="The target, tok/s per user.")],
    b: Annotated[str | None, typer.Option("--b", help="Platform B, optional; same syntax.")] = None,
    basis: Annotated[str, typer.Option("--basis", help="Cost basis: owned, or a GPU-hour tier.")] = "owned",
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples (compare's default).")] = BestOptions.model_fields[
        "resamples"
    ].default,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap (compare's default).")] = BestOptions.model_fields[
        "seed"
    ].default,
    fmt: Annotated[str, typer.Option("--format", help="table or json (one document).")] = "table",
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
    snapshot: SnapshotOpt = None,
) -> None:
    """best's options that are not BestOptions' flags (their signature only: _best takes every option)."""


def _best(**values: Any) -> None:
    """Rank each platform's serving configurations by cost per 1M output tokens at one interactivity, among those that
    meet the SLO (--slo-ttft-ms, --slo-tpot-ms: p90 at that interactivity), with the CI; says which to deploy."""
    from tcobench.tasks.analysis.compare.best import best
    from tcobench.tasks.prices import load_prices

    if values["fmt"] not in ("table", "json"):
        raise typer.BadParameter(f"{values['fmt']!r}: choose table or json", param_hint="--format")
    try:
        basis = CostBasis.parse(values["basis"])
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--basis") from None
    options = BestOptions(
        **overrides(_FLAGS, values),
        interactivity=values["interactivity"],
        basis=basis,
        resamples=values["resamples"],
        seed=values["seed"],
    )
    found = best(
        settings_for(values["store"]).store,
        load_prices(values["prices_file"]),
        values["a"],
        values["b"],
        options,
        snapshot=values["snapshot"],
    )
    if values["fmt"] == "json":
        from tcobench.tasks.analysis.compare.best import best_document

        print_json(best_document(found))
        return
    _print(found)


_params = list(inspect.signature(_own, eval_str=True).parameters.values())
with_parameters(_best, [*_params[:3], *(parameter(n, d, BestOptions) for n, d in _FLAGS.items()), *_params[3:]])


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _print_platform(p: PlatformBest, result: BestResult) -> None:
    o = result.options
    pct = f"{o.confidence:.0%}"
    slo = o.slo_ttft_ms is not None or o.slo_tpot_ms is not None
    cols = [
        Col("#"),
        Col("configuration", "left", wrap=True),
        Col("tok/s/GPU", drop=2),
        Col("$/1M"),
        Col(f"{pct} CI"),
        Col("TTFT p90 ms", drop=3),
        Col("TPOT p90 ms", drop=3),
        *([Col("SLO", "left")] if slo else []),
        Col("won", drop=1),
    ]
    rows = []
    for rank, c in enumerate(p.candidates, 1):
        if c.usd_per_m is None:
            rows.append(
                [
                    str(rank),
                    escape(c.label),
                    "-",
                    "-",
                    f"not at {o.interactivity:g}",
                    "-",
                    "-",
                    *(["-"] if slo else []),
                    "-",
                ]
            )
            continue
        ci = "-" if c.ci_low is None else f"{usd(c.ci_low)} - {usd(c.ci_high or 0.0)}"
        met = [] if not slo else ["[green]met[/]" if c.meets_slo else "[bold red]missed[/]"]
        won = "-" if c.won is None else f"{c.won:.0%}"
        rows.append(
            [
                str(rank),
                escape(c.label),
                number(c.tok_s_per_gpu or 0.0),
                usd(c.usd_per_m),
                ci,
                _ms(c.ttft_p90_ms),
                _ms(c.tpot_p90_ms),
                *met,
                won,
            ]
        )
    print_table(f"{p.side} = {escape(p.selection)}: {escape(p.name)}", cols, rows)
    for c in p.candidates:
        if c.reason is not None:
            out.print(
                f"  {escape(c.label)}: no figure at {o.interactivity:g} tok/s/user ({escape(c.reason)})",
                style="dim",
                highlight=False,
            )
        elif c.slo_note:
            out.print(f"  {escape(c.label)}: misses the SLO: {escape(c.slo_note)}", style="dim", highlight=False)
    deploy = p.deploy
    if deploy is None:
        out.print(
            f"[bold red]{p.side}: no configuration meets the SLO at {o.interactivity:g} tok/s/user[/]", highlight=False
        )
        return
    ci = "" if deploy.ci_low is None else f" ({pct} CI {usd(deploy.ci_low)} - {usd(deploy.ci_high or 0.0)})"
    won = "" if deploy.won is None else f"; the cheapest in {deploy.won:.0%} of the bootstrap's replicates"
    out.print(
        f"[bold]deploy on {p.side}[/]: {escape(deploy.label)}: {usd(deploy.usd_per_m or 0.0)} per 1M output "
        f"tokens at {o.interactivity:g} tok/s/user{ci}{won}",
        highlight=False,
    )


def _print(result: BestResult) -> None:
    o = result.options
    out.print(f"read {escape(result.snapshot)}", style="dim", highlight=False)
    slo = [f"{name} p90 <= {bound:g} ms" for name, bound in (("TTFT", o.slo_ttft_ms), ("TPOT", o.slo_tpot_ms)) if bound]
    out.print(
        f"at {o.interactivity:g} tok/s/user ({o.basis} basis; SLO: {', '.join(slo) or 'none'}); "
        "won: the share of bootstrap replicates in which the configuration was the cheapest that meets the SLO",
        style="dim",
        highlight=False,
    )
    for p in result.platforms:
        _print_platform(p, result)
    if result.ratio is not None:
        ratio, lo, hi = result.ratio
        out.print(
            f"[bold]A's deployable best is {ratio:.2f}x as cost-efficient as B's[/] at {o.interactivity:g} "
            f"tok/s/user ({o.confidence:.0%} CI {lo:.2f}-{hi:.2f})",
            highlight=False,
        )
    for note in result.notes:
        out.print(f"note: {escape(note)}", style="dim", highlight=False)


def register(app: typer.Typer) -> None:
    """Add best to the main app."""
    app.command("best")(guard(tolerate_damage(_best)))
