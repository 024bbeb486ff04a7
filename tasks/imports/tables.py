"""import_tables: a `tcobench export --format parquet` folder back into a store, its runs as they were measured.

The folder's four tables (``schemas.export.EXPORT_TABLES``) hold every stored column in raw units, so the rows are
taken back whole: the run ids, ``source`` and every other value are kept, and the views compute the same figures
from them (tests/unit/tasks/imports/test_tables.py). Every row is validated against its record (RunRecord,
RequestRecord, TelemetryRecord, EngineMetricRecord) before anything is written; the first bad one is reported in one
line naming the file, the row, the column and the value. Runs already in the store are refused unless ``replace``.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ValidationError

from tcobench.errors import ConfigError
from tcobench.schemas import EngineMetricRecord, RequestRecord, RunRecord, TelemetryRecord
from tcobench.schemas.export import EXPORT_TABLES, ExportFormat
from tcobench.tasks.store.rows import IDS, id_list
from tcobench.tasks.store.store import RunRows, StoreRef, open_store, table_schema, write_runs

__all__ = ["TablesImport", "import_tables", "read_tables", "stored_runs"]

_RECORDS: dict[str, type[BaseModel]] = {
    "runs": RunRecord,
    "requests": RequestRecord,
    "telemetry": TelemetryRecord,
    "engine_metrics": EngineMetricRecord,
}
# macro rows_of_runs (tcobench/sql/macros): the run ids of $ids the store already holds
_STORED_SQL = "SELECT run_id FROM rows_of_runs('runs', ids := " + IDS + ") ORDER BY run_id"


@dataclass(frozen=True)
class TablesImport:
    """What an import of an export folder wrote: the runs, the rows per table, the snapshot, the runs replaced."""

    runs: list[RunRecord]
    rows: dict[str, int]
    snapshot: int
    replaced: list[str]


def _jsonable(value: Any) -> Any:
    """A Parquet value as the record's JSON form (dates and times as ISO text), which strict records validate."""
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _read(folder: Path, table: str) -> pa.Table:
    path = folder / f"{table}.{ExportFormat.parquet.value}"
    if not path.is_file():
        raise ConfigError(
            f"{path}: missing; a `tcobench export --format parquet` folder holds "
            f"{', '.join(f'{t}.parquet' for t in EXPORT_TABLES)}"
        )
    try:
        rows = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise ConfigError(f"{path}: not a readable Parquet file ({exc})") from None
    expected = table_schema(table).names
    missing = [c for c in expected if c not in rows.column_names]
    if missing:
        raise ConfigError(
            f"{path}: column {missing[0]} missing ({len(missing)} of {len(expected)} missing; valid: every column "
            f"of the store's {table} table, as `tcobench export --format parquet` writes them)"
        )
    unknown = [c for c in rows.column_names if c not in expected]
    if unknown:
        raise ConfigError(f"{path}: column {unknown[0]} is not a column of {table} (valid: {', '.join(expected)})")
    return rows


def _records(folder: Path, table: str, rows: pa.Table) -> list[Any]:
    """Each row of ``rows`` as its record; a ConfigError naming the file, row, column and value of the first bad one."""
    model = _RECORDS[table]
    path = folder / f"{table}.{ExportFormat.parquet.value}"
    records = []
    for i, row in enumerate(rows.to_pylist()):
        try:
            records.append(model.model_validate_json(json.dumps(_jsonable(row))))
        except ValidationError as exc:
            first = exc.errors()[0]
            column = ".".join(str(p) for p in first["loc"]) or "(row)"
            value = row.get(str(first["loc"][0])) if first["loc"] else row
            raise ConfigError(
                f"{path}: row {i} (run_id {row.get('run_id')}) column {column}: {value!r}: {first['msg']}"
            ) from None
    return records


def read_tables(folder: Path) -> list[RunRows]:
    """The runs of an export folder, each with its rows, every row validated; nothing read is written here."""
    if not folder.is_dir():
        raise ConfigError(f"{folder}: not a folder; give the folder `tcobench export --format parquet --out` wrote")
    tables = {t: _records(folder, t, _read(folder, t)) for t in EXPORT_TABLES}
    runs: list[RunRecord] = tables["runs"]
    ids = [r.run_id for r in runs]
    if len(set(ids)) != len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise ConfigError(f"{folder / 'runs.parquet'}: run_id {twice!r} appears twice (valid: one row per run)")
    per_run: dict[str, dict[str, list[Any]]] = {i: {t: [] for t in EXPORT_TABLES[1:]} for i in ids}
    for table in EXPORT_TABLES[1:]:
        for n, record in enumerate(tables[table]):
            if record.run_id not in per_run:
                raise ConfigError(
                    f"{folder / f'{table}.parquet'}: row {n} column run_id: {record.run_id!r} is not a run of "
                    "runs.parquet (valid: a run_id of runs.parquet)"
                )
            per_run[record.run_id][table].append(record)
    return [
        RunRows(r, per_run[r.run_id]["requests"], per_run[r.run_id]["telemetry"], per_run[r.run_id]["engine_metrics"])
        for r in runs
    ]


def stored_runs(store: StoreRef, ids: list[str]) -> list[str]:
    """The run ids of ``ids`` the store already holds; none in a store not made yet."""
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.store.query import connect
    from tcobench.tasks.store.rows import arrow_of

    if not ids or not open_store(store).location.exists():
        return []
    con = connect(store, load_prices(None), needs=("rows_of_runs", "runs"))
    try:
        found: list[str] = arrow_of(con, _STORED_SQL, {"ids": id_list(ids)}).column("run_id").to_pylist()
        return found
    finally:
        con.close()


def import_tables(store: StoreRef, folder: Path, replace: bool = False) -> TablesImport:
    """Validate every row of the export ``folder`` and commit its runs in one transaction, ids and values kept."""
    batch = read_tables(folder)
    if not batch:
        raise ConfigError(f"{folder / 'runs.parquet'}: no run in it; nothing to import")
    there = stored_runs(store, [b.run.run_id for b in batch])
    if there and not replace:
        raise ConfigError(
            f"{folder}: {len(there)} run(s) already in the store: {', '.join(there)}; pass --replace to write "
            "the export's rows over them"
        )
    snapshot = write_runs(store, batch, writer="import")
    return TablesImport(
        runs=[b.run for b in batch],
        rows={
            "runs": len(batch),
            "requests": sum(len(b.requests) for b in batch),
            "telemetry": sum(len(b.telemetry) for b in batch),
            "engine_metrics": sum(len(b.engine_metrics) for b in batch),
        },
        snapshot=snapshot,
        replaced=there,
    )
