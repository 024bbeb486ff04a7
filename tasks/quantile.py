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

__all__ = ["quantile"]


def quantile(values: Iterable[float], q: float) -> float | None:
    """The q-quantile (q in [0, 1]) of ``values`` by linear interpolation; None when there are no values.

    >>> quantile([100, 200, 300], 0.9)  # h = 2 x 0.9 = 1.8: 200 + 0.8 x (300 - 200)
    280.0
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must lie in [0, 1], got {q}")
    ordered = sorted(float(v) for v in values)
    if not ordered:
        return None
    h = (len(ordered) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo])
