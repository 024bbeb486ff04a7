"""rows: the rows tcobench's Python code reads from the SQL views, typed (one TypedDict per view).

The views' TypedDicts are generated from their column declarations (tcobench/sql/<layer>/<view>.yml, schemas/
columns.py) into tasks/store/view_rows.py and re-exported here, with the Python type DuckDB returns for each column
through Arrow (VARCHAR -> str, BIGINT -> int, DOUBLE -> float, BOOLEAN -> bool, DATE -> date, TIMESTAMP -> datetime);
``| None`` unless the column has a not_null data test. ``VIEW_ROWS`` maps a view to its TypedDict;
tests/unit/tasks/store/test_rows.py checks every one against the view. ``fetch_rows`` runs a query and returns its
rows as a TypedDict, checking that the query's columns are the TypedDict's keys.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypedDict, TypeVar, cast

import duckdb
import pyarrow as pa

from tcobench.tasks.store.view_rows import (
    VIEW_ROWS,
    AvailabilityRow,
    CostAtLatencyTargetRow,
    EnvironmentChangeRow,
    MeasuredAdaptationRow,
    NightlyTrendRow,
    RecordCardRow,
    RunSummaryRow,
    TcoRow,
    TcoSourcesRow,
)

__all__ = [
    "IDS",
    "VIEW_ROWS",
    "AvailabilityRow",
    "CostAtLatencyTargetRow",
    "EnvironmentChangeRow",
    "MeasuredAdaptationRow",
    "NightlyTrendRow",
    "RecordCardRow",
    "RunRow",
    "RunSummaryRow",
    "TcoRow",
    "TcoSourcesRow",
    "arrow_of",
    "collection_paused",
    "dates_between",
    "fetch_rows",
    "id_list",
    "listed",
    "typed_rows",
]

_SEPARATOR = "\x1f"  # ASCII unit separator: never in a run id (id_list refuses one that has it)


def listed(param: str) -> str:
    """SQL: the list of texts bound to ``$param`` with id_list."""
    return f"string_split(${param}, chr({ord(_SEPARATOR)}))"


IDS = listed("ids")  # SQL: the list of run ids bound to $ids with id_list


def dates_between(dates: tuple[str, str] | None) -> tuple[str, dict[str, object]]:
    """The SQL condition `` AND date BETWEEN $first AND $last`` and its parameters for runs' first and last date
    (requests carry their run's date: the store then skips other dates' files); ("", {}) for None."""
    if dates is None:
        return "", {}
    return " AND date BETWEEN $first AND $last", {"first": dates[0], "last": dates[1]}


def id_list(ids: Iterable[str]) -> str:
    """Run ids as one text parameter (``$ids``) that SQL splits back into a list (``IDS``).

    DuckDB's Python binding converts a list parameter value by value and looks pandas up for each value; where
    pandas is not installed every lookup searches the import path again, far slower than the same ids as one text
    (docs/dev/performance.md#id-list-parameter)."""
    values = list(ids)
    bad = next((v for v in values if _SEPARATOR in v), None)
    if bad is not None:
        raise ValueError(f"run id {bad!r} contains the unit separator U+001F")
    return _SEPARATOR.join(values)


class RunRow(TypedDict):
    """Which run and where it ran: the view runs' columns that queries joining runs select first."""

    run_id: str
    batch_id: str
    date: str
    host: str
    gpu_vendor: str | None
    gpu_name: str | None


Row = TypeVar("Row", bound=Mapping[str, Any])


def typed_rows(table: pa.Table, row: type[Row]) -> list[Row]:
    """The rows of an Arrow table as ``row`` (a TypedDict); TypeError when a column is not one of the row's keys
    or a required key is not a column (a bug: the query and the TypedDict disagree)."""
    keys: frozenset[str] = getattr(row, "__required_keys__", frozenset()) | getattr(
        row, "__optional_keys__", frozenset()
    )
    required: frozenset[str] = getattr(row, "__required_keys__", frozenset())
    missing = sorted(required - set(table.schema.names))
    extra = sorted(set(table.schema.names) - keys)
    if missing or extra:
        raise TypeError(
            f"columns do not match {row.__name__}: missing {missing}, not in it {extra} (tasks/store/rows.py)"
        )
    return cast(list[Row], table.to_pylist())


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for a block that builds many row objects and no reference cycles
    (compare, history, report over a year's store: tens of thousands of row dicts, points and samples, each allocation
    burst setting off collections of the whole heap: docs/dev/performance.md#gc-paused). Reference counting still frees
    everything; the previous state comes back afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def arrow_of(con: duckdb.DuckDBPyConnection, sql: str, params: Mapping[str, object] | None = None) -> pa.Table:
    """The result of ``sql`` (``$name`` parameters from ``params``) as an Arrow table, executed as a statement, with
    or without parameters: a relation (``con.sql(sql)``) materialises its result first and is then scanned again,
    slower (docs/dev/performance.md#arrow-of-statement)."""
    return con.execute(sql, dict(params) if params else None).fetch_arrow_table()


def fetch_rows(
    con: duckdb.DuckDBPyConnection, sql: str, row: type[Row], params: Mapping[str, object] | None = None
) -> list[Row]:
    """The rows of ``sql`` (``$name`` parameters from ``params``) as ``row``; see typed_rows."""
    return typed_rows(arrow_of(con, sql, params), row)
