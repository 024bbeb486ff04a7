"""pchip: scipy's PchipInterpolator (extrapolate=False), to the bit, without importing scipy."""

from __future__ import annotations

import numpy as np
import pytest

from tcobench.tasks.analysis.pchip import pchip


@pytest.mark.parametrize("points", [2, 3, 4, 5, 9])
def test_the_values_are_scipys_to_the_bit(points: int) -> None:
    from scipy.interpolate import PchipInterpolator

    rng = np.random.default_rng(points)
    for curve in range(60):
        x = np.sort(rng.uniform(10, 100, points))
        y = rng.uniform(0, 1000, (points, 2))
        if curve % 5 == 0:
            y[1] = y[0]  # a flat stretch: slope 0 at the shared point
        if curve % 7 == 0:
            y[:, 1] = np.sort(y[:, 1])  # one column monotone, the other not
        targets = np.concatenate([np.linspace(5, 105, 97), x])  # the points themselves, and both ends
        inside = (targets >= x[0]) & (targets <= x[-1])
        want = PchipInterpolator(x, y, extrapolate=False)(np.clip(targets, x[0], x[-1]))
        got = pchip(x, y, targets)
        assert np.array_equal(got[inside], want[inside])
        assert np.isnan(got[~inside]).all()


def test_at_the_points_the_curve_passes_through_them() -> None:
    x = np.array([1.0, 2.0, 4.0, 8.0])
    y = np.array([[1.0, 5.0], [3.0, 4.0], [4.0, 4.0], [9.0, 1.0]])
    assert np.array_equal(pchip(x, y, x), y)
