"""ranktests: every run of a series at once, against the definitions run by run (history.mann_whitney_u and
tasks/analysis/quantile.py) on random series with ties, empty runs and short histories."""

from __future__ import annotations

import numpy as np
import pytest

from tcobench.tasks.analysis.history import mann_whitney_u
from tcobench.tasks.analysis.quantile import quantile
from tcobench.tasks.analysis.ranktests import series_tests


def _by_hand(values: list[np.ndarray], i: int, window: int) -> dict[str, float]:
    """Run i's figures computed from the definitions (what history did per point before ranktests)."""
    prior = [v for v in values[max(0, i - window) : i] if len(v)]
    now = values[i]

    def median(v: np.ndarray) -> float:
        found = quantile(v, 0.5)
        assert found is not None
        return found

    out: dict[str, float] = {"n2": float(sum(len(v) for v in prior)), "priors": float(len(prior))}
    out["median"] = median(now) if len(now) else np.nan
    if prior:
        pooled = np.concatenate(prior)
        out["prior_median"] = median(pooled)
        medians = [median(v) for v in prior]
        out["mean"] = float(np.mean(medians))
        out["sd"] = float(np.std(medians, ddof=1)) if len(medians) >= 2 else np.nan
        if len(now):
            out["u"], out["p"] = mann_whitney_u(now, pooled)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_every_run_matches_the_definitions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    runs, window = int(rng.integers(1, 30)), int(rng.integers(1, 7))
    values = []
    for _ in range(runs):
        n = int(rng.choice([0, 1, 2, 5, 40, 120]))
        shift = float(rng.choice([0.0, 0.0, 0.0, 3.0]))  # some runs shifted: small p-values too
        sample = rng.normal(100.0 + shift, 2.0, n)
        values.append(np.round(sample, int(rng.choice([0, 1, 6]))))  # rounding makes ties within and across runs
    got = series_tests(values, window)
    for i in range(runs):
        want = _by_hand(values, i, window)
        assert got.n1[i] == len(values[i]) and got.n2[i] == want["n2"] and got.priors[i] == want["priors"]
        for name, array in (
            ("median", got.median),
            ("prior_median", got.prior_median),
            ("mean", got.prior_medians_mean),
            ("sd", got.prior_medians_sd),
        ):
            expected = want.get(name, np.nan)
            assert (np.isnan(array[i]) and np.isnan(expected)) or array[i] == pytest.approx(expected, rel=1e-12), name
        if "u" in want:
            assert got.u[i] == want["u"]  # half-integers: exact
            assert got.p[i] == pytest.approx(want["p"], rel=1e-9, abs=1e-300)
        else:
            assert np.isnan(got.p[i])


def test_medians_are_exactly_the_quantile_rule() -> None:
    values = [np.array([3.0, 1.0, 2.0, 10.0]), np.array([5.0]), np.array([]), np.array([7.0, 7.0, 1.0])]
    got = series_tests(values, 2)
    assert got.median[0] == quantile(values[0], 0.5) == 2.5
    assert np.isnan(got.median[2])
    assert got.prior_median[3] == quantile(np.concatenate(values[1:3]), 0.5) == 5.0  # run 2 has no samples
    assert got.prior_median[1] == 2.5 and np.isnan(got.prior_median[0])


def test_no_runs_and_ties_only() -> None:
    empty = series_tests([], 5)
    assert len(empty.u) == 0
    same = series_tests([np.full(10, 4.0), np.full(10, 4.0)], 1)
    assert same.u[1] == 50.0 and same.p[1] == 1.0  # every pair tied: no evidence of a change
