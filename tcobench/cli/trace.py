"""`tcobench trace stats FILE`: the traffic profile of a recorded trace, printed and stored (table trace_stats)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from tcobench.cli._common import StoreOpt, err, guard, out, settings_for
from tcobench.cli._fit import Col, print_table

if TYPE_CHECKING:
    from tcobench.schemas import TraceStatsRecord

__all__ = ["register"]

_FORMATS = ("mooncake", "azure", "tcobench")


def _window(text: str | None) -> tuple[float, float] | None:
    """``START,END`` (seconds of the recorded trace) as numbers; a usage error naming the value otherwise."""
    if text is None:
        return None
    try:
        start, end = (float(part) for part in text.split(","))
    except ValueError:
        raise typer.BadParameter(
            f"{text!r}: give START,END in seconds, e.g. 0,3600", param_hint="--trace-window"
        ) from None
    if not 0 <= start < end:
        raise typer.BadParameter(f"{text!r}: needs 0 <= START < END", param_hint="--trace-window")
    return start, end


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _print(record: TraceStatsRecord) -> None:
    window = (
        f", window {record.window_start_s:g}-{record.window_end_s:g} s" if record.window_start_s is not None else ""
    )
    scale = f", time scale {record.time_scale:g}" if record.time_scale != 1 else ""
    out.print(
        f"{escape(record.path)}: {record.format}, {record.requests:,} requests over "
        f"{record.duration_ns / 60e9:,.1f} min (minutes counted: {record.minutes:,}{window}{scale})",
        highlight=False,
        soft_wrap=True,
    )
    r = record
    rows = [
        ["requests per minute", _num(r.request_rate_mean), _num(r.request_rate_p95), _num(r.request_rate_peak, 0)],
        ["tokens per minute", _num(r.token_rate_mean, 0), _num(r.token_rate_p95, 0), _num(r.token_rate_peak, 0)],
        [
            "output tokens per minute",
            _num(r.output_rate_mean, 0),
            _num(r.output_rate_p95, 0),
            _num(r.output_rate_peak, 0),
        ],
    ]
    print_table(
        "Rates (per minute of the replay clock)", [Col("rate", "left"), Col("mean"), Col("p95"), Col("peak")], rows
    )
    lengths = [
        ["input tokens", _num(r.input_p50, 0), _num(r.input_p90, 0), _num(r.input_p99, 0), _num(r.input_max, 0)],
        ["output tokens", _num(r.output_p50, 0), _num(r.output_p90, 0), _num(r.output_p99, 0), _num(r.output_max, 0)],
    ]
    cols = [Col("length", "left"), Col("p50"), Col("p90"), Col("p99"), Col("max")]
    print_table("Lengths per request", cols, lengths)
    share = "-" if r.prefix_shared_share is None else f"{r.prefix_shared_share:.1%}"
    out.print(
        f"prefix sharing: {share} of input tokens are in blocks an earlier request had", highlight=False, soft_wrap=True
    )


def _stats(
    path: Annotated[Path, typer.Argument(help="The trace file.", show_default=False)],
    trace_format: Annotated[
        str | None,
        typer.Option("--trace-format", help=r"mooncake, azure or tcobench \[detected from the first line]."),
    ] = None,
    time_scale: Annotated[
        float, typer.Option("--time-scale", help="Multiply every offset (0.5: twice as fast); above 0.")
    ] = 1.0,
    trace_window: Annotated[
        str | None,
        typer.Option("--trace-window", help="START,END: only the requests this many seconds after the first one."),
    ] = None,
    sort: Annotated[
        bool, typer.Option("--sort", help="Read the requests in timestamp order (else a step back is an error).")
    ] = False,
    fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    store: StoreOpt = None,
) -> None:
    """Print and store a trace's traffic profile: request and token rates per minute (mean, p95, peak), the input
    and output length distributions and the prefix-sharing ratio (table trace_stats, with the file's sha256)."""
    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"{fmt!r}: choose table or json", param_hint="--format")
    if not time_scale > 0:
        raise typer.BadParameter(f"{time_scale:g}: the time scale must be above 0", param_hint="--time-scale")
    if trace_format is not None and trace_format not in _FORMATS:
        raise typer.BadParameter(f"{trace_format!r}: choose {', '.join(_FORMATS)}", param_hint="--trace-format")
    from tcobench.schemas import TraceConfig, TraceFormat
    from tcobench.tasks.store.store import write_trace_stats
    from tcobench.tasks.workload.profile_trace import profile_trace

    config = TraceConfig(
        path=path,
        format=TraceFormat(trace_format) if trace_format is not None else None,
        sort=sort,
        window_s=_window(trace_window),
        time_scale=time_scale,
    )

    def progress(read: int) -> None:
        if err.is_terminal:
            err.print(f"[dim]read {read:,} requests[/]", highlight=False)

    record = profile_trace(config, progress)
    settings = settings_for(store)
    write_trace_stats(settings.store, record)
    if fmt == "json":
        import json
        import sys

        sys.stdout.write(json.dumps(record.model_dump(mode="json"), indent=1) + "\n")
    else:
        _print(record)
    err.print(f"[dim]stored in {escape(str(settings.store))}: table trace_stats, stats_id {record.stats_id}[/]")


def register(app: typer.Typer) -> None:
    trace = typer.Typer(help="Recorded traffic: `trace stats FILE` profiles a trace file.", no_args_is_help=True)
    trace.command("stats")(guard(_stats))
    app.add_typer(trace, name="trace")
