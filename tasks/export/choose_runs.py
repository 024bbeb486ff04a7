"""choose_runs: the stored runs a `tcobench export --select` takes, of any status (a failed run is provenance too)."""

from __future__ import annotations

import duckdb

from tcobench.errors import QueryError
from tcobench.tasks.analysis.compare import parse_selection
from tcobench.tasks.store.rows import arrow_of

__all__ = ["SELECTABLE_SQL", "choose_runs"]

SELECTABLE_SQL = "SELECT * FROM selectable_runs() ORDER BY started_ns, run_id"  # macro selectable_runs (tcobench/sql)


def choose_runs(con: duckdb.DuckDBPyConnection, select: str | None, where: str) -> list[str]:
    """The ids of the runs ``select`` matches (every stored run without one), oldest first; a QueryError in one line
    when there is none (``where``: the store, for the message)."""
    selection = parse_selection(select, "--select") if select is not None else None
    rows = arrow_of(con, SELECTABLE_SQL).to_pylist()
    ids = [str(r["run_id"]) for r in rows if selection is None or selection.matches(r)]
    if not ids:
        asked = f"matches --select {select!r}" if select is not None else "is stored"
        raise QueryError(f"nothing to export: no run {asked} in {where} ({len(rows)} stored)")
    return ids
