"""Given / expect tests of the shipped SQL (tcobench/sql), dbt-style: small in-memory Arrow tables stand in for what a
view or macro reads, and its rows are compared with the expected ones. No store is written: an in-memory DuckDB
gets the given tables (base tables, or upstream views given directly) and only the views and macros the subject
builds on that are not given (their ``-- reads:`` lines, tasks/store/views.py), in creation order."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa
from pydantic import BaseModel

from tcobench.tasks.store.store import to_arrow
from tcobench.tasks.store.views import define_views, sql_reads, sql_views

__all__ = ["Given", "expect_rows", "given", "run"]

Given = Mapping[str, pa.Table | Sequence[dict[str, Any]]]


def given(table: str, *records: BaseModel) -> pa.Table:
    """A base table's rows as the store writes them (every column, from the records' schema), in memory."""
    return to_arrow(table, list(records))


def _needed(subject: str, provided: set[str]) -> list[tuple[str, str]]:
    """The shipped views and macros ``subject`` builds on (itself included), less the provided ones, in order."""
    texts = dict(sql_views())
    wanted, todo = set(), [subject]
    while todo:
        name = todo.pop()
        if name in wanted or name in provided:
            continue
        wanted.add(name)
        todo += sql_reads(name, texts[name])[0]
    return [(name, text) for name, text in sql_views() if name in wanted]


def run(
    subject: str,
    tables: Given,
    sql: str | None = None,
    params: Mapping[str, object] | None = None,
    threads: int | None = None,
) -> list[dict[str, Any]]:
    """The rows of ``sql`` (default ``SELECT * FROM subject``) over the given tables: each a pa.Table, or a list
    of dicts (its types inferred by Arrow) registered under its name; ``subject`` and what it reads are created
    from tcobench/sql unless given. ``threads``: DuckDB's threads (default: its own, one per core)."""
    con = duckdb.connect(config={} if threads is None else {"threads": threads})
    try:
        for name, rows in tables.items():
            con.register(name, rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(list(rows)))
        define_views(con, _needed(subject, set(tables)))
        found: list[dict[str, Any]] = (
            con.execute(sql or f"SELECT * FROM {subject}", dict(params or {})).fetch_arrow_table().to_pylist()
        )
        return found
    finally:
        con.close()


def _same(got: object, want: object) -> bool:
    if isinstance(want, float) and isinstance(got, int | float):
        return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12) or (math.isnan(got) and math.isnan(want))
    return got == want


def expect_rows(got: Sequence[Mapping[str, object]], want: Sequence[Mapping[str, object]]) -> None:
    """Each row of ``got`` has ``want``'s row's values (in order; only the columns ``want`` names; floats to 1e-12
    relative), and there are as many rows."""
    assert len(got) == len(want), f"{len(got)} rows, expected {len(want)}: {got}"
    for i, (row, expected) in enumerate(zip(got, want, strict=True)):
        wrong = {k: (row.get(k, "<missing>"), v) for k, v in expected.items() if not _same(row.get(k, "<missing>"), v)}
        assert not wrong, f"row {i}: column: (got, expected) {wrong}"
