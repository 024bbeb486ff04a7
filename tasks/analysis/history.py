"""history: change detection over nightly runs, per series (host, model, workload, concurrency).

Each run of a series (oldest first, view ``nightly_trend``) is tested against the runs before it (up to
``window`` of them, at least ``min_prior``) on its per-request samples of two metrics:

- ``decode_tok_s``: view request_metrics' decode_tok_s of each ok request (tokens/s; higher is better)
- ``ttft_ms``: request_metrics' ttft_ns / 1e6 of each ok request (ms; lower is better)

Medians are tcobench's one quantile rule (tasks/analysis/quantile.py, = SQL quantile_cont) at 0.5. The tests of a
series' runs are computed all at once by tasks/analysis/ranktests.py (checked run by run against ``mann_whitney_u``).

Design notes: docs/dev/architecture/analysis.md#tasks-history.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import duckdb
import numpy as np
import pyarrow as pa

from tcobench.errors import ConfigError
from tcobench.schemas import PriceTable
from tcobench.tasks.analysis.quantile import quantile
from tcobench.tasks.analysis.ranktests import SeriesTests, series_tests, u_p_value
from tcobench.tasks.store.arrays import split_lists
from tcobench.tasks.store.query import connect, define_needed
from tcobench.tasks.store.rows import (
    IDS,
    NightlyTrendRow,
    arrow_of,
    collection_paused,
    fetch_rows,
    id_list,
)
from tcobench.tasks.store.store import StoreRef

__all__ = [
    "CACHED_WINDOW",
    "CHANGES_OF_RUNS_VIEWS",
    "HISTORY_FROZEN",
    "HISTORY_MACROS",
    "HISTORY_VIEWS",
    "METRICS",
    "Better",
    "Change",
    "Metric",
    "Point",
    "Series",
    "change_test_rows",
    "change_tests_schema",
    "detect_changes",
    "history",
    "mann_whitney_u",
]

Metric = Literal["decode_tok_s", "ttft_ms"]  # per-request samples tested (module docstring)
Better = Literal["higher", "lower"]
METRICS: dict[Metric, Better] = {"decode_tok_s": "higher", "ttft_ms": "lower"}  # metric -> which way is better
_PROVENANCE = (
    "engine_version",
    "driver_version",
    "image_digest",
    "model_digest",
    "prompt_set_hash",
    "output_tokens_spec",
    "tokenizer",
    "extra_body",
    "gpu_name",
)
CACHED_WINDOW = 5  # detect_changes' default window: the one whose tests are stored
_TESTS_FORMAT = "tcobench-change-tests-1"  # part of every stored test's basis: a new format never reads old rows
_COUNTS = ("n1", "n2", "priors")  # SeriesTests' integer fields; the rest are floats
_FIGURES = ("u", "p", "median", "prior_median", "prior_medians_mean", "prior_medians_sd")


def mann_whitney_u(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """(U of x, two-sided p) by the normal approximation with tie and continuity corrections.

    U of x counts the pairs (x_i, y_j) with x_i > y_j, ties counting one half. Same as
    scipy.stats.mannwhitneyu(x, y, method="asymptotic", use_continuity=True).
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        raise ValueError("both samples need at least one value")
    pooled = np.concatenate([a, b])
    _, inverse, counts = np.unique(pooled, return_inverse=True, return_counts=True)
    average_rank = np.cumsum(counts) - (counts - 1) / 2.0  # mean rank of each distinct value
    u1 = float(average_rank[inverse][:n1].sum() - n1 * (n1 + 1) / 2)
    return u1, u_p_value(u1, n1, n2, float((counts**3 - counts).sum()))


@dataclass(frozen=True)
class Change:
    """One metric of one run against its prior runs."""

    metric: Metric
    median: float
    prior_median: float
    change_pct: float
    p_value: float
    effect: float  # rank-biserial correlation, -1..1
    noise_sd: float | None  # sd of the prior runs' medians
    flagged: bool
    better: bool  # the change goes the good way for this metric


@dataclass(frozen=True)
class Point:
    """One run of a series."""

    run_id: str
    date: str
    started: dt.datetime
    night: int
    output_tok_s: float | None
    decode_tok_s_p50: float | None
    ttft_ms_p50: float | None
    usd_per_m_output_tokens: float | None
    changes: tuple[Change, ...]
    provenance_changes: tuple[str, ...]
    batch_id: str = ""
    prior_usd_per_m_output_tokens: float | None = None  # median over the prior runs tested against

    @property
    def flagged(self) -> bool:
        return any(c.flagged for c in self.changes)

    @property
    def cost_change_pct(self) -> float | None:
        """Cost per 1M output tokens of this run against the median of its prior runs, percent (+ = dearer)."""
        now, before = self.usd_per_m_output_tokens, self.prior_usd_per_m_output_tokens
        return None if now is None or not before else (now / before - 1) * 100


@dataclass(frozen=True)
class Series:
    key: str
    host: str
    model_name: str
    workload: str
    concurrency: int
    gpu_name: str | None
    points: tuple[Point, ...] = field(default_factory=tuple)

    @property
    def flags(self) -> list[tuple[Point, Change]]:
        return [(p, c) for p in self.points for c in p.changes if c.flagged]


@dataclass(frozen=True)
class _Rules:
    window: int
    min_prior: int
    alpha: float
    min_change: float
    min_effect: float
    noise_k: float


def _samples(
    con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None = None, dates: tuple[str, str] | None = None
) -> dict[str, dict[Metric, np.ndarray]]:
    """Per run (all, or ``runs``): its measured, successful requests' decode rates (tokens/s) and TTFTs (ms).
    ``dates``: the first and last date of those runs (requests carry their run's date: the store skips the
    files of other dates).

    Gathered into one list per run and column by DuckDB and split with numpy: a year of history is ten million
    requests, too many to pass through Python one row at a time. Macro history_samples (and view request_metrics
    under it) is defined here when the connection lacks it: a caller whose tests are all stored never binds it."""
    define_needed(con, {"history_samples"})
    if runs is None:
        table = arrow_of(con, "SELECT * FROM history_samples()")
    else:
        first, last = dates if dates is not None else (None, None)
        table = arrow_of(
            con,
            f"SELECT * FROM history_samples(ids := {IDS}, first_date := $first, last_date := $last)",
            {"ids": id_list(runs), "first": first, "last": last},
        )
    ids = table.column("run_id").to_pylist()
    pairs: tuple[tuple[Metric, str], ...] = (("decode_tok_s", "rate"), ("ttft_ms", "ttft"))
    columns = {metric: split_lists(table.column(name)) for metric, name in pairs}
    return {run_id: {metric: arrays[i] for metric, arrays in columns.items()} for i, run_id in enumerate(ids)}


def _changes(metric: Metric, tests: SeriesTests, rules: _Rules) -> _Column:
    """Each run's change in one metric (module docstring), from the series' tests (tasks/analysis/ranktests.py):
    ``_Column.at`` gives it, None where the run has no samples or too few prior runs. Computed on the series' arrays
    at once (a year's report makes 73,000 of them), with the same float operations as one run at a time."""
    n1, n2 = tests.n1, tests.n2
    with np.errstate(invalid="ignore", divide="ignore"):
        effect = 2 * tests.u / (n1 * n2) - 1
        change = np.where(tests.prior_median != 0, tests.median / tests.prior_median - 1, 0.0)  # NaN stays NaN
    sd = tests.prior_medians_sd
    beyond_noise = np.isnan(sd) | (np.abs(tests.median - tests.prior_medians_mean) > rules.noise_k * sd)
    flagged = (
        (tests.p < rules.alpha)
        & (np.abs(effect) >= rules.min_effect)
        & (np.abs(change) >= rules.min_change)
        & beyond_noise
    )
    better = (change > 0) == (METRICS[metric] == "higher")
    tested = (n1 != 0) & (tests.priors >= rules.min_prior)
    return _Column(
        metric,
        tested & flagged,
        (
            tested.tolist(),
            tests.median.tolist(),
            tests.prior_median.tolist(),
            (change * 100).tolist(),
            tests.p.tolist(),
            effect.tolist(),
            sd.tolist(),
            flagged.tolist(),
            better.tolist(),
        ),
    )


@dataclass(frozen=True)
class _Column:
    """A metric's changes over a series' runs (``_changes``): which runs it flags, and each run's figures."""

    metric: Metric
    flags: np.ndarray  # per run: tested and flagged
    figures: tuple[list[Any], ...]  # per run: tested, median, prior, change %, p, effect, noise sd, flagged, better

    def at(self, i: int) -> Change | None:
        """Run i's Change (None: not tested)."""
        ok, median, prior, pct, p, e, noise, f, b = (column[i] for column in self.figures)
        return Change(self.metric, median, prior, pct, p, e, None if math.isnan(noise) else noise, f, b) if ok else None


def _provenance_changes(row: Mapping[str, object], previous: Mapping[str, object] | None) -> tuple[str, ...]:
    """What changed in the _PROVENANCE columns of nightly_trend since the previous run."""
    if previous is None:
        return ()
    return tuple(f"{k} {_short(previous[k])} -> {_short(row[k])}" for k in _PROVENANCE if row[k] != previous[k])


def _short(value: object) -> str:
    text = str(value)
    return text[:19] + "..." if len(text) > 22 else text


def _prior_cost(prior: Sequence[NightlyTrendRow]) -> float | None:
    costs = [r["usd_per_m_output_tokens"] for r in prior if r["usd_per_m_output_tokens"] is not None]
    return quantile(costs, 0.5) if costs else None  # a list: up to ``window`` values, no array needed


def change_tests_schema() -> pa.Schema:
    """Table ``change_tests``: one row per run and metric, its tests against its prior runs (module docstring)."""
    fields = [pa.field("run_id", pa.string()), pa.field("metric", pa.string()), pa.field("basis", pa.string())]
    fields += [pa.field(name, pa.int64()) for name in _COUNTS] + [pa.field(name, pa.float64()) for name in _FIGURES]
    return pa.schema(fields)


def _bases(rows: Sequence[NightlyTrendRow], window: int, committed: Mapping[str, int]) -> list[str | None]:
    """What each run's tests are computed from: it and its up to ``window`` prior runs, each by id and commit time,
    hashed (None when one of them has no commits row: its tests are then never stored). Each run's part is encoded
    once: a run is in the basis of up to ``window`` + 1 runs."""
    head = f"{_TESTS_FORMAT}\0{window}".encode()
    parts = [
        None if (stamp := committed.get(row["run_id"])) is None else f"\0{row['run_id']}\0{stamp}".encode()
        for row in rows
    ]
    found: list[str | None] = []
    for i in range(len(rows)):
        mine = [part for part in parts[max(0, i - window) : i + 1] if part is not None]
        whole = len(mine) == min(i, window) + 1
        found.append(hashlib.sha256(head + b"".join(mine)).hexdigest()[:24] if whole else None)
    return found


@dataclass
class _Tests:
    """A series' tests, per metric: arrays over its runs (SeriesTests' fields), filled from the stored tests or
    computed; ``basis`` of each run (None: not storable), ``fresh``: the runs computed now."""

    arrays: dict[Metric, dict[str, np.ndarray]]
    basis: list[str | None]
    fresh: list[int]

    def of(self, metric: Metric) -> SeriesTests:
        return SeriesTests(**self.arrays[metric])


def _empty_tests(runs: int) -> dict[str, np.ndarray]:
    return {**{n: np.zeros(runs, dtype=np.int64) for n in _COUNTS}, **{n: np.full(runs, np.nan) for n in _FIGURES}}


@dataclass(frozen=True)
class _Stored:
    """Stored tests (``_stored_tests``): where each (run id, metric) is, with its basis, and their columns."""

    at: dict[tuple[str, str], tuple[int, str]]  # (run id, metric) -> (row, basis)
    columns: dict[str, np.ndarray]  # SeriesTests' fields, by row (a NULL figure: NaN)


def _stored_tests(con: duckdb.DuckDBPyConnection, ids: list[str]) -> _Stored:
    """The stored tests of these runs; none without a store of them (``tasks.store.query`` defines
    ``_stored_change_tests`` when the store has the table)."""
    if not ids:
        return _Stored({}, {})
    try:
        table = con.execute(
            f"SELECT * FROM stored_change_tests('_stored_change_tests', {IDS})", {"ids": id_list(ids)}
        ).fetch_arrow_table()
    except duckdb.CatalogException:  # no view of them: the store has none (or they were dropped)
        return _Stored({}, {})
    keys = zip(*(table.column(name).to_pylist() for name in ("run_id", "metric", "basis")), strict=True)
    return _Stored(
        {(run_id, metric): (row, basis) for row, (run_id, metric, basis) in enumerate(keys)},
        {name: table.column(name).to_numpy() for name in (*_COUNTS, *_FIGURES)},
    )


def _test_all(
    con: duckdb.DuckDBPyConnection,
    by_series: Mapping[str, list[NightlyTrendRow]],
    keep: set[str] | None,
    window: int,
) -> dict[str, _Tests]:
    """Every series' tests of the runs in ``keep`` (all when None): the stored ones whose basis still holds (for
    the stored window only), the others computed from the samples of just those runs and their prior runs."""
    wanted = [r["run_id"] for rows in by_series.values() for r in rows]
    committed: dict[str, int] = {}
    if window == CACHED_WINDOW and wanted:
        committed = {
            str(k): int(v)
            for k, v in con.execute(f"SELECT * FROM run_commits({IDS})", {"ids": id_list(wanted)}).fetchall()
        }
    targets = {
        key: [i for i, r in enumerate(rows) if keep is None or r["run_id"] in keep] for key, rows in by_series.items()
    }
    stored = (
        _stored_tests(con, [by_series[k][i]["run_id"] for k, idx in targets.items() for i in idx])
        if committed
        else _Stored({}, {})
    )
    found: dict[str, _Tests] = {}
    for key, rows in by_series.items():
        basis: list[str | None] = _bases(rows, window, committed) if committed else [None] * len(rows)
        tests = _Tests({metric: _empty_tests(len(rows)) for metric in METRICS}, basis, [])
        held, sources = [], []  # the runs whose stored tests hold, and where those are (a row per metric)
        for i in targets[key]:
            hits = [stored.at.get((rows[i]["run_id"], metric)) for metric in METRICS]
            if basis[i] is None or any(h is None or h[1] != basis[i] for h in hits):
                tests.fresh.append(i)
                continue
            held.append(i)
            sources.append([h[0] for h in hits if h is not None])
        if held:
            at = np.array(sources)  # runs x metrics
            for m, metric in enumerate(METRICS):
                for name in (*_COUNTS, *_FIGURES):
                    tests.arrays[metric][name][held] = stored.columns[name][at[:, m]]
        found[key] = tests
    spans = {key: _spans(tests.fresh, window) for key, tests in found.items() if tests.fresh}
    read = [r["run_id"] for key, parts in spans.items() for low, high in parts for r in by_series[key][low:high]]
    if not read:
        return found
    if keep is None and len(read) == len(wanted):
        samples = _samples(con)  # every run of the store: no list of ids to match
    else:
        dated = [r["date"] for key, parts in spans.items() for low, high in parts for r in by_series[key][low:high]]
        samples = _samples(con, read, (min(dated), max(dated)))
    none = np.array([])
    for key, parts in spans.items():
        rows, tests = by_series[key], found[key]
        fresh = np.array(tests.fresh)
        for low, high in parts:
            at = fresh[(fresh >= low) & (fresh < high)]
            for metric in METRICS:
                part = series_tests([samples.get(r["run_id"], {}).get(metric, none) for r in rows[low:high]], window)
                for name in (*_COUNTS, *_FIGURES):
                    tests.arrays[metric][name][at] = getattr(part, name)[at - low]
    return found


def _spans(fresh: list[int], window: int) -> list[tuple[int, int]]:
    """The stretches of a series (start, end: a slice) that testing the ``fresh`` runs (ascending positions) reads:
    each fresh run and its up to ``window`` prior runs, overlapping stretches joined."""
    spans: list[tuple[int, int]] = []
    for i in fresh:
        low = max(0, i - window)
        if spans and low <= spans[-1][1]:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((low, i + 1))
    return spans


def _series(
    rows: list[NightlyTrendRow], tests: _Tests, rules: _Rules, keep: set[str] | None = None, flagged_only: bool = False
) -> Series:
    """The series' points (only those of the runs in ``keep``, when given; only the flagged ones, with
    ``flagged_only``), each tested against its prior runs."""
    by_metric = [_changes(metric, tests.of(metric), rules) for metric in METRICS]
    wanted = np.logical_or.reduce([column.flags for column in by_metric]) if flagged_only else None
    points = []
    for i, row in enumerate(rows):
        if (keep is not None and row["run_id"] not in keep) or (wanted is not None and not wanted[i]):
            continue
        prior_rows = rows[max(0, i - rules.window) : i]
        changes = [found for column in by_metric if (found := column.at(i)) is not None]
        points.append(
            Point(
                row["run_id"],
                row["date"],
                row["started"],
                row["night"],
                row["output_tok_s"],
                row["req_decode_tok_s_p50"],
                row["ttft_p50_ms"],
                row["usd_per_m_output_tokens"],
                tuple(changes),
                _provenance_changes(row, rows[i - 1] if i else None),
                row["batch_id"],
                _prior_cost(prior_rows),
            )
        )
    first = rows[0]
    return Series(
        first["series"],
        first["host"],
        first["model_name"],
        first["workload"],
        first["concurrency"],
        first["gpu_name"],
        tuple(points),
    )


def _trend(
    con: duckdb.DuckDBPyConnection, window: int, runs: Sequence[str] | None, costs: bool = True
) -> dict[str, list[NightlyTrendRow]]:
    """View nightly_trend's ok and partial runs by series, oldest first; with ``runs``, only those runs' series,
    only each of those runs and the ``window`` runs before it (macro history_points_around). Without ``costs``,
    view trend_runs' (the same rows, usd_per_m_output_tokens NULL: view tco is not computed)."""
    source = "nightly_trend" if costs else "trend_runs"  # the view macro history_points reads
    params: dict[str, object] = {"source": source}
    if runs is None:
        sql = "SELECT * FROM history_points($source)"
    else:  # the runs' series, only each of the runs and the ``window`` runs before it
        ids = id_list(runs)
        named = con.execute(f"SELECT * FROM series_of_runs({IDS})", {"ids": ids}).fetchall()
        if not named:
            return {}
        sql = f"SELECT * FROM history_points_around($source, $names, {IDS}, $window)"
        params.update(names=[str(name) for (name,) in named], ids=ids, window=window)
    by_series: dict[str, list[NightlyTrendRow]] = defaultdict(list)
    for row in fetch_rows(con, sql, NightlyTrendRow, params):
        by_series[row["series"]].append(row)
    return by_series


# The views detect_changes reads: a connection for it defines these and what they build on, not every view
# (docs/dev/performance.md#view-binding).
# HISTORY_MACROS: the macros it calls (tcobench/sql/macros), which read the views it is given
HISTORY_MACROS = (
    "history_samples",
    "history_points",
    "history_points_around",
    "series_of_runs",
    "run_commits",
    "stored_change_tests",
)
# HISTORY_VIEWS: what `history` (detect_changes over the whole store) reads, and so defines as it connects; macro
# history_samples only where some tests are not stored (``_samples`` defines it), the macros of a ``runs`` list never
HISTORY_VIEWS = frozenset({"nightly_trend", "history_points", "run_commits", "stored_change_tests"})
# What history computes once, as it connects: view availability (so that tco_scenarios binds a table, not
# availability_since's tree), the per-run views that both trend_runs and tco read, and nightly_trend, which it reads
# whole (history_points then binds a table); not tco, of which nightly_trend reads one column
# (docs/dev/performance.md#history-freeze)
HISTORY_FROZEN = ("availability", "run_summary", "energy", "nightly_trend")
# What detect_changes reads when given ``runs`` and ``costs=False`` (`tcobench history --changes`): view trend_runs,
# not nightly_trend and the cost views under it; macro history_samples is defined only if some tests are not stored
CHANGES_OF_RUNS_VIEWS = frozenset(
    {"trend_runs", "series_of_runs", "history_points_around", "run_commits", "stored_change_tests"}
)


def detect_changes(
    con: duckdb.DuckDBPyConnection,
    *,
    window: int = CACHED_WINDOW,
    min_prior: int = 2,
    alpha: float = 0.01,
    min_change: float = 0.05,
    min_effect: float = 0.5,
    noise_k: float = 3.0,
    runs: Sequence[str] | None = None,
    costs: bool = True,
    flagged_only: bool = False,
) -> list[Series]:
    """Every series of view nightly_trend with its points and their tested changes (module docstring). With
    ``runs``, only those runs' points, in the series they belong to, each tested against the same prior runs as
    over the whole store (a run's summary or a comparison need not test the whole store's history): only the
    rows of those runs and of the ``window`` runs before each are read and tested. Stored tests
    are used where their basis still holds (module docstring). ``costs=False``: the points carry no cost
    (``usd_per_m_output_tokens`` and its prior median None), for a caller that needs only the changes; view
    trend_runs is read instead, and tco is not computed (docs/dev/performance.md#trend-without-costs).
    ``flagged_only``: only the flagged points (a comparison's flagged runs), and only the series that have one."""
    if window < 1 or min_prior < 1 or min_prior > window:
        raise ConfigError(f"need 1 <= min_prior <= window, got min_prior={min_prior}, window={window}")
    if not 0 < alpha < 1 or min_change < 0 or not 0 <= min_effect <= 1 or noise_k < 0:
        raise ConfigError("need 0 < alpha < 1, min_change >= 0, 0 <= min_effect <= 1 and noise_k >= 0")
    rules = _Rules(window, min_prior, alpha, min_change, min_effect, noise_k)
    by_series = _trend(con, window, runs, costs)
    keep = set(runs) if runs is not None else None
    tests = _test_all(con, by_series, keep, window)
    found = (_series(rows, tests[key], rules, keep, flagged_only) for key, rows in by_series.items())
    return [series for series in found if series.points]


def change_test_rows(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """The tests to store (table ``change_tests``, ``change_tests_schema``): those of every run whose stored
    tests are missing or no longer hold (module docstring), computed now; runs without a commits row are left
    out (their tests cannot be checked later)."""
    by_series = _trend(con, CACHED_WINDOW, None, costs=False)  # the tests read no cost
    tests = _test_all(con, by_series, None, CACHED_WINDOW)
    rows: list[dict[str, Any]] = []
    for key, series in tests.items():
        for i in series.fresh:
            if series.basis[i] is None:
                continue
            for metric in METRICS:
                values = {name: series.arrays[metric][name][i] for name in (*_COUNTS, *_FIGURES)}
                rows.append(
                    {
                        "run_id": by_series[key][i]["run_id"],
                        "metric": metric,
                        "basis": series.basis[i],
                        **{n: int(values[n]) for n in _COUNTS},
                        **{n: None if math.isnan(values[n]) else float(values[n]) for n in _FIGURES},
                    }
                )
    return pa.Table.from_pylist(rows, schema=change_tests_schema())


def history(store: StoreRef, prices: PriceTable, snapshot: int | None = None, **rules: Any) -> list[Series]:
    """detect_changes over the store (rules: window, min_prior, alpha, min_change, min_effect, noise_k)."""
    with collection_paused():
        con = connect(store, prices, snapshot=snapshot, needs=HISTORY_VIEWS, freeze=HISTORY_FROZEN)
        try:
            return detect_changes(con, **rules)
        finally:
            con.close()
