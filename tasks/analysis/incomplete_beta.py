"""betainc: the regularised incomplete beta function I_x(a, b), with numpy alone.

Formula: I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) x CF(a, b, x) for x < (a + 1) / (a + b + 2), else
1 - I_{1-x}(b, a); B is the beta function and CF the continued fraction of Numerical Recipes' ``betacf``, evaluated
by the modified Lentz method to a relative change under 1e-15 per step. The factor x^a (1 - x)^b / B(a, b) is taken
from ``math.lgamma`` for small a or b, and for large ones from Stirling's series around the mode (``_log_front``),
which keeps its precision where lgamma's large values would cancel. The same values as ``scipy.special.betainc``
to 1e-12 (tests/unit/tasks/analysis/test_incomplete_beta.py), without importing scipy: compare's frontier draws
order statistics with it (tasks/analysis/compare/frontier.py), and importing scipy was most of a small store's
compare (docs/dev/performance.md#scipy-import).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["betainc"]

_EPS = 1e-15
_TINY = 1e-300
_MAX_STEPS = 10_000
_STIRLING_FROM = 15.0  # a and b from which the factor comes from Stirling's series (_log_front)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _stirling_rest(z: float) -> float:
    """lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2): Stirling's series, five terms (z >= _STIRLING_FROM)."""
    z2 = z * z
    return (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - 1 / (1188 * z2)) / z2) / z2) / z2) / z


def _log_front(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """log(x^a (1 - x)^b / B(a, b)) for 0 < x < 1."""
    if min(a, b) < _STIRLING_FROM:
        small: np.ndarray = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * np.log(x) + b * np.log1p(-x)
        return small
    mode = a / (a + b)  # the terms below vanish there, so their rounding does not add up
    constant = 0.5 * math.log(a * b / (a + b)) - _HALF_LOG_2PI
    constant += _stirling_rest(a + b) - _stirling_rest(a) - _stirling_rest(b)
    return a * np.log1p((x - mode) / mode) + b * np.log1p((mode - x) / (1 - mode)) + constant


def _continued_fraction(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """Numerical Recipes' betacf for every x at once (modified Lentz); converges fast for x < (a + 1) / (a + b + 2)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
    h = d.copy()
    for m in range(1, _MAX_STEPS + 1):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < _TINY, _TINY, c)
            step = d * c
            h *= step
        if np.all(np.abs(step - 1.0) < _EPS):
            return h
    raise ArithmeticError(f"betainc({a}, {b}, x): the continued fraction did not converge")


def betainc(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """I_x(a, b) for a, b > 0 and each x in [0, 1] (module docstring); a float array shaped as ``x``."""
    if not (a > 0 and b > 0):
        raise ValueError(f"betainc needs a > 0 and b > 0, got a={a}, b={b}")
    x = np.asarray(x, dtype=float)
    if np.any((x < 0) | (x > 1)):
        raise ValueError("betainc needs every x in [0, 1]")
    result = np.where(x >= 1.0, 1.0, 0.0)
    inner = (x > 0) & (x < 1)
    if not inner.any():
        return result
    xi = x[inner]
    front = np.exp(_log_front(a, b, xi))
    low = xi < (a + 1.0) / (a + b + 2.0)
    value = np.empty_like(xi)
    if low.any():
        value[low] = front[low] * _continued_fraction(a, b, xi[low]) / a
    if (~low).any():
        value[~low] = 1.0 - front[~low] * _continued_fraction(b, a, 1.0 - xi[~low]) / b
    result[inner] = value
    return result
