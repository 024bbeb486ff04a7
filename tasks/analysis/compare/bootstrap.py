"""bootstrap: the confidence interval of a comparison, by resampling nights, runs and requests.

A side's point estimate is night-weighted (SQL macro ``night_weighted_mean``: the mean over nights of each
night's mean over its runs; a night is a nightly batch, runs.batch_id). A bootstrap replicate (fixed seed)
resamples the nights of a side, the runs within each night and the ok requests within each run (view
``request_metrics``); a resampled run's tokens per USD is its measured figure times (sum tokens* / sum e2e*) /
(sum tokens / sum e2e) over the resampled requests (a ratio estimator of its throughput), and the replicate
weighs nights as ``night_weighted_mean`` does. The interval is the percentile interval of the replicates
(tasks/analysis/quantile.py: the views' quantile rule).

Design notes: docs/dev/architecture/analysis.md#tasks-compare-bootstrap.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

import duckdb
import numpy as np

from tcobench.tasks.analysis.quantile import quantile
from tcobench.tasks.store.rows import IDS, id_list

__all__ = [
    "NORMAL_FROM_REQUESTS",
    "Moments",
    "NightDraws",
    "RunSample",
    "TokenCount",
    "bootstrap_bases",
    "bootstrap_efficiency",
    "load_samples",
    "night_draws",
    "percentile_interval",
    "Verdict",
    "verdict",
]

# from this many ok requests a run's request-level resampling uses its normal approximation (module docstring)
NORMAL_FROM_REQUESTS = 100
TokenCount = Literal["output", "total"]  # which tokens a cost counts: output, or prompt + output
NightDraws = dict[str, np.ndarray]  # night -> how many times it is drawn in each replicate (shape: resamples)


class Verdict(StrEnum):
    """Where a claimed ratio lies against the measured interval."""

    inside = "inside"  # consistent with the measurements
    above = "above"  # not supported: the measured advantage is smaller
    below = "below"  # the measured advantage is larger than claimed


def verdict(claim: float, lo: float, hi: float) -> Verdict:
    """Where a claimed ratio lies against the interval [lo, hi]."""
    if claim > hi:
        return Verdict.above
    if claim < lo:
        return Verdict.below
    return Verdict.inside


@dataclass(frozen=True)
class Moments:
    """Sums over a run's ok requests with tokens counted and e2e > 0 (view run_statistics): count, sum t,
    sum t^2, sum e, sum e^2, sum t e, with t the tokens counted and e the end-to-end latency in s."""

    n: int
    t: float
    tt: float
    e: float
    ee: float
    te: float

    @classmethod
    def of(cls, tokens: np.ndarray, e2e_s: np.ndarray) -> Moments:
        return cls(
            len(tokens),
            float(tokens.sum()),
            float(tokens @ tokens),
            float(e2e_s.sum()),
            float(e2e_s @ e2e_s),
            float(tokens @ e2e_s),
        )


_NONE = np.array([])


@dataclass(frozen=True)
class RunSample:
    """One run's inputs to the bootstrap: its night, its tokens per USD and its ok requests: their arrays, or
    (``moments``) only their sums, enough for a run of at least NORMAL_FROM_REQUESTS of them."""

    run_id: str
    night: str
    tokens_per_usd: float
    tokens: np.ndarray = field(default_factory=lambda: _NONE)  # per ok request: tokens counted (output or total)
    e2e_s: np.ndarray = field(default_factory=lambda: _NONE)  # per ok request: end-to-end latency, s
    moments: Moments | None = None  # the requests' sums; None: computed from the arrays

    def sums(self) -> Moments:
        return self.moments if self.moments is not None else Moments.of(self.tokens, self.e2e_s)


def load_samples(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[tuple[str, str, float]],
    tokens: TokenCount,
    dates: tuple[str, str] | None = None,
) -> list[RunSample]:
    """A RunSample per (run_id, night, tokens per USD): the run's sums from view run_statistics, and for a run
    with fewer than NORMAL_FROM_REQUESTS ok requests (drawn one by one) its requests from view request_metrics.
    ``dates``: the runs' first and last date (requests carry their run's date: the store skips other dates' files)."""
    ids = [run_id for run_id, _, _ in runs]
    found = {
        row[0]: Moments(int(row[1] or 0), *(float(v or 0.0) for v in row[2:]))
        for row in con.execute(
            f"SELECT * FROM run_moments($tokens, {IDS})", {"tokens": tokens, "ids": id_list(ids)}
        ).fetchall()
    }
    none = Moments(0, 0.0, 0.0, 0.0, 0.0, 0.0)  # no ok request with tokens counted
    few = [run_id for run_id in ids if 2 <= found.get(run_id, none).n < NORMAL_FROM_REQUESTS]
    arrays = _requests_of(con, few, tokens, dates) if few else {}
    return [
        RunSample(run_id, night, per_usd, *arrays.get(run_id, (_NONE, _NONE)), moments=found.get(run_id, none))
        for run_id, night, per_usd in runs
    ]


def _requests_of(
    con: duckdb.DuckDBPyConnection, ids: list[str], tokens: TokenCount, dates: tuple[str, str] | None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per run: its ok requests' tokens counted and end-to-end latencies (s), in scan order (view request_metrics)."""
    first, last = dates if dates is not None else (None, None)
    table = con.execute(
        f"SELECT * FROM run_requests($tokens, {IDS}, first_date := $first, last_date := $last)",
        {"tokens": tokens, "ids": id_list(ids), "first": first, "last": last},
    ).fetch_arrow_table()
    # the rows grouped by run (code: the run's place in ids) without a pass through Python per row; each run keeps
    # its rows' scan order
    code = table.column("code").to_numpy()
    order = np.argsort(code, kind="stable")
    bounds = np.searchsorted(code[order], np.arange(len(ids) + 1))
    counted, secs = (table.column(name).to_numpy().astype(float)[order] for name in ("tokens", "e2e_s"))
    return {
        run_id: (counted[bounds[i] : bounds[i + 1]], secs[bounds[i] : bounds[i + 1]])
        for i, run_id in enumerate(ids)
        if bounds[i + 1] > bounds[i]
    }


def _run_replicates(
    sample: RunSample, resamples: int, rng: np.random.Generator, normal_from: int = NORMAL_FROM_REQUESTS
) -> np.ndarray:
    """A run's replicates of its tokens per USD, its requests resampled (module docstring): by drawing them for
    fewer than ``normal_from`` ok requests, by the normal approximation of the resampled ratio from that many."""
    return _all_replicates([sample], resamples, rng, normal_from)[0]


def _drawn_replicates(sample: RunSample, m: Moments, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """A run's replicates with its requests drawn one by one (n of them per replicate, with replacement)."""
    if len(sample.tokens) != m.n:
        raise ValueError(f"run {sample.run_id}: {m.n} requests to draw from, {len(sample.tokens)} loaded")
    idx = rng.integers(0, m.n, size=(resamples, m.n))
    drawn = sample.tokens[idx].sum(axis=1) / sample.e2e_s[idx].sum(axis=1)
    result: np.ndarray = sample.tokens_per_usd * drawn / (m.t / m.e)
    return result


def _all_replicates(
    samples: Sequence[RunSample], resamples: int, rng: np.random.Generator, normal_from: int = NORMAL_FROM_REQUESTS
) -> list[np.ndarray]:
    """``_run_replicates`` of each sample in turn, from one stream: a run of fewer than 2 requests is its figure
    (no random numbers), one of fewer than ``normal_from`` draws its requests, and the normal approximation is
    drawn for a stretch of runs at once (``standard_normal`` of k x resamples is k successive draws of resamples:
    a year's report has 29,000 runs' replicates; tests/unit/tasks/analysis/test_compare.py checks a stretch against its
    runs one by one, to the bit)."""
    sums = [s.sums() for s in samples]
    n = np.array([m.n for m in sums], dtype=np.int64)
    t, tt, e, ee, te = (np.array([getattr(m, f) for m in sums], dtype=float) for f in ("t", "tt", "e", "ee", "te"))
    per_usd = np.array([s.tokens_per_usd for s in samples], dtype=float)
    constant = (n < 2) | (e <= 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(constant, 1.0, t / np.where(e > 0, e, 1.0))
        # rate* / rate - 1 ~ mean(t* - rate e*) / (rate mean(e)); the mean of n draws of the residual
        # t - rate e (whose mean is 0) has variance mean((t - rate e)^2) / n, from the sums (module docstring)
        square = np.maximum((tt - 2 * rate * te + rate * rate * ee) / np.maximum(n, 1), 0.0)
        sd = np.sqrt(square / np.maximum(n, 1)) / (rate * e / np.maximum(n, 1))
    normal = ~constant & (n >= normal_from) & (rate > 0)
    found: list[np.ndarray] = []
    i = 0
    while i < len(samples):
        if not (constant[i] or normal[i]):  # drawn request by request
            found.append(_drawn_replicates(samples[i], sums[i], resamples, rng))
            i += 1
            continue
        j = i
        while j < len(samples) and (constant[j] or normal[j]):
            j += 1
        block = np.flatnonzero(normal[i:j]) + i
        z = rng.standard_normal((len(block), resamples)) if len(block) else np.empty((0, resamples))
        z *= sd[block, None]  # per_usd * (1 + sd z), in place: a copy is runs x resamples floats
        z += 1.0
        z *= per_usd[block, None]
        drawn = dict(zip(block.tolist(), z, strict=True))
        found += [drawn[k] if k in drawn else np.full(resamples, samples[k].tokens_per_usd) for k in range(i, j)]
        i = j
    return found


def night_draws(nights: Iterable[str], resamples: int, rng: np.random.Generator) -> NightDraws:
    """Nights resampled with replacement: per night, how many times each replicate draws it (the counts of one
    replicate add up to the number of nights). One draw per side serves all its concurrency levels."""
    ordered = sorted(set(nights))
    n = len(ordered)
    slot = rng.integers(0, n, size=(n, resamples))  # slot[j, r]: the j-th night drawn in replicate r
    slot *= resamples
    slot += np.arange(resamples)  # one bin per (night, replicate), in place: a side can have 1,000 nights
    # whole counts (int64): a count times a float replicate is the same float as with a float count, without a
    # 17 MB float copy per side of 1,000 nights
    counts = np.bincount(slot.ravel(), minlength=n * resamples).reshape(n, resamples)
    return {night: counts[i] for i, night in enumerate(ordered)}


def bootstrap_efficiency(
    samples: Sequence[RunSample], resamples: int, rng: np.random.Generator, draws: NightDraws | None = None
) -> np.ndarray:
    """``resamples`` bootstrap replicates of the night-weighted tokens per USD: nights (``draws``; drawn here from
    these samples' nights when None), runs within nights and requests within runs are resampled; each replicate
    is the mean over its drawn nights of each night's mean. A replicate that draws none of these samples' nights
    (possible only when ``draws`` covers nights without them) is NaN."""
    (replicates,) = bootstrap_bases([samples], resamples, rng, draws)
    return replicates


def bootstrap_bases(
    bases: Sequence[Sequence[RunSample]],
    resamples: int,
    rng: np.random.Generator,
    draws: NightDraws | None = None,
) -> list[np.ndarray]:
    """``bootstrap_efficiency`` of the same runs priced on several cost bases (one sequence of samples per basis,
    the same runs and requests, each with its basis' tokens per USD), from one resampling: the same nights, runs
    and requests are drawn for every basis, and each basis' replicate weighs them by its own runs' tokens per
    USD. The bases' intervals then differ by their prices alone, not by the chance of separate draws, and the
    random numbers are drawn once, not once per basis (the report's cost figure prices each platform on 4 bases).
    The stream is used as for one basis, so each basis' replicates are those ``bootstrap_efficiency`` gives its
    samples alone from the same generator state (tests/unit/tasks/analysis/test_compare.py)."""
    ordered = [sorted(samples, key=lambda s: (s.night, s.run_id)) for samples in bases]
    runs = [(s.night, s.run_id) for s in ordered[0]]
    for samples in ordered[1:]:
        if [(s.night, s.run_id) for s in samples] != runs:
            raise ValueError("bootstrap_bases: the cost bases price different runs")
    per_usd = np.array([[s.tokens_per_usd for s in samples] for samples in ordered], dtype=float)  # bases x runs
    # each run's replicates relative to its figure: (1 + sd z), drawn / rate, or 1 (_all_replicates at 1 per USD)
    unit = [RunSample(s.run_id, s.night, 1.0, s.tokens, s.e2e_s, s.moments) for s in ordered[0]]  # not replace: slow
    relative = _all_replicates(unit, resamples, rng)
    nights: dict[str, list[int]] = defaultdict(list)
    for i, (night, _) in enumerate(runs):
        nights[night].append(i)
    if draws is None:
        draws = night_draws(nights, resamples, rng)
    cols = np.arange(resamples)
    total, weight = np.zeros((len(ordered), resamples)), np.zeros(resamples)
    for night, members in nights.items():
        count = draws[night]
        if len(members) == 1:  # drawing 1 run of 1: numpy's integers(0, 1) takes no random numbers, so skipping it
            (i,) = members  # leaves the stream, and every replicate, as it was
            total += count * (relative[i] * per_usd[:, i, None])
        else:
            matrix = np.vstack([relative[i] for i in members])  # runs x resamples
            pick = rng.integers(0, len(members), size=(len(members), resamples))
            scale = per_usd[:, members][:, pick]  # bases x runs x resamples: the drawn runs' tokens per USD
            total += count * (matrix[pick, cols] * scale).mean(axis=1)
        weight += count
    with np.errstate(invalid="ignore", divide="ignore"):
        result: np.ndarray = np.where(weight > 0, total / np.where(weight > 0, weight, 1), np.nan)
    return list(result)


def percentile_interval(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval: the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of the finite
    replicates (NaN replicates, which drew none of a level's nights, are left out)."""
    finite = replicates[np.isfinite(replicates)]
    lo, hi = quantile(finite, (1 - confidence) / 2), quantile(finite, (1 + confidence) / 2)
    if lo is None or hi is None:
        raise ValueError("a percentile interval needs at least one replicate")
    return lo, hi
