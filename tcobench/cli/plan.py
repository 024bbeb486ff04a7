"""`tcobench plan`: how many GPUs (and hosts) of each platform serve a recorded trace at one interactivity, and what
each fleet costs per month (tasks/analysis/compare/plan.py). A thin face: parse, call the task, print."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from tcobench.cli._common import PricesOpt, SnapshotOpt, StoreOpt, guard, out, print_json, settings_for, usd
from tcobench.cli._damage import tolerate_damage
from tcobench.cli._fit import Col, print_table
from tcobench.cli._flags import declared, overrides, parameter, with_parameters
from tcobench.schemas import CostBasis, PlanOptions, PlanRate

if TYPE_CHECKING:
    from tcobench.tasks.analysis.compare.plan import Figure, PlanResult, PlatformPlan

__all__ = ["register"]

_FLAGS = declared(PlanOptions)
_FORMATS = ("mooncake", "azure", "tcobench")


def _own(
    trace: Annotated[Path, typer.Option("--trace", help="The recorded trace to serve (docs/traces.md).")],
    a: Annotated[str, typer.Option("--a", help="Platform A: a selection of runs, as compare's --a.")],
    interactivity: Annotated[float, typer.Option("--interactivity", help="The target, tok/s per user.")],
    b: Annotated[str | None, typer.Option("--b", help="Platform B, optional; same syntax.")] = None,
    at: Annotated[
        str, typer.Option("--at", help="Size for the trace's per-minute output token rate: peak, p95 or mean.")
    ] = "p95",
    basis: Annotated[
        str, typer.Option("--basis", help="Cost basis that picks the configuration and the verdict: owned or a tier.")
    ] = "owned",
    trace_format: Annotated[
        str | None,
        typer.Option("--trace-format", help=r"mooncake, azure or tcobench \[detected from the first line]."),
    ] = None,
    sort: Annotated[
        bool, typer.Option("--sort", help="Read the requests in timestamp order (else a step back is an error).")
    ] = False,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples (compare's default).")] = PlanOptions.model_fields[
        "resamples"
    ].default,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap (compare's default).")] = PlanOptions.model_fields[
        "seed"
    ].default,
    fmt: Annotated[str, typer.Option("--format", help="table or json (one document).")] = "table",
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
    snapshot: SnapshotOpt = None,
) -> None:
    """plan's options that are not PlanOptions' flags (their signature only: _plan takes every option)."""


def _options(values: dict[str, Any]) -> PlanOptions:
    if values["fmt"] not in ("table", "json"):
        raise typer.BadParameter(f"{values['fmt']!r}: choose table or json", param_hint="--format")
    if values["at"] not in tuple(PlanRate):
        raise typer.BadParameter(f"{values['at']!r}: choose peak, p95 or mean", param_hint="--at")
    if values["trace_format"] is not None and values["trace_format"] not in _FORMATS:
        raise typer.BadParameter(
            f"{values['trace_format']!r}: choose {', '.join(_FORMATS)}", param_hint="--trace-format"
        )
    try:
        basis = CostBasis.parse(values["basis"])
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--basis") from None
    return PlanOptions(
        **overrides(_FLAGS, values),
        interactivity=values["interactivity"],
        basis=basis,
        resamples=values["resamples"],
        seed=values["seed"],
        at=PlanRate(values["at"]),
    )


def _plan(**values: Any) -> None:
    """How many GPUs (and whole hosts) of each platform serve a recorded trace's per-minute output token rate (p95,
    --at peak|mean) at one interactivity within the SLO, the headroom at its busiest minute, and what each fleet
    costs per month on every cost basis, with the frontier bootstrap's CI; the ratio of the monthly costs is the
    verdict for this traffic."""
    from tcobench.schemas import TraceConfig, TraceFormat
    from tcobench.tasks.analysis.compare.plan import plan
    from tcobench.tasks.prices import load_prices

    options = _options(values)
    trace = TraceConfig(
        path=values["trace"],
        format=TraceFormat(values["trace_format"]) if values["trace_format"] is not None else None,
        sort=values["sort"],
    )
    found = plan(
        settings_for(values["store"]).store,
        load_prices(values["prices_file"]),
        trace,
        values["a"],
        values["b"],
        options,
        snapshot=values["snapshot"],
    )
    if values["fmt"] == "json":
        from tcobench.tasks.analysis.compare.plan import plan_document

        print_json(plan_document(found))
        return
    _print(found)


_params = list(inspect.signature(_own, eval_str=True).parameters.values())
with_parameters(_plan, [*_params[:4], *(parameter(n, d, PlanOptions) for n, d in _FLAGS.items()), *_params[4:]])


def _ci(f: Figure | None, show: Any) -> str:
    if f is None or f.ci_low is None or f.ci_high is None:
        return "-"
    return f"{show(f.ci_low)} - {show(f.ci_high)}"


def _count(value: float) -> str:
    return f"{value:,.0f}"


def _gpus(n: int | None) -> str:
    return "? GPUs" if n is None else f"{n} GPU{'' if n == 1 else 's'}"


def _pct(value: float) -> str:
    return f"{value:+.0%}"


def _print_platform(p: PlatformPlan, result: PlanResult) -> None:
    pct = f"{result.options.confidence:.0%}"
    if p.reason is not None or p.gpus is None:
        out.print(f"[bold red]{p.side}: cannot plan[/]: {escape(p.reason or '')}", highlight=False)
        return
    rows = []
    for name, f, show in (
        ("tok/s per GPU at the target", p.tok_s_per_gpu, _count),
        (f"instances ({_gpus(p.replica_gpus)} each)", p.replicas, _count),
        ("GPUs", p.gpus, _count),
        (f"hosts ({_gpus(p.host_gpus)} each)", p.hosts, _count),
        ("headroom at the busiest minute", p.headroom_at_peak, _pct),
    ):
        if f is not None:
            rows.append([name, show(f.value), _ci(f, show)])
    for c in p.costs:
        rows.append([f"USD per month, {escape(c.basis)}", usd(c.usd_month.value), _ci(c.usd_month, usd)])
    title = f"{p.side} = {escape(p.selection)}: {escape(p.name)}; deploys {escape(p.config or '')}"
    if p.time_scale is not None:  # sized from a replay of the trace, not the frontier (the JSON's "source")
        title += f", sized from {escape(p.source)} (time scale {p.time_scale:g}; no CI)"
    print_table(title, [Col("figure", "left"), Col("value"), Col(f"{pct} CI")], rows)


def _print(result: PlanResult) -> None:
    o, t = result.options, result.profile
    out.print(f"read {escape(result.snapshot)}", style="dim", highlight=False)
    out.print(
        f"{escape(t.path)}: {t.requests:,} requests over {t.minutes:,} min; sized for the {o.at} per-minute output "
        f"rate, {result.need_tok_s:,.1f} tok/s (busiest minute {result.peak_tok_s:,.1f} tok/s), at "
        f"{o.interactivity:g} tok/s/user ({o.basis} basis picks each platform's configuration)",
        highlight=False,
        soft_wrap=True,
    )
    for p in result.platforms:
        _print_platform(p, result)
    if result.ratio is not None:
        r = result.ratio
        ci = "" if r.ci_low is None else f" ({o.confidence:.0%} CI {r.ci_low:.2f}-{r.ci_high or 0.0:.2f})"
        out.print(
            f"[bold]serving this traffic on A costs {r.value:.2f}x what it costs on B[/] per month, {o.basis} "
            f"basis, at {o.interactivity:g} tok/s/user{ci}",
            highlight=False,
        )
    for note in result.notes:
        out.print(f"note: {escape(note)}", style="dim", highlight=False)


def register(app: typer.Typer) -> None:
    """Add plan to the main app."""
    app.command("plan")(guard(tolerate_damage(_plan)))
