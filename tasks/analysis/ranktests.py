"""ranktests: each run of a series tested against the runs before it, all runs at once (history's statistics).

For run i of a series, with its samples x (n1 values) and the pooled samples y of the up to ``window`` runs
before it (n2 values; runs without samples add none):

Design notes: docs/dev/architecture/analysis.md#tasks-ranktests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tcobench.tasks.analysis.quantile import interpolate, quantile_positions

__all__ = ["SeriesTests", "series_tests", "u_p_value"]


@dataclass(frozen=True)
class SeriesTests:
    """Per run of the series (arrays of its length); NaN where a figure does not exist (no samples, no prior)."""

    n1: np.ndarray  # the run's samples
    n2: np.ndarray  # the prior runs' pooled samples
    priors: np.ndarray  # prior runs with samples
    u: np.ndarray
    p: np.ndarray
    median: np.ndarray
    prior_median: np.ndarray
    prior_medians_mean: np.ndarray
    prior_medians_sd: np.ndarray  # NaN with fewer than 2 prior runs


def series_tests(values: list[np.ndarray], window: int) -> SeriesTests:
    """Every run's tests against its up to ``window`` previous runs (module docstring); ``values``: per run, oldest
    first, its samples (an empty array when it has none)."""
    runs = len(values)
    sizes = np.array([len(v) for v in values], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(sizes)])
    flat = np.concatenate([np.asarray(v, dtype=float) for v in values]) if runs else np.array([])
    distinct, code = np.unique(flat, return_inverse=True)
    width = max(len(distinct), 1)
    owner = np.repeat(np.arange(runs, dtype=np.int64), sizes)
    keys = np.sort(owner * width + code)  # run blocks, each sorted by value
    ranks = keys - owner * width  # the sorted dense ranks, block by block
    ordered = distinct[ranks] if len(ranks) else np.array([])

    median = _block_quantile(ordered, start[:-1], sizes)
    # each position of ``keys`` that starts a run of equal keys holds that run's length (a search for the leftmost
    # equal key lands there): how many of a block's values equal a rank, without a second binary search
    first_of = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]])) if len(keys) else np.zeros(0, int)
    equal_run = np.diff(np.append(first_of, len(keys)))
    run_length = np.zeros(len(keys) + 1, dtype=np.int64)
    run_length[first_of] = equal_run
    n2 = np.zeros(runs, dtype=np.int64)
    priors = np.zeros(runs, dtype=np.int64)
    u = np.zeros(runs)
    medians = [np.full(runs, np.nan) for _ in range(window)]
    for k in range(1, window + 1):
        if k >= runs:
            break
        now, before = np.arange(k, runs), np.arange(runs - k)
        n2[now] += sizes[before]
        priors[now] += sizes[before] > 0
        medians[k - 1][now] = median[before]
        # U(x_i, y_{i-k}): each element of run i (i >= k) searched in run i-k's block
        elements = np.arange(start[k], start[-1])
        mine = owner[elements]
        target = (mine - k) * width + ranks[elements]
        below = np.searchsorted(keys, target, "left")
        found = keys[np.minimum(below, len(keys) - 1)] == target
        equal = np.where(found, run_length[below], 0)
        count = below - start[mine - k] + 0.5 * equal
        u += np.bincount(mine, weights=count, minlength=runs)
    stacked = np.vstack(medians) if window else np.empty((0, runs))
    with np.errstate(invalid="ignore", divide="ignore"):
        sum_m = np.nansum(stacked, axis=0)
        mean = np.where(priors > 0, sum_m / np.maximum(priors, 1), np.nan)
        sum_m2 = np.nansum((stacked - mean) ** 2, axis=0)
        sd = np.where(priors >= 2, np.sqrt(sum_m2 / np.maximum(priors - 1, 1)), np.nan)
    prior_median = _pooled_median(keys, start, width, n2, window, distinct)
    ties = _ties(code, keys[first_of], equal_run, width, runs, window)
    p = _p_values(u, sizes, n2, ties)
    return SeriesTests(sizes, n2, priors, u, p, median, prior_median, mean, sd)


def _block_quantile(ordered: np.ndarray, first: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The median of each block of sorted values."""
    found = np.full(len(sizes), np.nan)
    has = sizes > 0
    lo, hi, h = quantile_positions(sizes[has], 0.5)
    found[has] = interpolate(ordered[first[has] + lo], ordered[first[has] + hi], h, lo)
    return found


def _pooled_median(
    keys: np.ndarray, start: np.ndarray, width: int, n2: np.ndarray, window: int, distinct: np.ndarray
) -> np.ndarray:
    """Per run, the median of its prior runs' pooled values: the two middle order statistics, each found by a
    binary search over ranks (how many pooled values have a rank <= r, summed over the prior runs' blocks)."""
    runs = len(n2)
    found = np.full(runs, np.nan)
    has = np.flatnonzero(n2 > 0)
    if not len(has):
        return found
    lo, hi, h = quantile_positions(n2[has], 0.5)

    def order_statistic(position: np.ndarray) -> np.ndarray:
        """The rank of the position-th (0-based) smallest pooled value of each run in ``has``."""
        low, high = np.zeros(len(has), dtype=np.int64), np.full(len(has), width - 1, dtype=np.int64)
        while (low < high).any():
            mid = (low + high) // 2
            count = np.zeros(len(has), dtype=np.int64)
            for k in range(1, window + 1):
                run = has - k
                ok = run >= 0
                at = np.searchsorted(keys, run[ok] * width + mid[ok], "right") - start[run[ok]]
                count[ok] += at
            enough = count >= position + 1
            high = np.where(enough, mid, high)
            low = np.where(enough, low, mid + 1)
        return low

    found[has] = interpolate(distinct[order_statistic(lo)], distinct[order_statistic(hi)], h, lo)
    return found


def _ties(code: np.ndarray, pair: np.ndarray, count: np.ndarray, width: int, runs: int, window: int) -> np.ndarray:
    """Per run, sum of t^3 - t over the distinct values of its pooled sample (itself and its prior runs): the
    counts of each (run, value) (``pair``: run x width + value, each once, in order; ``count``: how often) are
    added over every window the run is in, then grouped by (run, value)."""
    ties = np.zeros(runs)
    repeated = np.bincount(code, minlength=width) > 1 if len(code) else np.zeros(0, dtype=bool)
    if not repeated.any():
        return ties  # no value occurs twice in the whole series
    run, value = pair // width, pair % width
    keep = repeated[value]  # a value seen once in the series is once in every pooled sample: t^3 - t = 0
    run, value, count = run[keep], value[keep], count[keep]
    shifts = np.arange(window + 1)  # the run itself, then as a prior of the next ``window`` runs
    point = (run[None, :] + shifts[:, None]).ravel()
    inside = point < runs
    # grouped by (run, value): a stable sort of the shifted copies (each already in order, so the sort merges them)
    # and one sum per group, not np.unique's inverse (slower on a year's series: docs/dev/performance.md#tie-groups)
    pooled = point[inside] * width + np.tile(value, window + 1)[inside]
    order = np.argsort(pooled, kind="stable")
    pooled, weight = pooled[order], np.tile(count, window + 1)[inside][order].astype(float)
    if not len(pooled):
        return ties
    starts = np.concatenate([[0], np.flatnonzero(np.diff(pooled)) + 1])
    t = np.add.reduceat(weight, starts)
    ties += np.bincount(pooled[starts] // width, weights=t**3 - t, minlength=runs)
    return ties


def u_p_value(u: float, n1: int, n2: int, ties: float) -> float:
    """Two-sided p of U (n1, n2 samples; ``ties``: sum of t^3 - t over the pooled sample's distinct values) by the
    normal approximation with tie and continuity corrections; used by ``history.mann_whitney_u`` too."""
    n = n1 + n2
    sigma = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))) if n > 1 else 0.0
    if sigma == 0:
        return 1.0
    z = (max(u, n1 * n2 - u) - n1 * n2 / 2.0 - 0.5) / sigma
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def _p_values(u: np.ndarray, n1: np.ndarray, n2: np.ndarray, ties: np.ndarray) -> np.ndarray:
    """Two-sided p of each U (``u_p_value``); NaN where a sample is empty."""
    p = np.full(len(u), np.nan)
    for i in np.flatnonzero((n1 > 0) & (n2 > 0)):
        p[i] = u_p_value(float(u[i]), int(n1[i]), int(n2[i]), float(ties[i]))
    return p
