"""betainc: scipy.special.betainc's values without scipy (compare's frontier draws order statistics with it)."""

from __future__ import annotations

import numpy as np
import pytest

from tcobench.tasks.analysis.incomplete_beta import betainc


@pytest.mark.parametrize("n", [2, 3, 5, 20, 99, 100, 272, 1000, 5000])
@pytest.mark.parametrize("q", [0.01, 0.1, 0.5, 0.9, 0.99])
def test_the_order_statistic_cdf_is_scipys(n: int, q: float) -> None:
    """The frontier's use: I_x(h + 1, n - h) at x = 1/n ... 1, h = (n - 1) q."""
    from scipy.special import betainc as scipy_betainc

    h = (n - 1) * q
    x = np.arange(1, n + 1) / n
    assert np.allclose(betainc(h + 1, n - h, x), scipy_betainc(h + 1, n - h, x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("a", "b"), [(0.5, 0.5), (1.0, 1.0), (2.0, 5.0), (0.1, 3.0), (30.0, 0.2), (1e3, 1e3)])
def test_any_shape_on_a_grid_is_scipys_and_the_ends_are_exact(a: float, b: float) -> None:
    from scipy.special import betainc as scipy_betainc

    x = np.linspace(0.0, 1.0, 1001)
    got = betainc(a, b, x)
    assert np.allclose(got, scipy_betainc(a, b, x), rtol=1e-12, atol=1e-12)
    assert got[0] == 0.0 and got[-1] == 1.0
    assert np.all(np.diff(got) >= -1e-15)  # a cdf: never decreasing


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="a > 0"):
        betainc(0.0, 1.0, np.array([0.5]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        betainc(1.0, 1.0, np.array([1.5]))
