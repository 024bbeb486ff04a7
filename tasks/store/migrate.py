"""migrate_folder: import a folder store of tcobench < 0.2 (hive-partitioned Parquet) into a store, losslessly.

The old layout: ``FOLDER/<table>/date=YYYY-MM-DD/host=HOST/run-<run_id>.parquet`` for runs, requests and
telemetry (one file per run and table; the partition values live in the path, not in the files) and
``FOLDER/images/date=.../host=.../image-<event_id>.parquet``. A run is imported when its runs file is readable,
with the requests and telemetry files of the same name, in batches of runs per transaction, every column kept
(a column today's records no longer have is added to the table). Re-running the import replaces, never duplicates.
Nothing is deleted: files that cannot be read and requests/telemetry files without a runs file are listed and left
where they are. Importing a store's own root in place moves the old folders to ``legacy-folder-store/`` after.

Design notes: docs/dev/architecture/store.md#tasks-migrate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from tcobench.errors import StoreError
from tcobench.schemas import PriceTable
from tcobench.tasks.store.lake import sql_string
from tcobench.tasks.store.store import LEGACY_TABLES, StoreRef, commit_tables, conform, open_store, to_arrow
from tcobench.tasks.store.views import sql_reads, sql_views

__all__ = ["LEGACY_FOLDER", "MigrateResult", "compare_views", "folder_connection", "migrate_folder"]

LEGACY_FOLDER = "legacy-folder-store"
_PARTITIONS = ("date", "host")


@dataclass
class MigrateResult:
    source: Path
    store: str
    runs: int = 0
    requests: int = 0
    telemetry: int = 0
    images: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why) not imported
    orphans: list[str] = field(default_factory=list)  # requests/telemetry files with no runs file
    moved_to: Path | None = None
    differences: list[str] = field(default_factory=list)  # from the check; empty: every view is identical
    checked_views: int = 0
    imported_files: dict[str, list[str]] = field(default_factory=dict)


def _partition(path: Path) -> dict[str, str]:
    values = {}
    for part in path.parts[-3:-1]:
        key, _, value = part.partition("=")
        if key in _PARTITIONS:
            values[key] = value
    return values


def _read(path: Path) -> pa.Table:
    """A file of the old layout with its partition columns added from the path."""
    with pq.ParquetFile(path) as file:  # one file: the same table as pq.read_table, without its dataset set-up
        table = file.read()
    for key, value in _partition(path).items():
        if key not in table.column_names:
            table = table.append_column(key, pa.array([value] * table.num_rows, pa.string()))
    return table


def _files(source: Path, table: str) -> dict[str, Path]:
    return {p.name: p for p in sorted((source / table).glob("date=*/host=*/*.parquet"))}


def _load_run(name: str, path: Path, others: dict[str, dict[str, Path]]) -> dict[str, pa.Table]:
    tables = {"runs": _read(path)}
    for table in ("requests", "telemetry"):
        if name in others[table]:
            tables[table] = _read(others[table][name])
    return tables


def _flush(store: StoreRef, pending: list[dict[str, pa.Table]], result: MigrateResult) -> None:
    if not pending:
        return
    tables = {}
    for table in ("runs", "requests", "telemetry"):
        parts = [p[table] for p in pending if table in p]
        tables[table] = conform(table, pa.concat_tables(parts, promote_options="permissive")) if parts else None
    commit_tables(store, {t: v for t, v in tables.items() if v is not None}, writer="migrate")
    result.runs += len(pending)
    result.requests += sum(p["requests"].num_rows for p in pending if "requests" in p)
    result.telemetry += sum(p["telemetry"].num_rows for p in pending if "telemetry" in p)
    pending.clear()


def _import_runs(
    source: Path, store: StoreRef, batch: int, result: MigrateResult, progress: Callable[[str], None]
) -> None:
    runs = _files(source, "runs")
    others = {t: _files(source, t) for t in ("requests", "telemetry")}
    result.orphans = sorted(str(p) for t in others.values() for n, p in t.items() if n not in runs)
    imported: dict[str, list[str]] = {t: [] for t in ("runs", "requests", "telemetry")}
    pending: list[dict[str, pa.Table]] = []
    for name, path in runs.items():
        try:
            tables = _load_run(name, path, others)
        except (OSError, pa.ArrowException) as exc:
            result.skipped.append((str(path.parent / name), f"unreadable: {' '.join(str(exc).split())}"))
            continue
        pending.append(tables)
        for table in tables:
            imported[table].append(str(path if table == "runs" else others[table][name]))
        if len(pending) >= batch:
            _flush(store, pending, result)
            progress(f"imported {result.runs} of {len(runs)} runs")
    _flush(store, pending, result)
    result.imported_files = imported


def _import_images(source: Path, store: StoreRef, result: MigrateResult) -> None:
    from tcobench.schemas import ImageRecord
    from tcobench.tasks.store.store import write_image_record

    for path in _files(source, "images").values():
        try:
            rows = conform("images", _read(path)).to_pylist()
            known = set(ImageRecord.model_fields)
            for row in rows:
                write_image_record(store, ImageRecord.model_validate({k: v for k, v in row.items() if k in known}))
                result.images += 1
        except (OSError, pa.ArrowException, ValueError) as exc:
            result.skipped.append((str(path), f"unreadable: {' '.join(str(exc).split())}"))


def migrate_folder(
    source: Path,
    store: StoreRef,
    prices: PriceTable | None = None,
    *,
    batch: int = 100,
    on_progress: Callable[[str], None] | None = None,
) -> MigrateResult:
    """Import the folder store at ``source`` into ``store``; with ``prices``, check every view after (see above)."""
    progress = on_progress or (lambda _: None)
    source = source.expanduser().absolute()
    target = open_store(store)
    if not any((source / t).is_dir() for t in LEGACY_TABLES):
        raise StoreError(f"{source} holds no folder store (no runs/, requests/, telemetry/ or images/ folder)")
    in_place = target.location.root is not None and source == target.location.root
    result = MigrateResult(source, str(target.location))
    staging = source
    if in_place:  # the old folders move aside first: the store refuses to open over them
        staging = source / LEGACY_FOLDER
        staging.mkdir(exist_ok=True)
        for table in LEGACY_TABLES:
            if (source / table).is_dir():
                (source / table).rename(staging / table)
        result.moved_to = staging
    _import_runs(staging, target, batch, result, progress)
    _import_images(staging, target, result)
    if prices is not None:
        progress("checking every view against the folder store")
        result.differences, result.checked_views = compare_views(result.imported_files, target, prices)
    return result


def folder_connection(files: dict[str, list[str]], prices: PriceTable) -> duckdb.DuckDBPyConnection:
    """The shipped views over folder-store files, read as tcobench < 0.2 read them (hive partitions, by name)."""
    from tcobench.tasks.store.query import freeze_views, register_prices

    con = duckdb.connect(":memory:")
    for table in ("runs", "requests", "telemetry", "engine_metrics", "images"):  # the folder layout had no
        paths = files.get(table) or []  # engine_metrics: an empty table of today's schema stands in
        if paths:
            listed = ", ".join(sql_string(p) for p in paths)
            source = (
                f"read_parquet([{listed}], hive_partitioning = true, hive_types = {{'date': 'VARCHAR', "
                "'host': 'VARCHAR'}, union_by_name = true)"
            )
            con.register(f"_today_{table}", to_arrow(table, []))
            source = f"(SELECT * FROM {source} UNION ALL BY NAME FROM _today_{table})"
        else:
            con.register(f"_today_{table}", to_arrow(table, []))
            source = f"_today_{table}"
        where = (
            " WHERE run_id IN (SELECT run_id FROM runs)" if table in ("requests", "telemetry", "engine_metrics") else ""
        )
        # read once: a view over read_parquet re-reads every file at each reference, and the views nest
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM {source}{where}")
    register_prices(con, prices)
    present = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    compared = set(_compared())
    for name, text in sql_views():
        # what reads a table a folder store never had (macro run_commits: the lake's commits) is not defined; a view
        # left out would fail compare_views by name
        if sql_reads(name, text)[1] <= present:
            con.execute(text)
            if name in compared:
                # computed once, as defined: the views over it bind and read its rows, not its whole tree again
                # (docs/dev/performance.md#freeze-as-defined); compare_views reads every one of them anyway
                freeze_views(con, (name,))
    return con


def _compared() -> list[str]:
    """What compare_views compares: the three tables, then every shipped view (not the macros), in creation order."""
    return ["runs", "requests", "telemetry", *(n for n, text in sql_views() if "CREATE OR REPLACE VIEW" in text)]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def compare_views(files: dict[str, list[str]], store: StoreRef, prices: PriceTable) -> tuple[list[str], int]:
    """Every shipped view over the folder files and over the store, row by row; (differences, views compared)."""
    from tcobench.tasks.store.query import connect

    names = _compared()
    # the store's views frozen as defined too (as `tcobench report` reads them): each computed once, not again inside
    # every view over it
    old, new = folder_connection(files, prices), connect(store, prices, freeze=names)
    differences: list[str] = []
    try:
        for name in names:
            columns = [c[0] for c in old.execute(f"SELECT * FROM {name} LIMIT 0").description]
            order = ", ".join(f'"{c}"' for c in columns)
            select = f"SELECT {order} FROM {name} ORDER BY ALL"
            before, after = old.execute(select).fetchall(), new.execute(select).fetchall()
            if len(before) != len(after):
                differences.append(f"{name}: {len(before)} rows before, {len(after)} after")
                continue
            for row_a, row_b in zip(before, after, strict=True):
                if row_a == row_b:  # equal values are _same: only a row that differs is compared value by value
                    continue
                bad = [c for c, x, y in zip(columns, row_a, row_b, strict=True) if not _same(x, y)]
                if bad:
                    differences.append(f"{name}: row {row_a[:1]} differs in {', '.join(bad[:5])}")
                    break
    finally:
        old.close()
        new.close()
    return differences, len(names)
