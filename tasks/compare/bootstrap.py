"""bootstrap: the confidence interval of a comparison, by resampling nights, runs and requests.

A side's point estimate is night-weighted (SQL macro ``night_weighted_mean``: the mean over nights of each
night's mean over its runs). A bootstrap replicate (fixed seed) resamples the nights of a side, the runs within
each night and the ok requests within each run (view ``request_metrics``); a resampled run's tokens per USD is
its measured figure times (sum tokens* / sum e2e*) / (sum tokens / sum e2e) over the resampled requests (a ratio
estimator of its throughput), and the replicate weighs nights as ``night_weighted_mean`` does. The interval is
the percentile interval of the replicates (tasks/quantile.py: the views' quantile rule).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import duckdb
import numpy as np

from ..quantile import quantile

__all__ = ["TokenCount", "RunSample", "bootstrap_efficiency", "load_samples", "percentile_interval"]

TokenCount = Literal["output", "total"]  # which tokens a cost counts: output, or prompt + output


@dataclass(frozen=True)
class RunSample:
    """One run's inputs to the bootstrap: its night, its tokens per USD and its ok requests."""

    run_id: str
    night: str
    tokens_per_usd: float
    tokens: np.ndarray  # per ok request: tokens counted (request_metrics.output_tokens or total_tokens)
    e2e_s: np.ndarray  # per ok request: end-to-end latency, s


def load_samples(
    con: duckdb.DuckDBPyConnection, runs: Sequence[tuple[str, str, float]], tokens: TokenCount
) -> list[RunSample]:
    """A RunSample per (run_id, night, tokens per USD), with the run's ok requests from view request_metrics."""
    query = (
        f"SELECT run_id, {tokens}_tokens AS tokens, e2e_ns / 1e9 AS e2e_s FROM request_metrics "
        f"WHERE ok AND {tokens}_tokens IS NOT NULL AND e2e_ns > 0 AND list_contains($ids, run_id)"
    )
    found: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for run_id, n, secs in con.execute(query, {"ids": [run_id for run_id, _, _ in runs]}).fetchall():
        found[run_id][0].append(float(n))
        found[run_id][1].append(float(secs))
    return [
        RunSample(run_id, night, per_usd, np.array(found[run_id][0]), np.array(found[run_id][1]))
        for run_id, night, per_usd in runs
    ]


def _run_replicates(sample: RunSample, resamples: int, rng: np.random.Generator) -> np.ndarray:
    n = len(sample.tokens)
    if n < 2 or sample.e2e_s.sum() <= 0:
        return np.full(resamples, sample.tokens_per_usd)
    idx = rng.integers(0, n, size=(resamples, n))
    rate = sample.tokens[idx].sum(axis=1) / sample.e2e_s[idx].sum(axis=1)
    result: np.ndarray = sample.tokens_per_usd * rate / (sample.tokens.sum() / sample.e2e_s.sum())
    return result


def bootstrap_efficiency(samples: Sequence[RunSample], resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``resamples`` bootstrap replicates of the night-weighted tokens per USD: nights, runs within nights and
    requests within runs are resampled; each replicate is the mean over its nights of each night's mean."""
    ordered = sorted(samples, key=lambda s: (s.night, s.run_id))
    nights: dict[str, list[np.ndarray]] = defaultdict(list)
    for s in ordered:
        nights[s.night].append(_run_replicates(s, resamples, rng))
    cols = np.arange(resamples)
    night_values = []
    for reps in nights.values():
        matrix = np.vstack(reps)  # runs x resamples
        pick = rng.integers(0, len(reps), size=(len(reps), resamples))
        night_values.append(matrix[pick, cols].mean(axis=0))
    per_night = np.vstack(night_values)  # nights x resamples
    pick = rng.integers(0, len(night_values), size=(len(night_values), resamples))
    result: np.ndarray = per_night[pick, cols].mean(axis=0)
    return result


def percentile_interval(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval: the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of the replicates."""
    lo, hi = quantile(replicates, (1 - confidence) / 2), quantile(replicates, (1 + confidence) / 2)
    if lo is None or hi is None:
        raise ValueError("a percentile interval needs at least one replicate")
    return lo, hi
