"""The one percentile rule: hand-worked values, and the same numbers as DuckDB's quantile_cont and numpy."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from tcobench.tasks.analysis.quantile import quantile

# 10, 20, 30, 40, 50: position h = (5 - 1) x q
#   q 0.5  -> h 2.0  -> 30
#   q 0.9  -> h 3.6  -> 40 + 0.6 x 10 = 46
#   q 0.99 -> h 3.96 -> 40 + 0.96 x 10 = 49.6
#   q 0.25 -> h 1.0  -> 20;  q 0 -> 10;  q 1 -> 50
# Nearest rank (the old rule of bench/_common.py) would say 50 at q 0.9: the rules differ on small samples.
GAPS = [50.0, 10.0, 40.0, 20.0, 30.0]  # unsorted on purpose
HAND = {0.0: 10.0, 0.25: 20.0, 0.5: 30.0, 0.9: 46.0, 0.99: 49.6, 1.0: 50.0}


@pytest.mark.parametrize(("q", "expected"), HAND.items())
def test_hand_worked(q: float, expected: float) -> None:
    assert quantile(GAPS, q) == pytest.approx(expected)


def test_two_values_and_one_value() -> None:
    assert quantile([100, 200], 0.5) == 150.0  # the mean of the middle pair, as a median is
    assert quantile([7], 0.99) == 7.0
    assert quantile([], 0.5) is None


def test_q_outside_0_1_is_refused() -> None:
    with pytest.raises(ValueError, match=r"q must lie in \[0, 1\], got 1.5"):
        quantile(GAPS, 1.5)


def test_same_as_duckdb_quantile_cont_and_numpy_default() -> None:
    values = np.random.default_rng(3).lognormal(3.0, 1.0, 37).tolist()
    qs = [0.01, 0.1, 0.5, 0.9, 0.95, 0.99]
    con = duckdb.connect()
    try:
        (sql,) = con.execute("SELECT quantile_cont(v, $q) FROM unnest($v) AS t(v)", {"v": values, "q": qs}).fetchone()  # type: ignore[misc]
    finally:
        con.close()
    ours = [quantile(values, q) for q in qs]
    assert ours == pytest.approx(sql, rel=1e-12)
    assert ours == pytest.approx(np.quantile(values, qs).tolist(), rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 37, 1000])
def test_an_array_gives_exactly_what_a_list_gives(n: int) -> None:
    """numpy arrays take a selection path (np.partition); the same two order statistics, the same arithmetic."""
    values = np.random.default_rng(n).lognormal(3.0, 1.0, n)
    values[: n // 3] = values[0]  # ties
    for q in (0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0):
        assert quantile(values, q) == quantile(values.tolist(), q)
    assert quantile(values.reshape(1, -1) if n > 1 else values, 0.5) == quantile(values.tolist(), 0.5)
    assert quantile(np.array([], dtype=float), 0.5) is None
    assert quantile(np.array([3, 1, 2]), 0.5) == 2.0  # integers too
