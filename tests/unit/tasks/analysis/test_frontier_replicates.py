"""frontier's bootstrap replicates: the same numbers, to the bit, for a fixed seed.

The figures below were printed with the random stream as docs/dev/decisions/0007-frontier-replicate-draws.md lays it
out (a large run's order statistic drawn by inversion from one uniform, level by level), with the large runs'
normal parts of throughput summed into one normal per level and replicate
(docs/dev/decisions/0008-summed-normal-parts.md), from the fleet built here: ``compare_frontiers(_fleet(1), _fleet(2,
slower=1.15), ...)`` as in each test. The points (levels, ratios) are those tcobench 87f023d printed; only the
intervals, the crossover's interval, the share covered and the bands moved with each change of stream. A change of the
random stream's use or of the arithmetic's order changes them: that is a change of results, not a speed-up.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from tcobench.tasks.analysis.compare import RunPoint, compare_frontiers
from tcobench.tasks.analysis.compare.interactivity import FrontierComparison


def _fleet(seed: int, slower: float = 1.0) -> list[RunPoint]:
    """Runs at levels 1, 2, 4, 8 over 9 nights: large runs (the large-sample forms), small ones (requests drawn),
    one-request runs, nights with several runs of a level (runs drawn within the night) and a level on a few
    nights only (replicates that draw none of them)."""
    rng = np.random.default_rng(seed)
    points = []
    for night in range(9):
        for level in (1, 2, 4, 8):
            if level == 8 and night % 3:  # level 8 on nights 0, 3 and 6 only
                continue
            for copy in range(1 + (night % 4 == 1) + (level == 2 and night == 5)):
                n = (150, 40, 1, 120)[(night + level + copy) % 4]
                per_user = 100.0 / (1 + 0.35 * level) / slower ** (1 - np.log2(level) / 1.5)  # B: A's curve, tilted
                tpot = rng.gamma(20.0, 1 / 20, n) * 1000 / per_user
                tokens = rng.integers(60, 68, n).astype(float)
                e2e = tokens * tpot / 1000 * rng.lognormal(0.0, 0.05, n)
                per_gpu = per_user * level * 0.9 * rng.lognormal(0.0, 0.03)
                k = 2e-3 * rng.lognormal(0.0, 0.02)
                points.append(
                    RunPoint(
                        f"r{seed}-{night}-{level}-{copy}", f"n{night:02d}", level, 1, per_gpu, k, tpot, tokens, e2e
                    )
                )
    return points


def _summary(found: FrontierComparison) -> dict[str, object]:
    """What compare prints of a comparison at equal interactivity, as exact floats (repr)."""
    cross = found.crossover
    return {
        "targets": [
            [repr(t.target), repr(t.ratio), repr(t.ci_low), repr(t.ci_high), repr(t.covered), t.reason]
            for t in found.targets
        ],
        "crossover": None
        if cross is None
        else [repr(cross.at), repr(cross.ci_low), repr(cross.ci_high), repr(cross.covered)],
        "levels": [
            [lv.concurrency, repr(lv.interactivity), repr(lv.tok_s_per_gpu), repr(lv.usd_per_gpu_s), lv.pareto]
            for side in (found.a, found.b)
            for lv in side.levels
        ],
        "bands": hashlib.sha256(repr([(s.band_low, s.band_high) for s in (found.a, found.b)]).encode()).hexdigest(),
    }


# see the module docstring
EXPECTED: dict[float, dict[str, object]] = {
    0.5: {
        "targets": [
            ["39.5", "0.8226823370794824", "0.7454883519997424", "0.9130757622313408", "0.95", None],
            ["47.7", "0.8714543507532614", "0.7395662255345754", "0.9883753665044681", "0.98", None],
            ["55.9", "1.066119205152718", "0.8692354754045051", "1.2446499599711107", "1.0", None],
        ],
        "crossover": ["53.98933450016645", "49.10418001143085", "59.68211399438593", "0.9966666666666667"],
        "levels": [
            [1, "75.28404930402729", "68.00571366798577", "0.001983037116873718", True],
            [2, "58.81071605540821", "105.98814926936326", "0.0019965553265989277", True],
            [4, "42.28499081323912", "150.8926135949541", "0.002013224741490204", True],
            [8, "23.88684338026849", "186.8122643840337", "0.001978965680463504", True],
            [1, "64.04666235323525", "58.969307666100946", "0.0020031218616050513", True],
            [2, "56.77440552147796", "100.97347668919011", "0.0019936232857735727", True],
            [4, "47.229842823589046", "158.7382191666901", "0.002002634039966443", True],
            [8, "31.26069318004531", "211.31243261619855", "0.0019860566370194775", True],
        ],
        "bands": "98236817f2246c89ff5e494b5fc6e3dae5babf11fb57f1be9dd94382bab6a3c4",
    },
    0.9: {
        "targets": [
            ["40.0", "0.864640534750117", "0.7029730459315605", "1.021874772652384", "0.9866666666666667", None],
            [
                "55.0",
                "None",
                "None",
                "None",
                "None",
                "55 tok/s/user is outside B's measured range 26.3-50.8 tok/s/user "
                "(A's: 19.6-59.8 tok/s/user); tcobench does not extrapolate",
            ],
            [
                "70.0",
                "None",
                "None",
                "None",
                "None",
                "70 tok/s/user is outside A's measured range 19.6-59.8 tok/s/user "
                "(B's: 26.3-50.8 tok/s/user); tcobench does not extrapolate",
            ],
        ],
        "crossover": ["47.95499331559332", "38.86998694916688", "50.508998159663356", "0.8333333333333334"],
        "levels": [
            [1, "59.755409479245955", "68.00571366798577", "0.001983037116873718", True],
            [2, "48.94879382948366", "105.98814926936326", "0.0019965553265989277", True],
            [4, "35.90452061540443", "150.8926135949541", "0.002013224741490204", True],
            [8, "19.552821188350382", "186.8122643840337", "0.001978965680463504", True],
            [1, "50.805111644712944", "58.969307666100946", "0.0020031218616050513", True],
            [2, "48.73899762544212", "100.97347668919011", "0.0019936232857735727", True],
            [4, "40.107361198821", "158.7382191666901", "0.002002634039966443", True],
            [8, "26.348287248285363", "211.31243261619855", "0.0019860566370194775", True],
        ],
        "bands": "2d658d012f87672b2a15bf16490807be91ada6b62efc71e271da2bdf7d6605cb",
    },
}


@pytest.mark.parametrize(("q", "targets"), [(0.5, None), (0.9, [40.0, 55.0, 70.0])])
def test_a_fixed_seed_gives_the_same_ratios_intervals_crossover_and_bands_as_before(
    q: float, targets: list[float] | None
) -> None:
    found = compare_frontiers(_fleet(1), _fleet(2, slower=1.15), "A", "B", targets, q=q, resamples=300, seed=7)
    assert _summary(found) == EXPECTED[q]


def test_the_replicates_frontiers_at_once_are_builds_one_by_one() -> None:
    """Levels with ties, NaN (a replicate that drew none of a level's nights), dominated and flat points."""
    from tcobench.tasks.analysis.compare.frontier import build
    from tcobench.tasks.analysis.compare.interactivity import _frontiers

    rng = np.random.default_rng(5)
    levels, replicates = 5, 4000
    stacked = rng.integers(1, 7, size=(levels, 3, replicates)).astype(float)  # few values: many ties
    stacked[:, 2] /= 1000
    missing = rng.random((levels, replicates)) < 0.2  # a level whose nights a replicate did not draw
    stacked[:, 0][missing] = stacked[:, 1][missing] = stacked[:, 2][missing] = np.nan
    stacked[0, 1, rng.random(replicates) < 0.05] = np.nan  # a level with an interactivity and no throughput
    xs, ys, ks, size = _frontiers(stacked)
    sizes = set()
    for r in range(replicates):
        x, y, k = stacked[:, 0, r], stacked[:, 1, r], stacked[:, 2, r]
        ok = np.isfinite(x) & np.isfinite(y)
        front = build(x[ok], y[ok], k[ok]) if ok.sum() >= 2 else None
        n = 0 if front is None else len(front.x)
        sizes.add(n)
        assert size[r] == n
        if front is not None:
            assert np.array_equal(xs[r, :n], front.x) and np.array_equal(ys[r, :n], front.y)
            assert np.array_equal(ks[r, :n], front.k)
    assert {0, 2, 3, 4} <= sizes  # no frontier, and curves of several sizes were met
