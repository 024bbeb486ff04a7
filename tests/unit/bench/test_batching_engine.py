"""bench/batching_engine.py: compare at equal interactivity against the simulated engine's closed-form frontier.

ITL = a + b x streams gives a frontier that is a straight line in (tok/s/user, tok/s/GPU), which a monotone cubic
through points on it reproduces: without noise, compare's throughput and ratio equal the closed form up to floating
point rounding (relative 1e-9 allows about 1e7 ulps of the few operations involved). With noise, the closed form
must lie inside the 95% interval in most repetitions: the calibration, here small (bench/frontier_calibration.py
runs the full one).
"""

from __future__ import annotations

import numpy as np
import pytest
from batching_engine import BatchingEngine, sweep

from tcobench.tasks.analysis.compare import compare_frontiers

A = BatchingEngine(a_ms=8.0, b_ms=0.5, usd_per_gpu_hour=3.0)
B = BatchingEngine(a_ms=5.0, b_ms=1.2, usd_per_gpu_hour=2.0)
LEVELS = (1, 4, 16, 64)  # the calibration's sweep: fewer levels, a cheaper test


def test_noise_free_ratio_and_throughput_are_the_closed_form() -> None:
    rng = np.random.default_rng(0)
    found = compare_frontiers(
        sweep(A, rng, name="a"), sweep(B, rng, name="b"), "A", "B", [30.0, 50.0, 100.0], resamples=100
    )
    for row in found.targets:
        assert row.ratio is not None and row.a_tok_s_per_gpu is not None and row.b_usd_per_m is not None
        assert row.a_tok_s_per_gpu == pytest.approx(A.tok_s_per_gpu_at(row.target), rel=1e-9)
        assert row.b_usd_per_m == pytest.approx(B.usd_per_m_at(row.target), rel=1e-9)
        assert row.ratio == pytest.approx(A.tokens_per_usd_at(row.target) / B.tokens_per_usd_at(row.target), rel=1e-9)
    # the curves cross where (1000 - a_A x) / b_A / k_A = (1000 - a_B x) / b_B / k_B
    ka, kb = A.usd_per_gpu_s, B.usd_per_gpu_s
    cross = (1 / (A.b_ms * ka) - 1 / (B.b_ms * kb)) * 1000 / (A.a_ms / (A.b_ms * ka) - B.a_ms / (B.b_ms * kb))
    assert found.crossover is not None and found.crossover.at == pytest.approx(cross, rel=1e-3)  # on a 200-point grid
    assert found.crossover.a_cheaper[0][0] < cross < found.crossover.b_cheaper[0][1]


def test_targets_outside_the_simulated_range_are_refused() -> None:
    rng = np.random.default_rng(0)
    top = A.interactivity(1)
    found = compare_frontiers(
        sweep(A, rng, name="a"), sweep(B, rng, name="b"), "A", "B", [top + 1.0, 10.0], resamples=100
    )
    assert all(row.ratio is None and "tcobench does not extrapolate" in str(row.reason) for row in found.targets)
    assert f"outside A's measured range {A.interactivity(64):.1f}-{top:.1f} tok/s/user" in str(found.targets[0].reason)


def test_the_interval_covers_the_closed_form_in_most_noisy_repetitions() -> None:
    """A small calibration that can fail: 20 repetitions at 95%; fewer than 16 covered fails (for a calibrated interval
    the chance of that is under 0.3%: binomial(20, 0.95)). Its duration: docs/dev/performance.md#test-calibration."""
    rng = np.random.default_rng(11)
    target = 60.0
    truth = A.tokens_per_usd_at(target) / B.tokens_per_usd_at(target)
    covered = 0
    for _ in range(20):
        a = sweep(A, rng, LEVELS, nights=4, requests=30, request_noise=0.1, night_noise=0.03, name="a")
        b = sweep(B, rng, LEVELS, nights=4, requests=30, request_noise=0.1, night_noise=0.03, name="b")
        (row,) = compare_frontiers(a, b, "A", "B", [target], resamples=200, seed=int(rng.integers(1 << 30))).targets
        assert row.ci_low is not None and row.ci_high is not None
        covered += row.ci_low <= truth <= row.ci_high
    assert covered >= 16, covered
