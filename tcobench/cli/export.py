"""`tcobench export`: the selected runs in llm-d's benchmark_report, or the store's tables as Parquet or CSV."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tcobench.cli._common import PricesOpt, SnapshotOpt, StoreOpt, guard, out, read_settings
from tcobench.cli._damage import tolerate_damage

__all__ = ["register"]

_SELECTION_HELP = (
    "Export only these runs (default: every stored run, whatever its status): key=value terms joined by ',' (all "
    "must hold), alternatives with '|'; the keys of compare's --a (host, vendor, engine, model, "
    "workload, concurrency, date, since, until, run, batch, config...)."
)


def _export(
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="benchmark-report (llm-d's benchmark_report v0.2, one JSON file per run), parquet or csv (the "
            "store's tables runs, requests, telemetry and engine_metrics of the selected runs, one file each).",
        ),
    ],
    path_out: Annotated[
        Path, typer.Option("--out", help="Folder to create (it must not exist yet); the files go in it.")
    ],
    select: Annotated[str | None, typer.Option("--select", help=_SELECTION_HELP)] = None,
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
    snapshot: SnapshotOpt = None,
) -> None:
    """Write the selected runs in another tool's format: llm-d's benchmark_report v0.2, or the flat tables as Parquet or
    CSV (raw units, every stored column), into a new folder; nothing is written when any part fails.

    Exit status: 0 written; 1 a bad --format, --select or --out, no run selected, or the store unreadable or the
    folder unwritable (one line, nothing written); 130/143/129 stopped by SIGINT/SIGTERM/SIGHUP (nothing written).
    """
    from tcobench.tasks.export.export_runs import export_runs, parse_format
    from tcobench.tasks.prices import load_prices

    kind = parse_format(fmt)
    settings = read_settings(store)
    done = export_runs(settings.store, load_prices(prices_file), kind, path_out, select, snapshot)
    out.print(
        f"wrote {done.runs} run(s) as {kind.value} to {path_out}: {', '.join(p.name for p in done.files[:4])}"
        + (f" and {len(done.files) - 4} more" if len(done.files) > 4 else ""),
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add export to the main app."""
    app.command("export")(guard(tolerate_damage(_export)))
