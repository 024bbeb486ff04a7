"""history: change detection over nightly runs, per series (host, model, workload, concurrency).

Each run of a series (oldest first, view ``nightly_trend``) is tested against the runs before it (up to
``window`` of them, at least ``min_prior``) on its per-request samples of two metrics:

- ``decode_tok_s``: view request_metrics' decode_tok_s of each ok request (tokens/s; higher is better)
- ``ttft_ms``: request_metrics' ttft_ns / 1e6 of each ok request (ms; lower is better)

Medians are tcobench's one quantile rule (tasks/quantile.py, = SQL quantile_cont) at 0.5. The tests of a
series' runs are computed all at once by tasks/ranktests.py (checked run by run against ``mann_whitney_u``).

A change is flagged only when all of these hold, so run-to-run noise is not reported as a change:

1. Mann-Whitney U (two-sided; normal approximation with tie and continuity corrections) of the run's samples
   against the pooled samples of the prior runs gives p < ``alpha``;
2. the effect is large: |rank-biserial correlation| >= ``min_effect`` (r = 2 U / (n1 n2) - 1: +1 when every
   new sample is above every prior one) and |median / prior median - 1| >= ``min_change``;
3. the shift exceeds night-to-night noise: |median - mean of the prior runs' medians| > ``noise_k`` x their
   standard deviation (checked when there are at least 2 prior runs).

What changed in the run's provenance since the previous run (engine version, driver, image, model digest,
prompts) is listed next to each point, as the likely cause. What a change did to cost: each point also carries
the median cost per 1M output tokens (view tco) of the same prior runs (``prior_usd_per_m_output_tokens``), so a
flagged point reads "cost X -> Y".

A point's ``night`` is its position in the series; ``batch_id`` (the nightly batch) and ``date`` (UTC) say which
nightly it was: several nightlies on one date are several nights.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import duckdb
import numpy as np
import pyarrow as pa

from tcobench.errors import ConfigError
from tcobench.schemas import PriceTable, RunStatus

from .quantile import quantile
from .query import connect, freeze_views
from .ranktests import SeriesTests, series_tests, u_p_value
from .rows import IDS, NightlyTrendRow, fetch_rows, id_list
from .store import StoreRef

__all__ = ["METRICS", "Better", "Change", "Metric", "Point", "Series", "detect_changes", "history", "mann_whitney_u"]

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
    requests, too many to pass through Python one row at a time."""
    keep = f" AND run_id IN (SELECT unnest({IDS}))" if runs is not None else ""
    keep += " AND date BETWEEN $first AND $last" if dates is not None else ""
    params: dict[str, object] = {"ids": id_list(runs)} if runs is not None else {}
    params.update({"first": dates[0], "last": dates[1]} if dates is not None else {})
    table = con.sql(
        "SELECT run_id, list(decode_tok_s) FILTER (WHERE decode_tok_s IS NOT NULL) AS rate, "
        f"list(ttft_ns / 1e6) FILTER (WHERE ttft_ns IS NOT NULL) AS ttft FROM request_metrics WHERE ok{keep} "
        "GROUP BY run_id",
        params=params or None,
    ).to_arrow_table()
    ids = table.column("run_id").to_pylist()
    pairs: tuple[tuple[Metric, str], ...] = (("decode_tok_s", "rate"), ("ttft_ms", "ttft"))
    columns = {metric: _split(table.column(name)) for metric, name in pairs}
    return {run_id: {metric: arrays[i] for metric, arrays in columns.items()} for i, run_id in enumerate(ids)}


def _split(column: pa.ChunkedArray) -> list[np.ndarray]:
    """A list column as one float array per row (a NULL list: empty)."""
    lists = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if not isinstance(lists, pa.ListArray | pa.LargeListArray):
        lists = lists.cast(pa.list_(pa.float64()))
    values = lists.flatten().to_numpy(zero_copy_only=False).astype(float, copy=False)
    offsets = np.asarray(lists.offsets)  # relative to the flattened values' start
    start = offsets[0]
    valid = lists.is_valid().to_numpy(zero_copy_only=False)
    bounds = offsets - start
    return [values[bounds[i] : bounds[i + 1]] if valid[i] else np.array([]) for i in range(len(lists))]


def _change(metric: Metric, tests: SeriesTests, i: int, rules: _Rules) -> Change | None:
    """Run i's change in one metric (module docstring), from the series' tests (tasks/ranktests.py)."""
    if tests.n1[i] == 0 or tests.priors[i] < rules.min_prior:
        return None
    u, p = float(tests.u[i]), float(tests.p[i])
    effect = 2 * u / (int(tests.n1[i]) * int(tests.n2[i])) - 1
    median, prior_median = float(tests.median[i]), float(tests.prior_median[i])
    change = median / prior_median - 1 if prior_median else 0.0
    sd = float(tests.prior_medians_sd[i])
    noise_sd = None if math.isnan(sd) else sd
    beyond_noise = noise_sd is None or abs(median - float(tests.prior_medians_mean[i])) > rules.noise_k * noise_sd
    flagged = p < rules.alpha and abs(effect) >= rules.min_effect and abs(change) >= rules.min_change and beyond_noise
    better = (change > 0) == (METRICS[metric] == "higher")
    return Change(metric, median, prior_median, change * 100, p, effect, noise_sd, flagged, better)


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
    return quantile(np.array(costs), 0.5) if costs else None


def _series(
    rows: list[NightlyTrendRow],
    samples: dict[str, dict[Metric, np.ndarray]],
    rules: _Rules,
    keep: set[str] | None = None,
) -> Series:
    """The series' points (only those of the runs in ``keep``, when given), each tested against its prior runs."""
    none = np.array([])
    tests = {metric: series_tests([samples.get(r["run_id"], {}).get(metric, none) for r in rows], rules.window)
             for metric in METRICS}  # fmt: skip
    points = []
    for i, row in enumerate(rows):
        if keep is not None and row["run_id"] not in keep:
            continue
        prior_rows = rows[max(0, i - rules.window) : i]
        changes = [found for metric in METRICS if (found := _change(metric, tests[metric], i, rules)) is not None]
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


def detect_changes(
    con: duckdb.DuckDBPyConnection,
    *,
    window: int = 5,
    min_prior: int = 2,
    alpha: float = 0.01,
    min_change: float = 0.05,
    min_effect: float = 0.5,
    noise_k: float = 3.0,
    runs: Sequence[str] | None = None,
) -> list[Series]:
    """Every series of view nightly_trend with its points and their tested changes (module docstring). With
    ``runs``, only those runs' points, in the series they belong to, each tested against the same prior runs as
    over the whole store (a run's summary or a comparison need not test the whole store's history): only the
    rows from ``window`` runs before the first of them to the last of them are read and tested."""
    if window < 1 or min_prior < 1 or min_prior > window:
        raise ConfigError(f"need 1 <= min_prior <= window, got min_prior={min_prior}, window={window}")
    if not 0 < alpha < 1 or min_change < 0 or not 0 <= min_effect <= 1 or noise_k < 0:
        raise ConfigError("need 0 < alpha < 1, min_change >= 0, 0 <= min_effect <= 1 and noise_k >= 0")
    rules = _Rules(window, min_prior, alpha, min_change, min_effect, noise_k)
    order = "ORDER BY host, model_name, workload, concurrency, series, night"
    ok = ", ".join(f"'{s.value}'" for s in (RunStatus.ok, RunStatus.partial))  # interrupted/failed runs are not trends
    sql = f"SELECT * FROM nightly_trend WHERE status IN ({ok})"
    if runs is not None:  # the runs' series, from ``window`` runs before the first of them to the last of them
        sql = (f"WITH t AS (SELECT *, row_number() OVER (PARTITION BY series ORDER BY night) AS _at FROM ({sql})), "
               f"k AS (SELECT series, min(_at) - {window} AS first, max(_at) AS last FROM t "
               f"WHERE run_id IN (SELECT unnest({IDS})) GROUP BY series) SELECT t.* EXCLUDE (_at) FROM t "
               "JOIN k USING (series) WHERE t._at BETWEEN k.first AND k.last")  # fmt: skip
    by_series: dict[str, list[NightlyTrendRow]] = defaultdict(list)
    for row in fetch_rows(con, f"{sql} {order}", NightlyTrendRow, {"ids": id_list(runs)} if runs is not None else None):
        by_series[row["series"]].append(row)
    keep = set(runs) if runs is not None else None
    if keep is None:
        samples = _samples(con)
    else:
        tested = _tested(by_series.values(), keep, window)
        dates = (min(r["date"] for r in tested), max(r["date"] for r in tested)) if tested else None
        samples = _samples(con, [r["run_id"] for r in tested], dates)
    found = (_series(rows, samples, rules, keep) for rows in by_series.values())
    return [series for series in found if series.points]


def _tested(series: Iterable[list[NightlyTrendRow]], keep: set[str], window: int) -> list[NightlyTrendRow]:
    """The runs whose samples testing the ``keep`` runs reads: each of them and up to ``window`` runs before it."""
    needed: dict[str, NightlyTrendRow] = {}
    for rows in series:
        for i, row in enumerate(rows):
            if row["run_id"] in keep:
                needed.update((r["run_id"], r) for r in rows[max(0, i - window) : i + 1])
    return list(needed.values())


def history(store: StoreRef, prices: PriceTable, snapshot: int | None = None, **rules: Any) -> list[Series]:
    """detect_changes over the store (rules: window, min_prior, alpha, min_change, min_effect, noise_k)."""
    con = connect(store, prices, snapshot=snapshot)
    try:
        freeze_views(con)
        return detect_changes(con, **rules)
    finally:
        con.close()
