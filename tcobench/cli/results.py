"""`tcobench summary` and `tcobench query`: read the store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import pyarrow as pa
import typer

from tcobench.cli._common import PricesOpt, SnapshotOpt, StoreOpt, guard, out, print_json, read_settings
from tcobench.cli._damage import tolerate_damage
from tcobench.cli._fit import Col, number, print_table
from tcobench.cli._runs_table import print_assumptions, print_runs

if TYPE_CHECKING:
    from tcobench.tasks.analysis.summarise import Summary
    from tcobench.tasks.store.store import StoreRef

__all__ = ["print_result", "register"]


def _summary(
    run_id: Annotated[
        list[str] | None,
        typer.Option(
            "--run",
            help="Run id (or prefix); repeatable: the full card of each matching run (every metric, and the cost "
            "terms behind it); only these runs, one row each, with --select or a csv or json --format.",
        ),
    ] = None,
    select: Annotated[
        str | None,
        typer.Option(
            "--select",
            help="Comma-separated columns, one row per run: any column of views run_summary, tco and goodput "
            "(e.g. run_id,host,concurrency,output_tok_s,usd_per_m_output_tokens).",
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="table, csv or json (csv and json: full precision, raw column names).")
    ] = "table",
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
    snapshot: SnapshotOpt = None,
) -> None:
    """One row per run: when, where, what, status, TTFT p50, output tok/s and cost per 1M output tokens.

    --run ID prints a run's full card (n, errors, TTFT/ITL/e2e p50/p90/p99, tok/s, shape, steady state, SLO, cost
    per 1M tokens with its assumptions); --select COLUMNS prints other columns.
    """
    from tcobench.cli._summary_table import DEFAULT_COLUMNS, print_compact, select_columns, summary_columns
    from tcobench.errors import QueryError
    from tcobench.tasks.analysis.summarise import summarise
    from tcobench.tasks.prices import load_prices

    if fmt not in ("table", "csv", "json"):
        raise typer.BadParameter(f"{fmt!r}: choose table, csv or json", param_hint="--format")
    names = _columns(select) if select is not None else None
    settings = read_settings(store)
    result = summarise(settings.store, load_prices(prices_file), snapshot=snapshot)
    if run_id:
        keep = [r for r in result.runs.column("run_id").to_pylist() if any(r.startswith(p) for p in run_id)]
        if not keep:
            raise QueryError(f"no run matches {', '.join(run_id)} in {settings.store}")
        result = summarise(settings.store, load_prices(prices_file), keep, snapshot=snapshot)
    if names is not None:
        valid = summary_columns(result)
        unknown = [n for n in names if n not in valid]
        if unknown:
            raise typer.BadParameter(
                f"unknown column {', '.join(unknown)}; valid columns: {', '.join(valid)}", param_hint="--select"
            )
    if result.runs.num_rows == 0 and fmt == "table":
        out.print(f"no runs stored in {settings.store} yet; try `tcobench run`")
        return
    if names is not None or fmt != "table":
        print_result(select_columns(result, names or DEFAULT_COLUMNS), fmt)
    elif run_id:
        _print_cards(settings.store, prices_file, snapshot, result)
    else:
        print_compact(result)


def _columns(select: str) -> list[str]:
    """--select's column names, in order, each once."""
    names = list(dict.fromkeys(n.strip() for n in select.split(",") if n.strip()))
    if not names:
        raise typer.BadParameter(f"{select!r}: name at least one column", param_hint="--select")
    return names


def _print_cards(store: StoreRef, prices_file: Path | None, snapshot: int | None, result: Summary) -> None:
    """The full card of each run in ``result``, and the cost terms behind its figures."""
    from tcobench.tasks.analysis.shape import run_shapes
    from tcobench.tasks.prices import load_prices

    shapes = run_shapes(store, load_prices(prices_file), result.runs.column("run_id").to_pylist(), snapshot)
    print_runs(result.runs, result.tco, result.goodput, shapes)  # with the asked-vs-served verdict (run_shape)
    print_assumptions(result.tco, result.sources)


def _query(
    sql: Annotated[str, typer.Argument(help="One read-only SQL statement over the views.")],
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
    snapshot: SnapshotOpt = None,
    timeout: Annotated[
        float, typer.Option(min=0.0, help="Stop the query after this many seconds (0: no limit).")
    ] = 300.0,
) -> None:
    """Read-only SQL over the views (runs, requests, telemetry, run_summary, tco, hardware, site, ops).

    Exit status: 0 ok; 1 refused, failed or over --timeout (QueryError); 130/143/129 stopped by
    SIGINT/SIGTERM/SIGHUP.
    """
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.store.query import connect, read_only_query, views_named
    from tcobench.tasks.store.query_bounds import QueryBounds

    if fmt not in ("table", "csv", "json"):
        raise typer.BadParameter(f"{fmt!r}: choose table, csv or json", param_hint="--format")
    settings = read_settings(store)
    prices = load_prices(prices_file)
    with QueryBounds(timeout) as bounds:
        con = connect(settings.store, prices, needs=views_named(sql), snapshot=snapshot)
        try:
            bounds.watch(con)
            result = read_only_query(con, sql)
        finally:
            con.close()
    print_result(result, fmt)


def print_result(result: pa.Table, output: str) -> None:
    """A query's rows as a table that fits the terminal (numbers to about 4 significant digits, ``_fit.number``),
    CSV (LF line endings, full precision) or JSON (full precision)."""
    rows = result.to_pylist()
    if output == "json":
        print_json(rows, default=str)
        return
    if output == "csv":
        import csv

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(result.column_names)
        writer.writerows([[row[c] for c in result.column_names] for row in rows])
        return
    from rich.markup import escape

    numeric = {
        f.name
        for f in result.schema
        if pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_decimal(f.type)
    }
    cols = [Col(name, "right" if name in numeric else "left", wrap=name not in numeric) for name in result.column_names]
    print_table(None, cols, [[escape(number(row[c])) for c in result.column_names] for row in rows])
    out.print(f"{len(rows)} row(s)", style="dim")


def register(app: typer.Typer) -> None:
    app.command("summary")(guard(tolerate_damage(_summary)))
    app.command("query")(guard(tolerate_damage(_query)))
