"""quantile: tcobench's one percentile rule in Python, the same as the SQL views' ``quantile_cont``.

Linear interpolation between the two nearest order statistics (Hyndman & Fan's type 7): with the n values
sorted as x[0] <= ... <= x[n-1], the q-quantile lies at position h = (n - 1) * q and is
x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h]). It is DuckDB's ``quantile_cont`` (every
percentile in tcobench/sql), numpy's default (``np.quantile``/``np.percentile``, method "linear") and
``statistics.median`` at q = 0.5, so a figure computed in Python and one read from a view agree up to
floating-point rounding. docs/formulas.md says why this rule and not nearest rank.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

__all__ = ["interpolate", "quantile", "quantile_positions", "quantile_rows"]


def quantile(values: Iterable[float], q: float) -> float | None:
    """The q-quantile (q in [0, 1]) of ``values`` by linear interpolation; None when there are no values.

    >>> quantile([100, 200, 300], 0.9)  # h = 2 x 0.9 = 1.8: 200 + 0.8 x (300 - 200)
    280.0
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must lie in [0, 1], got {q}")
    if isinstance(values, np.ndarray):  # the two order statistics by selection, not a sort through Python
        flat = values.astype(float, copy=False).ravel()
        if not flat.size:
            return None
        lo, hi, h = _positions(flat.size, q)
        picked = np.partition(flat, (lo, hi) if hi != lo else lo)
        low, high = float(picked[lo]), float(picked[hi])
        return low + (h - lo) * (high - low)
    ordered = sorted(float(v) for v in values)
    if not ordered:
        return None
    lo, hi, h = _positions(len(ordered), q)
    return ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo])


def quantile_rows(matrix: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile of each row of a 2-D array (rows of at least one value), by the same rule as ``quantile``."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must lie in [0, 1], got {q}")
    lo, hi, h = _positions(matrix.shape[1], q)
    picked = np.partition(matrix.astype(float, copy=False), (lo, hi) if hi != lo else lo, axis=1)
    return interpolate(picked[:, lo], picked[:, hi], h, lo)


def quantile_positions(n: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each count in ``n`` (each at least one): the lower position floor(h), the upper one (capped at the
    last) and h itself, where h is q times the count less one: the order statistics ``interpolate`` takes;
    ``quantile``'s rule over many samples at once."""
    h = (n - 1) * q
    lo = np.floor(h).astype(np.int64)
    return lo, np.minimum(lo + 1, n - 1), h


def interpolate(low: np.ndarray, high: np.ndarray, h: np.ndarray | float, lo: np.ndarray | int) -> np.ndarray:
    """Between the order statistics ``low`` (at position ``lo``) and ``high`` at position ``h``: the rule's
    last step, the same arithmetic as ``quantile``'s (to the bit)."""
    result: np.ndarray = low + (h - lo) * (high - low)
    return result


def _positions(n: int, q: float) -> tuple[int, int, float]:
    """(floor h, the next position capped at n - 1, h) for h = (n - 1) q: the order statistics interpolated."""
    h = (n - 1) * q
    lo = math.floor(h)
    return lo, min(lo + 1, n - 1), h
