"""export_runs: write the selected runs of a store in one format into a new folder, whole or not at all.

The files are written into a hidden folder beside ``out`` and the folder is renamed to ``out`` once every file is
complete, so an export that fails (bad selection, full disk, a signal) leaves no half-written file behind. ``out``
must not exist yet: an export never overwrites. Each format is a writer registered under ``ExportFormat``.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from tcobench.errors import ConfigError, StoreError
from tcobench.schemas import PriceTable
from tcobench.schemas.export import ExportFormat
from tcobench.tasks.export.benchmark_report import write_benchmark_reports
from tcobench.tasks.export.choose_runs import choose_runs
from tcobench.tasks.export.write_tables import write_tables
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import StoreRef

__all__ = ["WRITERS", "Exported", "export_runs", "parse_format"]

Writer = Callable[[duckdb.DuckDBPyConnection, list[str], Path], list[Path]]

WRITERS: dict[ExportFormat, Writer] = {
    ExportFormat.benchmark_report: write_benchmark_reports,
    ExportFormat.parquet: lambda con, ids, folder: write_tables(con, ids, ExportFormat.parquet, folder),
    ExportFormat.csv: lambda con, ids, folder: write_tables(con, ids, ExportFormat.csv, folder),
}
# what each format reads (views and macros): connect defines only these and what they build on
_TABLES = {"selectable_runs", "rows_of_runs", "run_summary", "runs", "requests", "telemetry", "engine_metrics"}
_NEEDS = {
    ExportFormat.benchmark_report: {"selectable_runs", "rows_of_runs", "export_figures", "runs", "run_summary"},
    ExportFormat.parquet: _TABLES,
    ExportFormat.csv: _TABLES,
}


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the runs and the files (in ``out``)."""

    runs: int
    files: list[Path]


def parse_format(text: str) -> ExportFormat:
    """``--format``'s value; a ConfigError naming the valid ones."""
    try:
        return ExportFormat(text)
    except ValueError:
        valid = ", ".join(f.value for f in ExportFormat)
        raise ConfigError(f"--format {text!r} is not an export format; valid: {valid}") from None


def export_runs(
    store: StoreRef, prices: PriceTable, fmt: ExportFormat, out: Path, select: str | None, snapshot: int | None = None
) -> Exported:
    """Write the runs ``select`` matches (all stored runs without it) as ``fmt`` into the new folder ``out``."""
    if out.exists() or out.is_symlink():
        raise ConfigError(f"--out {str(out)!r} exists; an export writes a new folder: name one that does not exist")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {str(out)!r}: its parent folder {str(out.parent)!r} does not exist")
    con = connect(store, prices, needs=_NEEDS[fmt], snapshot=snapshot)
    try:
        ids = choose_runs(con, select, str(store))
        tmp = out.parent / f".{out.name}.{uuid.uuid4().hex}.tmp"
        try:
            tmp.mkdir()
            names = [p.name for p in WRITERS[fmt](con, ids, tmp)]
            tmp.rename(out)
        except OSError as exc:
            raise StoreError(f"cannot write the export to {out}: {exc}") from exc
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        con.close()
    return Exported(runs=len(ids), files=[out / n for n in names])
