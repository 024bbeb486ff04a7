"""`tcobench store info|snapshots|compact|verify|migrate`: look after the results store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from tcobench.cli._common import PricesOpt, StoreOpt, err, guard, out, read_settings, settings_for
from tcobench.cli._fit import Col, print_table

if TYPE_CHECKING:
    from tcobench.tasks.store.verify import CatalogDamage

__all__ = ["register"]


def _progress(message: str) -> None:
    err.print(f"[dim]{escape(message)}[/]", highlight=False)


def _info(store: StoreOpt = None) -> None:
    """Where the store is, its newest snapshot, rows and files per table, and the cached per-run views."""
    from tcobench.tasks.store.inspect import describe_store

    info = describe_store(read_settings(store).store)
    out.print(f"store      {escape(info.store)}", highlight=False)
    out.print(f"catalog    {info.catalog}; data {escape(info.data_path)}", highlight=False)
    if info.legacy:
        out.print(
            f"[yellow]holds a folder store of tcobench < 0.2 ({', '.join(info.legacy)}/): "
            f"import it with `tcobench store migrate`[/]"
        )
        return
    if not info.exists:
        out.print("empty: nothing has been written yet")
        return
    out.print(f"snapshot   {info.snapshot} (committed {info.snapshot_time})", highlight=False)
    table = Table(header_style="bold")
    for name in ("table", "rows", "files"):
        table.add_column(name, justify="left" if name == "table" else "right")
    for name, (rows, files) in info.tables.items():
        table.add_row(name, f"{rows:,}", f"{files:,}")
    out.print(table)
    runs = info.tables.get("runs", (0, 0))[0]
    out.print(
        f"cached per-run views ({info.cache}): {info.cached_runs:,} of {runs:,} runs"
        + ("" if info.cached_runs >= runs else "; `tcobench store compact` stores the rest"),
        highlight=False,
    )


def _snapshots(
    limit: Annotated[int, typer.Option(help="How many of the newest snapshots.")] = 20,
    store: StoreOpt = None,
) -> None:
    """The newest snapshots (what each commit changed); --snapshot N reads the store as it was then."""
    from tcobench.tasks.store.inspect import list_snapshots

    rows = list_snapshots(read_settings(store).store, limit)
    if not rows:
        out.print("no snapshots: nothing has been written yet")
        return
    cells = []
    for r in rows:
        pairs = r["changes"] or []  # a MAP: arrives as (key, value) pairs
        items = pairs.items() if isinstance(pairs, dict) else pairs
        changes = "; ".join(f"{k}: {', '.join(map(str, v))}" for k, v in items)
        cells.append(
            [str(r["snapshot_id"]), str(r["snapshot_time"])[:19], escape(r["commit_message"] or ""), escape(changes)]
        )
    cols = [
        Col("snapshot"),
        Col("committed", "left", wrap=True),
        Col("message", "left", wrap=True),
        Col("changes", "left", wrap=True),
    ]
    print_table(None, cols, cells)


def _compact(
    keep_days: Annotated[float, typer.Option(help="Keep snapshots (time travel) this many days back.")] = 30.0,
    store: StoreOpt = None,
) -> None:
    """Cache per-run views and change tests, merge small files (one per night for requests and telemetry), expire
    old snapshots."""
    from tcobench.tasks.store.compact import compact_store

    result = compact_store(read_settings(store).store, keep_days, _progress)
    out.print(
        f"compacted in {result.seconds:.1f} s: {result.files_before:,} -> {result.files_after:,} data files; "
        f"per-run views stored for {result.cached_runs:,} more run(s), change tests for {result.tested_runs:,}; "
        f"{result.expired_snapshots} snapshot(s) "
        f"expired" + (f"; dropped {', '.join(result.dropped_caches)}" if result.dropped_caches else ""),
        highlight=False,
    )


def _verify(
    repair: Annotated[bool, typer.Option("--repair", help="Move damaged/orphan files and rows to quarantine.")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="Check sizes and magic bytes only; do not decode.")] = False,
    store: StoreOpt = None,
) -> None:
    """Check every file (decoding it) and every run's row counts; list damaged and orphan files by name."""
    from tcobench.errors import StoreError
    from tcobench.tasks.store.verify import verify_store

    result = verify_store(read_settings(store).store, repair=repair, deep=not quick, on_progress=_progress)
    if result.catalog is not None:
        _catalog_damaged(result.catalog, repair)
    for p in result.problems:
        out.print(f"{p.kind}: {escape(p.subject)}: {escape(p.detail)}", highlight=False)
    for line in result.repaired:
        out.print(f"repaired: {escape(line)}", highlight=False)
    for path in result.left:
        out.print(f"left in place (not on a local disk): {escape(path)}", highlight=False)
    summary = f"{result.runs:,} runs, {result.files:,} files checked in {result.store}"
    if not result.problems:
        out.print(f"ok: {summary}; no problem found", highlight=False)
        return
    if repair:
        out.print(
            f"repaired {len(result.problems)} problem(s) ({summary}); quarantine: {result.quarantine}", highlight=False
        )
        return
    raise StoreError(
        f"{len(result.problems)} problem(s) ({summary}); `tcobench store verify --repair` moves them to quarantine"
    )


def _catalog_damaged(damage: CatalogDamage, repair: bool) -> None:
    """What a damaged catalog leaves (``verify_store``): the findings, then one StoreError line saying what can be
    recovered."""
    from tcobench.errors import StoreError

    checked = "each decodes" if damage.decoded else "each has Parquet's header and footer (--quick: not decoded)"
    out.print(f"damaged catalog: {escape(str(damage.catalog))}: {escape(damage.why)}", highlight=False)
    out.print(
        f"data files: {damage.data_files:,} Parquet file(s), {damage.data_bytes / 2**20:,.1f} MiB, under "
        f"{escape(str(damage.data_dir))}; "
        + (f"{len(damage.unreadable):,} unreadable" if damage.unreadable else checked),
        highlight=False,
    )
    for line in damage.unreadable:
        out.print(f"unreadable data file: {escape(line)}", highlight=False)
    whole = damage.data_files - len(damage.unreadable)
    intact = f"{whole:,} of {damage.data_files:,} data files are {'intact' if damage.decoded else 'whole (--quick)'}"
    raise StoreError(
        f"the catalog {damage.catalog} is damaged: {damage.why}; {intact}, but which of them make up which table "
        "and snapshot is recorded only in the catalog (DuckLake keeps no second copy): put back a copy of "
        f"{damage.catalog.name} (a backup or file-system snapshot of it) and run `tcobench store verify` again; "
        f"until then the rows can be read from the files themselves, e.g. read_parquet('{damage.data_dir}/main/runs/"
        "**/*.parquet') in DuckDB (rows of runs deleted or replaced since included)"
        + ("; --repair changed nothing" if repair else "")
    )


def _migrate(
    folder: Annotated[Path, typer.Argument(help="A folder store of tcobench < 0.2 (runs/, requests/, ... by date).")],
    check: Annotated[bool, typer.Option(help="Compare every view before and after.")] = True,
    batch: Annotated[int, typer.Option(help="Runs per transaction.")] = 100,
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
) -> None:
    """Import a folder store into the store (--store; the same folder imports in place); nothing is deleted."""
    from tcobench.errors import StoreError
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.store.migrate import migrate_folder

    prices = load_prices(prices_file) if check else None
    result = migrate_folder(folder, settings_for(store).store, prices, batch=batch, on_progress=_progress)
    for path, why in result.skipped:
        out.print(f"not imported: {escape(path)}: {escape(why)}", highlight=False)
    for path in result.orphans:
        out.print(f"not imported (no runs file): {escape(path)}", highlight=False)
    out.print(
        f"imported {result.runs:,} runs, {result.requests:,} requests, {result.telemetry:,} telemetry rows and "
        f"{result.images:,} image rows into {escape(result.store)}",
        highlight=False,
    )
    if result.moved_to is not None:
        out.print(f"the folder store moved to {result.moved_to} (nothing was deleted)", highlight=False)
    if check:
        for line in result.differences:
            out.print(f"[red]differs[/]: {escape(line)}", highlight=False)
        if result.differences:
            raise StoreError(f"{len(result.differences)} view(s) differ after the import (listed above)")
        out.print(f"check: all {result.checked_views} views return the same rows before and after", highlight=False)


def register(app: typer.Typer) -> None:
    store = typer.Typer(
        help="Look after the results store: info, snapshots, compact, verify, migrate.", no_args_is_help=True
    )
    store.command("info")(guard(_info))
    store.command("snapshots")(guard(_snapshots))
    store.command("compact")(guard(_compact))
    store.command("verify")(guard(_verify))
    store.command("migrate")(guard(_migrate))
    app.add_typer(store, name="store")
