"""frontier and interactivity: Pareto points, the monotone interpolant without extrapolation, refusals, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import CostBasis
from tcobench.tasks.analysis.compare import (
    RunPoint,
    compare_frontiers,
    level_points,
    load_points,
    pareto_mask,
    parse_targets,
)
from tcobench.tasks.analysis.compare.frontier import FRONTIER_MACROS, build
from tcobench.tasks.analysis.compare.interactivity import check_quantile, spread_targets
from tcobench.tasks.analysis.quantile import quantile, quantile_rows
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect, views_named
from tests.unit.factories import write_fleet


def _point(run_id: str, night: str, level: int, tpot_ms: list[float], per_gpu: float, k: float = 1e-3) -> RunPoint:
    tpot = np.array(tpot_ms, dtype=float)
    tokens = np.full(len(tpot), 10.0)
    return RunPoint(run_id, night, level, 1, per_gpu, k, tpot, tokens, tokens * tpot / 1000)


def test_pareto_points_are_those_no_other_beats_on_both_axes() -> None:
    x = np.array([100.0, 80.0, 60.0, 50.0, 70.0])
    y = np.array([10.0, 30.0, 50.0, 40.0, 20.0])
    assert pareto_mask(x, y).tolist() == [True, True, True, False, False]


def test_the_frontier_interpolates_monotonically_and_never_extrapolates() -> None:
    x, y, k = np.array([20.0, 40.0, 80.0]), np.array([900.0, 600.0, 100.0]), np.full(3, 1e-3)
    front = build(x, y, k)
    assert front is not None and (front.low, front.high) == (20.0, 80.0)
    grid = np.linspace(20, 80, 61)
    values, _ = front.at(grid)
    assert np.all(np.diff(values) <= 0)  # monotone between decreasing points: no overshoot (PCHIP)
    assert values[[0, -1]].tolist() == pytest.approx([900.0, 100.0], rel=1e-12)
    outside, _ = front.at(np.array([19.9, 80.1]))
    assert np.isnan(outside).all()
    # points on a line: the interpolant is that line
    line = build(np.array([10.0, 20.0, 40.0]), np.array([300.0, 200.0, 0.0]), np.full(3, 1e-3))
    assert line is not None
    assert line.at(np.array([15.0, 30.0]))[0] == pytest.approx([250.0, 100.0], rel=1e-12)


def test_one_pareto_point_is_no_frontier_and_a_dominated_low_point_is_reached_flat() -> None:
    assert build(np.array([50.0]), np.array([10.0]), np.array([1.0])) is None
    # (30, 5) is dominated by (50, 10): one Pareto point, no frontier
    assert build(np.array([50.0, 30.0]), np.array([10.0, 5.0]), np.ones(2)) is None
    # saturated: the lowest level (30, 95) falls behind (40, 100); at 30-40 the (40, 100) point serves faster users
    front = build(np.array([60.0, 40.0, 30.0]), np.array([50.0, 100.0, 95.0]), np.ones(3))
    assert front is not None and front.low == 30.0
    assert front.at(np.array([30.0, 35.0]))[0].tolist() == [100.0, 100.0]


def test_levels_are_night_weighted_and_use_the_tpot_quantile() -> None:
    points = [
        _point("a", "n1", 1, [10, 10, 10], 100.0),
        _point("b", "n1", 1, [20, 20, 20], 100.0),
        _point("c", "n2", 1, [10, 12, 40], 200.0),
    ]
    (level,) = level_points(points, 0.5)
    # night n1: mean of 1000/10 and 1000/20 = 75; night n2: 1000 / median(10, 12, 40) = 83.3; then their mean
    assert level.interactivity == pytest.approx((75.0 + 1000 / 12) / 2)
    assert level.tok_s_per_gpu == pytest.approx(150.0)
    (p90,) = level_points(points, 0.9)
    assert p90.interactivity < level.interactivity  # the slowest users: a stricter figure
    matrix = np.array([[3.0, 1.0, 2.0], [10.0, 30.0, 20.0]])
    assert quantile_rows(matrix, 0.9).tolist() == [quantile(matrix[0], 0.9), quantile(matrix[1], 0.9)]


def test_a_target_outside_a_range_is_refused_naming_both_ranges() -> None:
    a = [_point(f"a{c}", "n", c, [1000 / x] * 5, y) for c, x, y in ((1, 90, 100), (2, 60, 180), (4, 30, 300))]
    b = [_point(f"b{c}", "n", c, [1000 / x] * 5, y) for c, x, y in ((1, 80, 90), (2, 50, 150), (4, 25, 250))]
    found = compare_frontiers(a, b, "GPU-A (h1)", "GPU-B (h2)", [20.0, 40.0, 85.0], resamples=100)
    low, mid, high = found.targets
    assert low.ratio is None and low.reason is not None
    assert "20 tok/s/user is outside A's measured range 30.0-90.0 tok/s/user (B's: 25.0-80.0" in low.reason
    assert high.ratio is None and high.reason is not None and "outside B's measured range 25.0-80.0" in high.reason
    assert mid.ratio is not None and mid.reason is None and mid.ci_low is not None
    one = compare_frontiers(a, b[:1], "GPU-A (h1)", "GPU-B (h2)", [40.0], resamples=100)
    assert one.targets[0].ratio is None and "B (GPU-B (h2)) has no frontier: 1 Pareto point(s)" in str(
        one.targets[0].reason
    )


@pytest.mark.parametrize("text", ["fast", "-5", "0", "20,,50", "nan", "inf"])
def test_bad_targets_are_one_line_naming_the_value(text: str) -> None:
    with pytest.raises(ConfigError, match=r"--interactivity .*is not a target \(valid: positive numbers"):
        parse_targets(text)


@pytest.mark.parametrize("q", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_a_quantile_outside_0_1_is_refused(q: float) -> None:
    with pytest.raises(ConfigError, match=r"--interactivity-quantile .*must lie in \(0, 1\)"):
        check_quantile(q)


def test_targets_spread_over_the_overlap() -> None:
    assert parse_targets("20, 50,100") == (20.0, 50.0, 100.0)
    assert spread_targets(20.0, 60.0) == (30.0, 40.0, 50.0)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 8, 9, 33, 99])
@pytest.mark.parametrize("q", [0.5, 0.9, 0.37])
def test_a_stretch_of_small_runs_drawn_at_once_is_drawing_run_after_run_to_the_bit(
    n: int, q: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """_drawn (runs of one request count under NORMAL_FROM_REQUESTS, drawn a chunk of runs at a time) gives each run
    the replicates of drawing its n requests resamples times, sorting the drawn TPOTs and summing the drawn tokens
    and e2e in numpy, run after run from the same stream, and leaves the stream where that does."""
    from tcobench.tasks.analysis.compare import frontier

    resamples = 301  # odd: a run's draws end on half of a 64-bit number for odd n
    monkeypatch.setattr(frontier, "_DRAW_CELLS", 2 * n * resamples)  # chunks of 2 runs, the last of 1
    rng = np.random.default_rng(n)
    points = []
    for i in range(5):
        tpot = rng.lognormal(3.0, 0.5, n)
        tpot = np.round(tpot) if i % 2 else tpot  # tied TPOTs
        tokens = rng.integers(1, 500, n).astype(float) if i % 3 else rng.random(n) * 100
        points.append(
            RunPoint(f"r{i}", "n", 1, 1, float(rng.random() * 100), 1e-3, tpot, tokens, rng.lognormal(0, 1, n))
        )
    mine, theirs = np.random.default_rng(1), np.random.default_rng(1)
    x, y = frontier._drawn(points, q, resamples, mine)
    for i, p in enumerate(points):
        idx = theirs.integers(0, n, size=(resamples, n))
        rate = p.tokens.sum() / p.e2e_s.sum()
        assert np.array_equal(x[i], 1000.0 / quantile_rows(p.tpot_ms[idx], q))
        assert np.array_equal(y[i], p.tok_s_per_gpu * (p.tokens[idx].sum(axis=1) / p.e2e_s[idx].sum(axis=1)) / rate)
    assert mine.random() == theirs.random()


def test_a_large_runs_replicates_by_their_large_sample_forms_agree_with_drawing() -> None:
    from tcobench.tasks.analysis.compare.frontier import _run_replicates

    rng = np.random.default_rng(0)
    n = 150  # at least NORMAL_FROM_REQUESTS: the Beta order statistic and the normal approximation
    tpot = rng.lognormal(3.0, 0.3, n)
    tokens = np.full(n, 64.0)
    e2e = tokens * tpot / 1000 * rng.lognormal(0.0, 0.1, n)
    point = RunPoint("r", "n", 1, 1, 100.0, 1e-3, tpot, tokens, e2e)
    x, y, sd = _run_replicates(point, 0.5, 4000, rng)
    idx = rng.integers(0, n, (4000, n))
    drawn_x = 1000 / quantile_rows(tpot[idx], 0.5)
    drawn_y = 100.0 * (tokens[idx].sum(axis=1) / e2e[idx].sum(axis=1)) / (tokens.sum() / e2e.sum())
    assert np.std(x) == pytest.approx(np.std(drawn_x), rel=0.1) and np.mean(x) == pytest.approx(
        np.mean(drawn_x), rel=0.01
    )
    # the throughput: its figure, and the sd of its normal part (replicate_levels adds it per level)
    assert (
        np.all(y == 100.0)
        and sd == pytest.approx(np.std(drawn_y), rel=0.1)
        and np.mean(drawn_y) == pytest.approx(100.0, rel=0.01)
    )


def test_a_levels_throughput_replicates_are_those_of_a_normal_per_run_and_replicate() -> None:
    """replicate_levels draws one normal per level and replicate for the large runs' throughput: the sum of their
    independent normals. Against a normal drawn per run and replicate (the same nights and runs drawn): the same mean
    and spread, on nights of one run (weighted in batches) and of several (runs drawn within the night, some twice)."""
    from tcobench.tasks.analysis.compare.bootstrap import night_draws
    from tcobench.tasks.analysis.compare.frontier import _throughput_sd, replicate_levels

    rng = np.random.default_rng(4)
    points = []
    for night in range(8):
        for copy in range(1 if night in (2, 5, 6) else 3):
            tpot = rng.lognormal(3.0, 0.3, 150)
            tokens = rng.integers(40, 90, 150).astype(float)
            e2e = tokens * tpot / 1000 * rng.lognormal(0.0, 0.8, 150)  # noisy requests: a wide normal part
            per_gpu = 100.0 * rng.lognormal(0.0, 0.01)
            points.append(RunPoint(f"r{night}-{copy}", f"n{night}", 4, 1, per_gpu, 1e-3, tpot, tokens, e2e))
    resamples = 40_000
    draws = night_draws((p.night for p in points), resamples, np.random.default_rng(1))
    level = replicate_levels(points, 0.5, resamples, np.random.default_rng(2), draws)[4][1]
    # the reference: the same nights drawn, the runs of a night drawn with replacement, a normal per run and replicate
    ref_rng = np.random.default_rng(3)
    total, weight = np.zeros(resamples), np.zeros(resamples)
    for name in sorted({p.night for p in points}):
        runs = [p for p in points if p.night == name]
        sd = _throughput_sd(runs)
        per_run = np.array([p.tok_s_per_gpu for p in runs])[:, None] + sd[:, None] * ref_rng.standard_normal(
            (len(runs), resamples)
        )
        pick = ref_rng.integers(0, len(runs), (len(runs), resamples))
        total += draws[name] * per_run[pick, np.arange(resamples)].mean(axis=0)
        weight += draws[name]
    reference = total / weight
    assert np.mean(level) == pytest.approx(np.mean(reference), rel=0.005)
    assert np.std(level) == pytest.approx(np.std(reference), rel=0.03)
    assert np.quantile(level, 0.975) - np.quantile(level, 0.025) == pytest.approx(
        np.quantile(reference, 0.975) - np.quantile(reference, 0.025), rel=0.04
    )


def test_mixed_gpu_counts_are_listed_and_an_interval_across_1_has_no_winner() -> None:
    from dataclasses import replace

    from tcobench.tasks.analysis.compare.document import target_sentence

    a = [_point(f"a{c}", "n", c, [1000 / x] * 5, y) for c, x, y in ((1, 90, 100), (2, 60, 180), (4, 30, 300))]
    a[0] = replace(a[0], gpus=2)
    b = [_point(f"b{c}", "n", c, [1000 / x] * 5, y) for c, x, y in ((1, 90, 100), (2, 60, 180), (4, 30, 300))]
    found = compare_frontiers(a, b, "GPU-A (h1)", "GPU-B (h2)", [50.0], resamples=100)
    assert found.notes == ("A mixes GPU counts 1, 2: tok/s is divided by each run's own",)
    row = replace(found.targets[0], ratio=1.0, ci_low=0.9, ci_high=1.1)
    assert row.no_clear_winner
    assert target_sentence(found, row).startswith("no clear winner at 50 tok/s/user: GPU-A (h1) vs GPU-B (h2)")
    row = replace(row, ratio=0.64, ci_low=0.6, ci_high=0.69)
    assert target_sentence(found, row) == (
        "GPU-A (h1) is 0.64x as cost-efficient as GPU-B (h2) at 50 tok/s/user (95% CI 0.60-0.69)"
    )


def test_a_side_is_named_by_its_gpu_hosts_and_where_the_gpu_facts_came_from() -> None:
    from typing import Any

    from tcobench.tasks.analysis.compare.sides import side_name

    def row(**fields: Any) -> Any:
        return {"gpu_name": None, "gpu_vendor": None, "host": "h", "gpu_source": None, **fields}

    assert side_name([row(gpu_name="H200", gpu_vendor="nvidia", host="gpu-nv-01", gpu_source="declared")]) == (
        "NVIDIA H200 (gpu-nv-01, declared)"
    )
    amd = [row(gpu_name="AMD Instinct MI300X", gpu_vendor="amd", host=h) for h in ("a", "b")]
    assert side_name(amd) == "AMD Instinct MI300X (a, b)"
    assert side_name([row(host="cpu-1")]) == "CPU (cpu-1)"


@pytest.mark.parametrize("points", [2, 3, 4, 7])
def test_the_batched_pchip_of_the_replicates_is_scipys(points: int) -> None:
    from scipy.interpolate import PchipInterpolator

    from tcobench.tasks.analysis.compare.frontier import pchip_batch

    rng = np.random.default_rng(points)
    x = np.sort(rng.uniform(10, 100, (40, points)), axis=1)
    y = rng.uniform(0, 1000, (40, points, 2))
    y[:5, 1] = y[:5, 0]  # flat stretches: slope 0 at the shared point
    targets = np.linspace(5, 105, 250)
    got = pchip_batch(x, y, targets)
    for i in range(len(x)):
        want = PchipInterpolator(x[i], y[i], extrapolate=False)(targets)
        inside = (targets >= x[i, 0]) & (targets <= x[i, -1])
        assert np.allclose(got[i][inside], want[inside], rtol=1e-12, atol=1e-9)
        assert np.isnan(got[i][~inside]).all()


def test_load_points_reads_each_runs_requests_and_of_a_steady_run_those_in_its_window_only(tmp_path: Path) -> None:
    """load_points' requests are each run's ok requests with a TPOT (in the order the store holds them: here, the
    order they were sent); of a run whose point is its steady state (view frontier_points: steady), only those that
    decoded in its window, as filtering request_metrics directly gives them."""
    write_fleet(tmp_path, nights=1, concurrency=(1, 16, 32), regression=None)  # 20 requests: 32 streams never fill
    requests = (
        "FROM request_metrics AS m JOIN frontier_points AS f ON f.run_id = m.run_id AND f.basis = 'owned' "
        "WHERE m.ok AND m.tpot_ns > 0 AND m.output_tokens IS NOT NULL AND m.e2e_ns > 0 "
    )
    outside = "f.steady AND NOT in_steady(m.start_ns + m.ttft_ns, m.decode_ns, f.steady_start_ns, f.steady_end_ns)"
    # load_points reads the frontier's macros (FRONTIER_MACROS)
    needs = {"runs", *FRONTIER_MACROS, *views_named(requests + outside)}
    con = connect(tmp_path, load_prices(None), needs=needs)
    try:
        runs = [(r, n, int(c)) for r, n, c in con.execute("SELECT run_id, batch_id, concurrency FROM runs").fetchall()]
        points = {p.run_id: p for p in load_points(con, runs, CostBasis())}
        wanted = con.execute(
            "SELECT m.run_id, list(m.tpot_ns / 1e6 ORDER BY m.request_index), "
            "list(m.output_tokens::DOUBLE ORDER BY m.request_index), list(m.e2e_ns / 1e9 ORDER BY m.request_index) "
            f"{requests} AND NOT ({outside}) GROUP BY m.run_id"
        ).fetchall()
        left_out = con.execute(f"SELECT count(*) {requests} AND {outside}").fetchone()
    finally:
        con.close()
    assert len(points) == len(runs) == len(wanted)
    assert any(points[r].steady for r, *_ in wanted) and any(not points[r].steady for r, *_ in wanted)
    assert left_out is not None and left_out[0] > 0, "some steady run has requests outside its window"
    for run_id, tpot, tokens, e2e in wanted:
        p = points[run_id]
        assert p.tpot_ms.tolist() == tpot and p.tokens.tolist() == tokens and p.e2e_s.tolist() == e2e


@pytest.mark.parametrize(("n", "q"), [(100, 0.5), (272, 0.5), (150, 0.9), (5000, 0.1)])
def test_a_large_runs_order_statistic_is_drawn_by_inverting_its_beta_distribution(n: int, q: float) -> None:
    """The guide table gives what a search of the cdf gives for every uniform (both ends of every cell included;
    a raw draw's uniform is the double Generator.random makes of it), and the indices have the distribution of the
    order statistic at U ~ Beta(h + 1, n - h) (ceil(U n) - 1). The cdf: the betainc the frontier uses (scipy's to
    about 1e-13, test_incomplete_beta.py; a uniform on a cell's edge meets the cdf's value at the median exactly)."""
    from tcobench.tasks.analysis.compare.frontier import _CELL_BITS, _quantile_indices
    from tcobench.tasks.analysis.incomplete_beta import betainc

    h = (n - 1) * q
    cdf = betainc(h + 1, n - h, np.arange(1, n + 1) / n)
    rng, twin = np.random.default_rng(3), np.random.default_rng(3)
    assert np.array_equal((rng.bit_generator.random_raw(1000) >> np.uint64(11)) * 2.0**-53, twin.random(1000))
    cells = np.arange(1 << _CELL_BITS, dtype=np.uint64) << np.uint64(64 - _CELL_BITS)
    raw = np.concatenate(
        [rng.bit_generator.random_raw(100_000), cells, cells | np.uint64((1 << (64 - _CELL_BITS)) - 1)]
    )
    v = (raw >> np.uint64(11)) * 2.0**-53
    assert np.array_equal(_quantile_indices(n, q, raw), np.searchsorted(cdf, v, side="right"))
    drawn = np.sort(_quantile_indices(n, q, rng.bit_generator.random_raw(200_000)))
    by_beta = np.sort(np.clip(np.ceil(rng.beta(h + 1, n - h, 200_000) * n).astype(np.int64) - 1, 0, n - 1))
    grid = np.arange(n)
    gap = np.abs(np.searchsorted(drawn, grid, side="right") - np.searchsorted(by_beta, grid, side="right"))
    assert gap.max() / 200_000 < 0.01  # two-sample Kolmogorov-Smirnov distance (its 1% critical value: 0.005)
