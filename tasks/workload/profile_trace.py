"""profile_trace: a trace's traffic profile (``TraceStatsRecord``): request and token rates per minute, the length
distributions and the prefix-sharing ratio, computed by SQL table macro ``trace_profile`` (tcobench/sql/macros).

The trace is streamed (``read_trace``) into an in-memory DuckDB table in batches of ``_BATCH`` requests, so Python
holds one batch at a time; DuckDB holds the requests' five columns (the quantiles need every length).
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Callable, Iterator

import duckdb
import pyarrow as pa

import tcobench
from tcobench.errors import ConfigError
from tcobench.schemas import MOONCAKE_BLOCK_TOKENS, TraceConfig, TraceRequest, TraceStatsRecord
from tcobench.tasks.store.views import define_views, sql_views
from tcobench.tasks.workload.read_trace import file_sha256, open_trace

__all__ = ["TRACE_COLUMNS", "profile_trace", "trace_batches"]

_BATCH = 65_536
_MINUTE_NS = 60 * 1_000_000_000
_TABLE = "trace_requests"
TRACE_COLUMNS = pa.schema(
    [
        ("seq", pa.int64()),
        ("at_ns", pa.int64()),
        ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("hash_ids", pa.list_(pa.int64())),
    ]
)  # the table macro trace_profile reads (its header says what each column is)


def trace_batches(requests: Iterator[TraceRequest], size: int = _BATCH) -> Iterator[pa.RecordBatch]:
    """The requests as Arrow batches of TRACE_COLUMNS, ``size`` requests each."""
    columns: list[list[object]] = [[] for _ in TRACE_COLUMNS]
    for seq, request in enumerate(requests):
        for column, value in zip(
            columns,
            (seq, request.at_ns, request.input_tokens, request.output_tokens, request.hash_ids),
            strict=True,
        ):
            column.append(value)
        if len(columns[0]) >= size:
            yield _batch(columns)
            columns = [[] for _ in TRACE_COLUMNS]
    if columns[0]:
        yield _batch(columns)


def _batch(columns: list[list[object]]) -> pa.RecordBatch:
    arrays = [pa.array(values, field.type) for values, field in zip(columns, TRACE_COLUMNS, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=TRACE_COLUMNS)


class _Stream:
    """An Arrow table offered to DuckDB as a bare Arrow C stream (the PyCapsule interface): DuckDB scans a pyarrow
    Table through pyarrow.dataset, an import that was a fixed cost of `tcobench plan`
    (docs/dev/bench-log/2026-12-07-plan-2.md), and a stream without it."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self._table.__arrow_c_stream__(requested_schema)


def _macro(con: duckdb.DuckDBPyConnection) -> None:
    define_views(con, [(name, text) for name, text in sql_views() if name == "trace_profile"])


def profile_trace(config: TraceConfig, progress: Callable[[int], None] | None = None) -> TraceStatsRecord:
    """The profile of the trace's requests (its window, on its time scale); ConfigError at the first bad line,
    before anything is stored. ``progress`` is called with the number of requests read after each batch."""
    trace = open_trace(config)
    con = duckdb.connect(":memory:")
    try:
        con.register("_tcob_batch", _Stream(TRACE_COLUMNS.empty_table()))
        con.execute(f"CREATE TABLE {_TABLE} AS SELECT * FROM _tcob_batch")
        read = 0
        for batch in trace_batches(trace.requests()):
            con.register("_tcob_batch", _Stream(pa.Table.from_batches([batch])))
            con.execute(f"INSERT INTO {_TABLE} SELECT * FROM _tcob_batch")
            read += batch.num_rows
            if progress is not None:
                progress(read)
        if read == 0:
            window = config.window_s
            where = f" in the window {window[0]:g},{window[1]:g} s" if window is not None else ""
            raise ConfigError(f"trace {config.path}: no requests{where}")
        _macro(con)
        cursor = con.execute(
            f"SELECT * FROM trace_profile('{_TABLE}', $minute_ns, $block)",
            {"minute_ns": _MINUTE_NS, "block": MOONCAKE_BLOCK_TOKENS},
        )
        names = [d[0] for d in cursor.description or ()]
        row = dict(zip(names, cursor.fetchone() or (), strict=True))
    finally:
        con.close()
    now = time.time_ns()
    start, end = config.window_s if config.window_s is not None else (None, None)
    return TraceStatsRecord(
        stats_id=uuid.uuid4().hex,
        date=dt.datetime.fromtimestamp(now / 1e9, dt.UTC).strftime("%Y-%m-%d"),
        ts_ns=now,
        path=str(config.path),
        sha256=file_sha256(config.path),
        format=trace.format.value,
        time_scale=config.time_scale,
        window_start_s=start,
        window_end_s=end,
        tool_version=tcobench.__version__,
        **row,
    )
