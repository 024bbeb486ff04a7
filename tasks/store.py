"""write_results: the one place that writes files into the Parquet store.

Layout (hive partitions, one file per run and table)::

    STORE/<table>/date=YYYY-MM-DD/host=<host>/run-<run_id>.parquet

The partition columns ``date`` and ``host`` live in the path, not inside the files.
Each file is written to a hidden temporary name in its final folder and renamed into place,
so readers never see half a file. Re-writing a run replaces its files (in any partition), so
rows are never duplicated. Tables are written telemetry -> engine_metrics -> requests -> runs: a ``runs`` row is
the commit marker, and the views only show requests whose run row exists.

The ``images`` table (one row per image build, unchanged check or push) is written the same
atomic way, one file per event: ``STORE/images/date=.../host=<docker host>/image-<event_id>.parquet``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from tcobench.errors import StoreError
from tcobench.schemas import (
    EngineMetricRecord,
    ImageRecord,
    RequestRecord,
    RunRecord,
    TelemetryRecord,
    arrow_schema,
)

__all__ = ["PARTITION_COLUMNS", "TABLES", "file_schema", "table_glob", "write_image_record", "write_results"]

TABLES: dict[str, type[BaseModel]] = {
    "runs": RunRecord,
    "requests": RequestRecord,
    "telemetry": TelemetryRecord,
    "engine_metrics": EngineMetricRecord,  # the engine's own metrics, scraped beside telemetry (tasks.engine_metrics)
    "images": ImageRecord,  # one file per build/push event: images/date=.../host=.../image-<event_id>.parquet
}
PARTITION_COLUMNS = ("date", "host")


def file_schema(table: str) -> pa.Schema:
    """Schema of the Parquet files of a table: the record schema less the partition columns."""
    schema = arrow_schema(TABLES[table])
    for column in PARTITION_COLUMNS:
        schema = schema.remove(schema.get_field_index(column))
    return schema


def table_glob(store: Path, table: str) -> str:
    return str(store / table / "**" / "*.parquet")


def _to_arrow(table: str, records: Sequence[BaseModel]) -> pa.Table:
    schema = file_schema(table)
    rows = [r.model_dump(mode="json", exclude=set(PARTITION_COLUMNS)) for r in records]
    return pa.Table.from_pylist(rows, schema=schema)


def _write_atomic(data: pa.Table, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{uuid.uuid4().hex}.tmp"
    try:
        pq.write_table(data, tmp, compression="zstd")
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)


def _remove_other_copies(store: Path, table: str, name: str, keep: Path) -> None:
    for old in (store / table).glob(f"*/*/{name}"):
        if old != keep:
            old.unlink()


def write_results(
    store: Path,
    run: RunRecord,
    requests: Sequence[RequestRecord],
    telemetry: Sequence[TelemetryRecord] = (),
    engine_metrics: Sequence[EngineMetricRecord] = (),
) -> list[Path]:
    """Write one run's rows atomically and idempotently; return the files written."""
    name = f"run-{run.run_id}.parquet"
    partition = Path(f"date={run.date}") / f"host={run.host}"
    written: list[Path] = []
    batches: list[tuple[str, Sequence[BaseModel]]] = [
        ("telemetry", telemetry),
        ("engine_metrics", engine_metrics),
        ("requests", requests),
        ("runs", [run]),
    ]
    try:
        for table, records in batches:
            target = store / table / partition / name
            if records:
                _write_atomic(_to_arrow(table, records), target)
                written.append(target)
            else:
                target.unlink(missing_ok=True)
            _remove_other_copies(store, table, name, keep=target)  # only once the new copy is in place
    except OSError as exc:
        raise StoreError(f"cannot write run {run.run_id} to store {store}: {exc}") from exc
    return written


def write_image_record(store: Path, record: ImageRecord) -> Path:
    """Write one ``images`` row (a build, unchanged check or push) atomically; return its file."""
    target = store / "images" / f"date={record.date}" / f"host={record.host}" / f"image-{record.event_id}.parquet"
    try:
        _write_atomic(_to_arrow("images", [record]), target)
    except OSError as exc:
        raise StoreError(
            f"cannot write image row {record.event_id} ({record.reference}) to store {store}: {exc}"
        ) from exc
    return target
