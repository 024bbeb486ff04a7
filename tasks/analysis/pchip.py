"""pchip: scipy's PchipInterpolator, evaluated with numpy alone, to the bit.

The same arithmetic in the same order as scipy.interpolate (``PchipInterpolator._find_derivatives`` and
``_edge_case`` for the slopes, ``CubicHermiteSpline`` for the power-basis coefficients, ``PPoly`` for the value:
c3 + c2 s + c1 s^2 + c0 s^3 with s the distance from the segment's start, segments half-open but the last), so the
values are scipy's exactly (tests/unit/tasks/analysis/test_pchip.py), and results that depend on them stay as they
were printed (tests/unit/tasks/analysis/test_frontier_replicates.py). Importing scipy.interpolate was most of a small
store's compare (docs/dev/performance.md#scipy-import); compare's frontier needs this one curve only.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pchip"]


def _edge_case(h0: np.ndarray, h1: np.ndarray, m0: np.ndarray, m1: np.ndarray) -> np.ndarray:
    """The end slope: the one-sided three-point estimate, kept shape-preserving (scipy's ``_edge_case``)."""
    d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    mask = np.sign(d) != np.sign(m0)
    mask2 = (np.sign(m0) != np.sign(m1)) & (np.abs(d) > 3.0 * np.abs(m0))
    return np.where(mask, 0.0, np.where(mask2, 3.0 * m0, d))


def _slopes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The slope at each point (scipy's ``_find_derivatives``): x (m,), y (m, columns)."""
    hk = (x[1:] - x[:-1])[:, None]
    mk = (y[1:] - y[:-1]) / hk
    if len(x) == 2:  # two points: the line
        return np.vstack([mk, mk])
    smk = np.sign(mk)
    condition = (smk[1:] != smk[:-1]) | (mk[1:] == 0) | (mk[:-1] == 0)
    w1 = 2 * hk[1:] + hk[:-1]
    w2 = hk[1:] + 2 * hk[:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        whmean = (w1 / mk[:-1] + w2 / mk[1:]) / (w1 + w2)
        inner = np.where(condition, 0.0, 1.0 / whmean)
    first = _edge_case(hk[0], hk[1], mk[0], mk[1])
    last = _edge_case(hk[-1], hk[-2], mk[-1], mk[-2])
    return np.vstack([first[None, :], inner, last[None, :]])


def pchip(x: np.ndarray, y: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """PCHIP through (x, y) at ``targets``: x (m >= 2, strictly ascending), y (m, columns) -> (targets, columns);
    NaN outside [x first, x last] (never extrapolated), the ends' values exactly at the ends."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    targets = np.asarray(targets, dtype=float)
    dydx = _slopes(x, y)
    dx = np.diff(x)[:, None]
    slope = np.diff(y, axis=0) / dx
    t = (dydx[:-1] + dydx[1:] - 2 * slope) / dx
    c0, c1, c2, c3 = t / dx, (slope - dydx[:-1]) / dx - t, dydx[:-1], y[:-1]
    inside = (targets >= x[0]) & (targets <= x[-1])
    at = np.clip(targets, x[0], x[-1])
    idx = np.clip(np.searchsorted(x, at, side="right") - 1, 0, len(x) - 2)  # [x_k, x_k+1), the last closed
    s = (at - x[idx])[:, None]
    s2 = s * s
    value = c3[idx] + c2[idx] * s
    value = value + c1[idx] * s2
    value = value + c0[idx] * (s2 * s)
    result: np.ndarray = np.where(inside[:, None], value, np.nan)
    return result
