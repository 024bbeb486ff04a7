"""operations: what the nightly history says about running each platform, beside what it costs.

- ``availability``: view availability's rows over every night, or over the nights since a date (macro
  availability_since);
- ``environment_changes``: view environment_changes' rows (each change of a host's driver, runtime, kernel, engine
  version or image digest, with the failures of the nights that followed), each with the performance changes that
  `tcobench history` flags among the host's runs in those nights (tasks/analysis/history.py, default rules);
- ``measured_adaptation``: view measured_adaptation's rows (first attempted cell to first ok run, per host and per
  platform), and ``with_measured_adaptation``: a price table whose hardware rows carry the measured days in place
  of their ``adaptation_days`` assumption, so that the one TCO formula (sql/cost/tco_scenarios.sql) prices them.

Formulas and units: the views' headers and .yml files (tcobench/sql/trend/); docs/cost-model.md.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import duckdb

from tcobench.errors import ConfigError
from tcobench.schemas import PriceTable
from tcobench.tasks.analysis.history import CHANGES_OF_RUNS_VIEWS, Change, Series, detect_changes
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.rows import (
    AvailabilityRow,
    EnvironmentChangeRow,
    MeasuredAdaptationRow,
    collection_paused,
    fetch_rows,
)
from tcobench.tasks.store.store import StoreRef

__all__ = [
    "ADAPTATIONS",
    "OPERATIONS_VIEWS",
    "Adaptation",
    "EnvironmentChange",
    "Operations",
    "adaptation_choice",
    "change_words",
    "availability",
    "availability_of",
    "changes_of",
    "environment_changes",
    "measured_adaptation",
    "measured_adaptation_of",
    "operations",
    "operations_of",
    "with_measured_adaptation",
]

Adaptation = Literal["assumed", "measured"]  # where the adaptation term's days come from
ADAPTATIONS: tuple[Adaptation, ...] = get_args(Adaptation)


def adaptation_choice(value: str) -> Adaptation:
    """``value`` as an Adaptation; anything else is a ConfigError listing the valid ones."""
    for choice in ADAPTATIONS:
        if value == choice:
            return choice
    raise ConfigError(f"--adaptation {value!r}: choose {' or '.join(ADAPTATIONS)}")


@dataclass(frozen=True)
class EnvironmentChange:
    """A row of view environment_changes and the flagged performance changes that followed it."""

    row: EnvironmentChangeRow
    flags: tuple[tuple[str, Change], ...]  # (series key, flagged change) among the host's runs in the window


_AVAILABILITY_SQL = "SELECT * FROM availability_since($since) ORDER BY scope DESC, platform, host NULLS FIRST"


def availability_of(con: duckdb.DuckDBPyConnection, since: dt.date | None = None) -> list[AvailabilityRow]:
    """View availability's rows, platforms first then hosts, by platform and host; with ``since``, over the nights
    whose first run started on that day (UTC) or later (macro availability_since)."""
    since_ns = None
    if since is not None:
        since_ns = int(dt.datetime.combine(since, dt.time(), dt.UTC).timestamp()) * 1_000_000_000
    return fetch_rows(con, _AVAILABILITY_SQL, AvailabilityRow, {"since": since_ns})


def availability(
    store: StoreRef, prices: PriceTable, since: dt.date | None = None, snapshot: int | None = None
) -> list[AvailabilityRow]:
    """availability_of over the store."""
    with collection_paused():
        con = connect(store, prices, snapshot=snapshot, needs={"availability_since"})
        try:
            return availability_of(con, since)
        finally:
            con.close()


_Flagged = tuple[str, str, dt.datetime, Change]  # (series key, host, run start, flagged change)


def _flags_in(change: EnvironmentChangeRow, flagged: Sequence[_Flagged]) -> tuple[tuple[str, Change], ...]:
    """The flagged changes of ``change``'s host's runs from changed_at to window_end (open when NULL)."""
    end = change["window_end"]
    return tuple(
        (key, c)
        for key, host, started, c in flagged
        if host == change["host"] and change["changed_at"] <= started and (end is None or started < end)
    )


def _with_flags(rows: Sequence[EnvironmentChangeRow], series: Sequence[Series]) -> list[EnvironmentChange]:
    flagged = [(s.key, s.host, p.started, c) for s in series for p in s.points for c in p.changes if c.flagged]
    return [EnvironmentChange(row, _flags_in(row, flagged)) for row in rows]


_CHANGES_SQL = "SELECT * FROM environment_changes"
_WINDOW_RUNS_SQL = "SELECT run_id FROM environment_change_runs()"


def changes_of(con: duckdb.DuckDBPyConnection, series: Sequence[Series]) -> list[EnvironmentChange]:
    """View environment_changes' rows (by host, oldest first), each with the flagged changes of ``series`` (from
    detect_changes) among its host's runs from the change to the view's window_end."""
    return _with_flags(fetch_rows(con, _CHANGES_SQL, EnvironmentChangeRow), series)


def environment_changes(store: StoreRef, prices: PriceTable, snapshot: int | None = None) -> list[EnvironmentChange]:
    """changes_of over the store, with the changes `tcobench history` flags by its default rules (no cost read):
    only the runs inside the changes' windows are tested (macro environment_change_runs), each against the same
    prior runs as over the whole store, so their flags are those of the whole store's; none when there is no
    change."""
    needs = {"environment_changes", "environment_change_runs", *CHANGES_OF_RUNS_VIEWS}
    with collection_paused():
        # environment_changes is read twice: its rows, and the runs of their windows
        con = connect(store, prices, snapshot=snapshot, needs=needs, freeze=("environment_changes",))
        try:
            rows = fetch_rows(con, _CHANGES_SQL, EnvironmentChangeRow)
            if not rows:
                return []
            runs = [str(run_id) for (run_id,) in con.execute(_WINDOW_RUNS_SQL).fetchall()]
            return _with_flags(rows, detect_changes(con, costs=False, flagged_only=True, runs=runs))
        finally:
            con.close()


_ADAPTATION_SQL = "SELECT * FROM measured_adaptation ORDER BY scope DESC, platform, host NULLS FIRST"


def measured_adaptation(
    store: StoreRef, prices: PriceTable, snapshot: int | None = None
) -> list[MeasuredAdaptationRow]:
    """View measured_adaptation's rows, platforms first then hosts, by platform and host."""
    with collection_paused():
        con = connect(store, prices, snapshot=snapshot, needs={"measured_adaptation"})
        try:
            return fetch_rows(con, _ADAPTATION_SQL, MeasuredAdaptationRow)
        finally:
            con.close()


@dataclass(frozen=True)
class Operations:
    """What `tcobench compare` shows beside the cost: measured adaptation, availability over every night, and the
    environment changes (without history's performance flags: those are compare's own flagged runs)."""

    adaptation: list[MeasuredAdaptationRow]
    availability: list[AvailabilityRow]
    changes: list[EnvironmentChange]


# the views and macros operations_of reads: a connection for it defines these and what they build on
OPERATIONS_VIEWS = frozenset({"measured_adaptation", "availability_since", "environment_changes"})


def measured_adaptation_of(con: duckdb.DuckDBPyConnection) -> list[MeasuredAdaptationRow]:
    """View measured_adaptation's rows over ``con``: per platform, then per host."""
    return fetch_rows(con, _ADAPTATION_SQL, MeasuredAdaptationRow)


def operations_of(con: duckdb.DuckDBPyConnection) -> Operations:
    """The three views' rows over ``con`` (a connection that defines ``OPERATIONS_VIEWS``)."""
    return Operations(
        measured_adaptation_of(con),
        availability_of(con),
        [EnvironmentChange(row, ()) for row in fetch_rows(con, _CHANGES_SQL, EnvironmentChangeRow)],
    )


def operations(store: StoreRef, prices: PriceTable, snapshot: int | None = None) -> Operations:
    """operations_of over the store."""
    with collection_paused():
        con = connect(store, prices, snapshot=snapshot, needs=OPERATIONS_VIEWS)
        try:
            return operations_of(con)
        finally:
            con.close()


def with_measured_adaptation(prices: PriceTable, measured: Sequence[MeasuredAdaptationRow]) -> PriceTable:
    """``prices`` with each hardware row's adaptation_days replaced by its platform's measured mean (view
    measured_adaptation, scope 'platform'); a row without a measured value keeps its assumption."""
    days = {
        r["platform"]: r["measured_days"]
        for r in measured
        if r["scope"] == "platform" and r["measured_days"] is not None
    }
    hardware = {
        key: row.model_copy(update={"adaptation_days": days[key]}) if key in days else row
        for key, row in prices.hardware.items()
    }
    return prices.model_copy(update={"hardware": hardware})


_METRIC_WORDS = {"decode_tok_s": "decode tok/s", "ttft_ms": "TTFT"}


def change_words(change: EnvironmentChange) -> str:
    """One line: 'host: item before -> after on date; N platform failures in the next M nights; metric +x%
    (flagged[, in k series])', the metric's largest flagged change by size, each metric once."""
    r = change.row
    nights = f"{r['nights_seen']} night" + ("s" if r["nights_seen"] != 1 else "")
    failures = f"{r['platform_failed_cells']} platform failure" + ("s" if r["platform_failed_cells"] != 1 else "")
    words = (
        f"{r['host']}: {r['item']} {r['before']} -> {r['after']} on {r['changed_at']:%Y-%m-%d}; "
        f"{failures} in the next {nights}"
    )
    by_metric: dict[str, list[Change]] = {}
    for _, c in change.flags:
        by_metric.setdefault(c.metric, []).append(c)
    for metric, found in by_metric.items():
        worst = max(found, key=lambda c: abs(c.change_pct))
        series = f", in {len(found)} series" if len(found) > 1 else ""
        words += f"; {_METRIC_WORDS.get(metric, metric)} {worst.change_pct:+.0f}% (flagged{series})"
    return words
