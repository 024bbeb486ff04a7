"""compare: selections, refusal of unlike runs, the ratio against the SQL, the bootstrap CI and the verdict."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import astuple
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest

from tcobench.errors import ConfigError, QueryError
from tcobench.schemas import OWNED, CompareOptions, CostBasis, FailureClass, PriceTable, RentalTier, RunStatus
from tcobench.tasks.analysis.compare import (
    Comparison,
    RunSample,
    Verdict,
    bootstrap_bases,
    bootstrap_efficiency,
    compare,
    compare_on,
    night_draws,
    parse_selection,
    verdict,
)
from tcobench.tasks.analysis.compare.bootstrap import (
    NORMAL_FROM_REQUESTS,
    Moments,
    _all_replicates,
    _run_replicates,
    load_samples,
)
from tcobench.tasks.analysis.compare.candidates import (
    CandidateRun,
    SideFigures,
    load_priced,
    load_runs,
    night_weighted,
    night_weighted_sides,
)
from tcobench.tasks.analysis.compare.comparison import compare_views
from tcobench.tasks.analysis.quantile import quantile
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect, freeze_views, views_named
from tcobench.tasks.store.rows import fetch_rows
from tcobench.tasks.store.store import write_results
from tests.unit.factories import make_prices, make_request, make_run, write_fleet, write_nights


@pytest.fixture(scope="module")
def con(fleet: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """One connection for the read-only tests (the per-run views frozen, as compare() does)."""
    connection = connect(fleet, load_prices(None))
    freeze_views(connection)
    yield connection
    connection.close()


def test_parse_selection_and_matching() -> None:
    sel = parse_selection("vendor=NVIDIA, host=a|b ,since=2026-11-24, run=ab12")
    assert [(t.key, t.column, t.mode) for t in sel.terms] == [
        ("vendor", "gpu_vendor", "exact"),
        ("host", "host", "exact"),
        ("since", "date", "since"),
        ("run", "run_id", "prefix"),
    ]
    row = {"gpu_vendor": "nvidia", "host": "b", "date": "2026-11-25", "run_id": "ab12cd"}
    assert sel.matches(row)
    assert not sel.matches({**row, "date": "2026-11-23"})
    assert not sel.matches({**row, "gpu_vendor": None})
    assert parse_selection("gpu=h200").matches({"gpu_name": "NVIDIA H200"})
    assert parse_selection("gpu_vendor=amd").matches({"gpu_vendor": "amd"})
    # engine= is the nightly matrix's engine label or the engine's own name; engine_label= only the label
    labelled = {"engine_label": "vllm-main", "engine_name": "vllm"}
    assert parse_selection("engine=vllm-main").matches(labelled) and parse_selection("engine=VLLM").matches(labelled)
    assert not parse_selection("engine=ollama").matches(labelled)
    assert parse_selection("engine=llama.cpp").matches({"engine_label": None, "engine_name": "llama.cpp"})
    assert not parse_selection("engine_label=vllm").matches(labelled)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("vendor", "is not key=value"),
        ("vendor=", "is not key=value"),
        ("colour=red", "unknown key 'colour'"),
    ],
)
def test_parse_selection_errors_are_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_selection(text, "--a")
    assert message in str(info.value) and "\n" not in str(info.value)
    if "key" in message:
        assert "vendor" in str(info.value)  # names the valid keys


def test_a_selections_dates_bound_every_run_it_matches(con: duckdb.DuckDBPyConnection) -> None:
    assert parse_selection("vendor=nvidia").dates() == (None, None)
    both = parse_selection("since=2026-03-01|2026-02-01,until=2026-05-29,since=2026-02-15")
    assert both.dates() == ("2026-02-15", "2026-05-29")  # two since terms: the later; alternatives: the earlier
    assert parse_selection("date=2026-03-02|2026-03-04,until=2026-03-03").dates() == ("2026-03-02", "2026-03-03")
    rows = con.sql("SELECT run_id, CAST(date AS VARCHAR) AS date FROM runs").to_arrow_table().to_pylist()
    dates = sorted({r["date"] for r in rows})
    for text in (f"since={dates[1]}", f"until={dates[-2]}", f"date={dates[0]}|{dates[2]}", f"since={dates[1]}|x"):
        first, last = parse_selection(text).dates()
        matched = [r for r in rows if parse_selection(text).matches(r)]
        assert matched and all(
            (first is None or r["date"] >= first) and (last is None or r["date"] <= last) for r in matched
        )


def _flat(value: Any) -> list[Any]:
    """Every leaf of nested dataclasses and tuples, in order: DuckDB sums in parallel, so a float may differ in its
    last bit between two reads of the same rows."""
    if isinstance(value, tuple | list):
        return [leaf for item in value for leaf in _flat(item)]
    if hasattr(value, "__dataclass_fields__"):
        return _flat(astuple(value))
    return [value]


def _same(got: list[Any], want: list[Any]) -> bool:
    """Equal leaves; floats within 1e-12 relative, NaN equal to NaN."""

    def close(g: Any, w: Any) -> bool:
        if isinstance(g, float) and isinstance(w, float):
            return (np.isnan(g) and np.isnan(w)) or g == pytest.approx(w, rel=1e-12)
        return bool(g == w)

    return len(got) == len(want) and all(close(g, w) for g, w in zip(got, want, strict=True))


def test_compare_reads_only_the_dates_its_sides_can_match(
    fleet: Path, con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The date bounds only narrow what is read: the same comparison as reading every run."""
    dates = [d for (d,) in con.sql("SELECT DISTINCT CAST(date AS VARCHAR) FROM runs ORDER BY 1").fetchall()]
    a, b = f"vendor=nvidia,since={dates[1]}", f"vendor=amd,since={dates[1]},until={dates[-1]}"
    bounded = compare(fleet, load_prices(None), a, b, CompareOptions(resamples=200))
    monkeypatch.setattr("tcobench.tasks.analysis.compare.candidates.date_bounds", lambda *_: (None, None))
    everything = compare(fleet, load_prices(None), a, b, CompareOptions(resamples=200))
    assert _same(_flat(bounded.strata), _flat(everything.strata))
    assert bounded.a_desc == everything.a_desc
    assert bounded.strata[0].a_nights < 5  # the bound was real: some nights are before it


def test_a_selections_workloads_bound_every_run_it_matches(con: duckdb.DuckDBPyConnection) -> None:
    assert parse_selection("vendor=nvidia").workloads() is None
    assert parse_selection("workload=Short|long,workload=SHORT").workloads() == frozenset({"short"})
    rows = load_runs(con, OWNED)
    for name in sorted({r["workload"] for r in rows}):
        chosen = parse_selection(f"workload={name.upper()}")  # selections compare workloads in any case
        bounded = load_runs(con, OWNED, workloads=chosen.workloads())
        assert bounded and [r["run_id"] for r in bounded] == [r["run_id"] for r in rows if chosen.matches(r)]
    assert load_runs(con, OWNED, workloads={"no-such-workload"}) == []


def test_compare_with_the_frontier_on_a_second_thread_is_the_comparison_made_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """compare() makes the comparison at equal interactivity on a cursor of its connection, on a thread of its own;
    compare_on over one connection makes it first, then the one per level: the same comparison."""
    import threading

    from tcobench.tasks.analysis.compare import comparison as comparison_module

    write_fleet(tmp_path, nights=3, concurrency=(1, 2, 4, 8, 16), regression=None)
    prices = load_prices(None)
    options = CompareOptions(interactivity=(60.0,), resamples=200)
    made_on, frontier = [], comparison_module._frontier

    def recorded(*args: object) -> object:
        made_on.append(threading.current_thread().name)
        return frontier(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(comparison_module, "_frontier", recorded)
    threaded = compare(tmp_path, prices, "vendor=nvidia", "vendor=amd", options)
    con = connect(tmp_path, prices, needs=compare_views(options.basis))  # as compare() connects
    try:
        in_turn = compare_on(con, "vendor=nvidia", "vendor=amd", options)
    finally:
        con.close()
    assert made_on[0].startswith("tcobench-frontier") and made_on[1] == threading.main_thread().name
    assert threaded.frontier is not None and threaded.frontier.targets[0].ratio is not None
    assert repr(threaded.frontier) == repr(in_turn.frontier)  # to the bit
    # the per-level figures to the last bits only (_same): two comparisons made in turn differ there too

    def rest(c: Comparison) -> list[Any]:
        return _flat(
            (
                c.strata,
                c.pooled,
                c.pooled_verdict,
                c.differences,
                c.notes,
                c.a_desc,
                c.b_desc,
                c.flagged,
                c.claim_grade,
                c.setup,
            )
        )

    assert threaded.strata and _same(rest(threaded), rest(in_turn))


def test_compare_with_operations_on_one_connection_is_compare_beside_operations(tmp_path: Path) -> None:
    """`tcobench compare` reads the comparison and the operations views over one connection: the same comparison as
    compare() over the price table it prices (the measured adaptation days bound in, or the table as it is), and
    the same rows as operations()."""
    from tcobench.tasks.analysis.compare import compare_with_operations
    from tcobench.tasks.analysis.operations import Adaptation, operations, with_measured_adaptation

    write_fleet(tmp_path, nights=3, concurrency=(1, 4), regression=None, requests=8, cells=True)
    prices = load_prices(None)
    options = CompareOptions(interactivity=(60.0,), resamples=200)
    ops = operations(tmp_path, prices)
    fields = ("strata", "pooled", "frontier", "notes", "flagged", "claim_grade", "setup", "snapshot")
    by_basis = {}
    tables: tuple[tuple[Adaptation, PriceTable], ...] = (
        ("assumed", prices),
        ("measured", with_measured_adaptation(prices, ops.adaptation)),
    )
    for adaptation, priced in tables:
        found, beside = compare_with_operations(
            tmp_path, prices, "vendor=nvidia", "vendor=amd", options, adaptation=adaptation
        )
        alone = compare(tmp_path, priced, "vendor=nvidia", "vendor=amd", options)
        assert beside == ops
        assert _same(_flat([getattr(found, f) for f in fields]), _flat([getattr(alone, f) for f in fields]))
        by_basis[adaptation] = found.strata[0].b_usd_per_m
    assert by_basis["measured"] != pytest.approx(by_basis["assumed"], rel=1e-6)  # the measured days were priced


def test_an_interrupt_while_comparing_per_level_stops_the_frontiers_query_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C in the per-level comparison interrupts the frontier's query on its cursor (a query of hours here) and
    raises KeyboardInterrupt, with no thread left behind."""
    import threading
    import time

    from tcobench.tasks.analysis.compare import comparison as comparison_module

    write_fleet(tmp_path, nights=2, concurrency=(1, 2, 4), regression=None)
    started = threading.Event()

    def endless(con: duckdb.DuckDBPyConnection, *args: object) -> object:
        started.set()
        return con.execute("SELECT count(*) FROM range(1000000000000) AS r(i) WHERE i % 7 = 3").fetchall()

    def interrupted(*args: object) -> object:
        assert started.wait(60)
        time.sleep(0.2)  # the frontier's query is running
        raise KeyboardInterrupt

    monkeypatch.setattr(comparison_module, "_frontier", endless)
    monkeypatch.setattr(comparison_module, "_at_levels", interrupted)
    begun = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        compare(
            tmp_path,
            load_prices(None),
            "vendor=nvidia",
            "vendor=amd",
            CompareOptions(interactivity=(60.0,), resamples=100),
        )
    assert time.monotonic() - begun < 60  # not the query's hours
    assert not [t for t in threading.enumerate() if t.name.startswith("tcobench-frontier")]


def test_bootstrap_weighs_nights_not_runs() -> None:
    def run(run_id: str, night: str, per_usd: float) -> RunSample:
        return RunSample(run_id, night, per_usd, np.array([64.0] * 5), np.array([1.0] * 5))

    # night n1 has two runs (100, 300: night mean 200), n2 one (50). Night-weighted: (200 + 50) / 2 = 125;
    # run-weighted: (100 + 300 + 50) / 3 = 150. A replicate is the mean of 2 nights drawn with replacement, each
    # the mean of 2 of its runs drawn: E = 125; its sd is sqrt((0.5 x 5000 + 75^2) / 2) = 63.7, so the mean of
    # 2000 replicates lies within 125 +- 7 (5 standard errors of 1.43) and far from 150.
    samples = [run("a", "n1", 100.0), run("b", "n1", 300.0), run("c", "n2", 50.0)]
    reps = bootstrap_efficiency(samples, 2000, np.random.default_rng(0))
    assert reps.shape == (2000,) and reps.min() >= 50.0 and reps.max() <= 300.0
    assert abs(float(reps.mean()) - 125.0) < 7.0
    # identical requests and a single run: no variation at all
    single = bootstrap_efficiency([run("a", "n1", 100.0)], 200, np.random.default_rng(0))
    assert np.all(single == 100.0)


def test_cost_bases_of_the_same_runs_share_one_resampling() -> None:
    """bootstrap_bases: each basis' replicates are bootstrap_efficiency's for its samples alone from the same
    generator state (the random numbers do not depend on the bases), whether runs are drawn request by request,
    by the normal approximation or are constant; so a basis priced at c times another everywhere has c times its
    replicates. Bases of different runs are refused."""
    rng = np.random.default_rng(7)

    def runs(prices: list[float]) -> list[RunSample]:
        out = []
        for i, price in enumerate(prices):
            n = (5, 150, 1, 40)[i % 4]  # drawn, normal, constant (one request), drawn
            tokens, e2e = rng.integers(10, 60, n).astype(float), rng.uniform(0.5, 2.0, n)
            out.append(RunSample(f"r{i}", f"n{i // 3}", price, tokens, e2e))  # 3 runs a night
        return out

    owned = runs([100.0, 120.0, 90.0, 80.0, 110.0, 95.0, 105.0])
    rented = [
        RunSample(s.run_id, s.night, p, s.tokens, s.e2e_s)
        for s, p in zip(owned, (60.0, 75.0, 40.0, 70.0, 65.0, 50.0, 80.0), strict=True)
    ]
    double = [RunSample(s.run_id, s.night, 2 * s.tokens_per_usd, s.tokens, s.e2e_s) for s in owned]
    shared = bootstrap_bases([owned, rented, double], 500, np.random.default_rng(3))
    for basis, replicates in zip((owned, rented, double), shared, strict=True):
        alone = bootstrap_efficiency(basis, 500, np.random.default_rng(3))
        assert np.allclose(replicates, alone, rtol=1e-12, atol=0)
    assert np.allclose(shared[2], 2 * shared[0], rtol=1e-12, atol=0)
    assert np.std(shared[0]) > 0 and not np.allclose(shared[0] / shared[1], shared[0][0] / shared[1][0])
    with pytest.raises(ValueError, match="different runs"):
        bootstrap_bases([owned, owned[1:]], 10, np.random.default_rng(0))


def test_a_runs_requests_resampled_by_drawing_and_by_the_normal_approximation_agree() -> None:
    """From NORMAL_FROM_REQUESTS ok requests a run's request-level resampling is its normal approximation
    (bootstrap.py); against drawing the requests (200,000 replicates each) at the threshold and above, the mean,
    sd and the 2.5% / 97.5% quantiles agree: mean within 0.2%, sd within 3%, each quantile within a tenth of an sd
    (drawing is slightly skewed, the ratio estimator's bias: docs/dev/performance.md#test-normal-approximation)."""
    rng = np.random.default_rng(7)
    for n in (NORMAL_FROM_REQUESTS, 272, 1000):
        tokens = rng.integers(1, 65, n).astype(float)  # uneven lengths: a real spread of the ratio
        e2e = tokens * rng.lognormal(-4.0, 0.3, n) + rng.lognormal(-3.0, 0.5, n)
        sample = RunSample("r", "n1", 1000.0, tokens, e2e)
        drawn = _run_replicates(sample, 200_000, np.random.default_rng(1), normal_from=10**9)
        normal = _run_replicates(sample, 200_000, np.random.default_rng(1))
        assert abs(normal.mean() / drawn.mean() - 1) < 0.002
        assert abs(normal.std() / drawn.std() - 1) < 0.03
        for q in (0.025, 0.975):
            assert abs(float(np.quantile(normal, q)) - float(np.quantile(drawn, q))) < 0.1 * drawn.std()
        assert 0.01 < drawn.std() / 1000.0 < 0.2  # a real spread, not a constant both sides agree on
    # below the threshold the requests are drawn: the same replicates as forcing the drawing
    few = RunSample("r", "n1", 1000.0, tokens[: NORMAL_FROM_REQUESTS - 1], e2e[: NORMAL_FROM_REQUESTS - 1])
    assert np.array_equal(
        _run_replicates(few, 500, np.random.default_rng(2)),
        _run_replicates(few, 500, np.random.default_rng(2), normal_from=10**9),
    )
    assert not np.array_equal(
        _run_replicates(sample, 500, np.random.default_rng(2)),
        _run_replicates(sample, 500, np.random.default_rng(2), normal_from=10**9),
    )


def test_the_normal_approximation_from_a_runs_sums_is_the_residual_formula() -> None:
    """A run's normal approximation reads only its sums (Moments: what view run_statistics keeps); its sd is
    sqrt(mean((t - rate e)^2) / n) / (rate mean(e)) computed here from the requests themselves."""
    rng = np.random.default_rng(11)
    tokens = rng.integers(1, 65, 272).astype(float)
    e2e = tokens * rng.lognormal(-4.0, 0.3, 272) + rng.lognormal(-3.0, 0.5, 272)
    rate = tokens.sum() / e2e.sum()
    residual = tokens - rate * e2e
    sd = np.sqrt(np.mean(residual * residual) / 272) / (rate * e2e.mean())
    expected = 1000.0 * (1.0 + sd * np.random.default_rng(3).standard_normal(500))
    from_arrays = _run_replicates(RunSample("r", "n1", 1000.0, tokens, e2e), 500, np.random.default_rng(3))
    assert np.allclose(from_arrays, expected, rtol=1e-12, atol=0.0)
    only_sums = RunSample("r", "n1", 1000.0, moments=Moments.of(tokens, e2e))
    assert np.array_equal(_run_replicates(only_sums, 500, np.random.default_rng(3)), from_arrays)
    # fewer than NORMAL_FROM_REQUESTS requests are drawn one by one: sums alone cannot do that
    few = RunSample("r", "n1", 1000.0, moments=Moments.of(tokens[:50], e2e[:50]))
    with pytest.raises(ValueError, match="50 requests to draw from, 0 loaded"):
        _run_replicates(few, 10, np.random.default_rng(0))


def test_view_run_statistics_holds_each_runs_quantiles_and_sums(con: duckdb.DuckDBPyConnection) -> None:
    """run_statistics against the stored requests, recomputed here with numpy and tasks/analysis/quantile.py (not the
    views): the TTFT and gap quantiles at p = 0, 0.01, ..., 1 and the bootstrap's sums; load_samples gives the
    same sums, and the requests themselves for a run drawn one by one."""
    stored = (
        con.sql("SELECT run_id, phase, error, ttft_ns, itl_ns, prompt_tokens, output_tokens, e2e_ns FROM requests")
        .to_arrow_table()
        .to_pylist()
    )
    stats = {r["run_id"]: r for r in con.sql("SELECT * FROM run_statistics").to_arrow_table().to_pylist()}
    ok: dict[str, list[dict[str, Any]]] = {}
    for r in stored:
        if r["phase"] == "measure" and r["error"] is None:
            ok.setdefault(str(r["run_id"]), []).append(r)
    assert ok and set(stats) == set(ok)
    probs = [i / 100 for i in range(101)]
    for run_id, rows in ok.items():
        got = stats[run_id]
        ttft = np.array([r["ttft_ns"] for r in rows if r["ttft_ns"] is not None], dtype=float) / 1e6
        gaps = np.array([g for r in rows for g in (r["itl_ns"] or [])], dtype=float) / 1e6
        assert got["ttft_ms_q"] == pytest.approx([quantile(ttft, p) for p in probs], rel=1e-9)
        assert got["itl_ms_q"] == pytest.approx([quantile(gaps, p) for p in probs], rel=1e-9)
        for kind in ("output", "total"):
            counted = [
                r
                for r in rows
                if r["output_tokens"] is not None
                and (r["e2e_ns"] or 0) > 0
                and (kind == "output" or r["prompt_tokens"] is not None)
            ]
            t = np.array(
                [float(r["output_tokens"]) + (float(r["prompt_tokens"]) if kind == "total" else 0.0) for r in counted]
            )
            e = np.array([r["e2e_ns"] for r in counted], dtype=float) / 1e9
            want = Moments.of(t, e)
            assert got[f"{kind}_n"] == want.n > 0
            for name in ("t", "tt", "e", "ee", "te"):
                assert got[f"{kind}_{name}"] == pytest.approx(getattr(want, name), rel=1e-12)
    run_id = next(iter(ok))
    (sample,) = load_samples(con, [(run_id, "n1", 1000.0)], "output")
    assert sample.sums().n == stats[run_id]["output_n"]
    if sample.sums().n < NORMAL_FROM_REQUESTS:  # drawn one by one: its requests are loaded, and agree with its sums
        assert astuple(Moments.of(sample.tokens, sample.e2e_s)) == pytest.approx(astuple(sample.sums()), rel=1e-12)


def _night_weighted_by_hand(rows: list[CandidateRun], column: str) -> float:
    """The mean over nights of each night's mean over its runs, in Python (NaN when no run has a value)."""
    key = "basis_output_tok_s" if column == "output_tok_s" else column
    nights: dict[str, list[float]] = {}
    for r in rows:
        value = r[key]  # type: ignore[literal-required]
        if r["has_cost_basis"] and value is not None:
            nights.setdefault(r["batch_id"], []).append(float(value))
    means = [sum(v) / len(v) for v in nights.values()]
    return sum(means) / len(means) if means else float("nan")


def test_every_sides_figures_in_one_query_are_each_sides_night_weighted_means(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """night_weighted_sides (macro side_figures, one query for all sides) gives each side the night-weighted means of
    its runs alone: by hand, and by night_weighted over that side only; a side without a priced run is NaN."""
    rows = load_runs(con, OWNED)
    sides: dict[tuple[object, int], list[CandidateRun]] = {}
    for r in rows:
        sides.setdefault((r["gpu_vendor"], r["concurrency"]), []).append(r)
    assert len(sides) >= 4 and len({r["batch_id"] for r in rows}) >= 3  # several sides, several nights
    unpriced = [{**r, "has_cost_basis": False} for r in rows[:3]]
    groups = [*sides.values(), unpriced, []]
    found = night_weighted_sides(con, groups)  # type: ignore[arg-type]
    assert len(found) == len(groups)
    for side, figures in zip(sides.values(), found, strict=False):
        alone = night_weighted(con, side)
        for column in SideFigures.__dataclass_fields__:
            got = getattr(figures, column)
            assert got == pytest.approx(_night_weighted_by_hand(side, column), rel=1e-12, nan_ok=True), column
            assert got == pytest.approx(getattr(alone, column), rel=1e-12, nan_ok=True), column
    assert all(np.isnan(astuple(found[-2]))) and all(np.isnan(astuple(found[-1])))
    assert night_weighted_sides(con, []) == []


def test_a_nan_figure_makes_its_sides_mean_nan_and_no_other(con: duckdb.DuckDBPyConnection) -> None:
    """A NaN value is read as NaN (as the rows have it), not left out as a NULL would be."""
    rows = [r for r in load_runs(con, OWNED) if r["has_cost_basis"]][:4]
    spoilt = [{**rows[0], "total_usd_month": float("nan")}, *rows[1:]]
    figures = night_weighted_sides(con, [spoilt, rows])  # type: ignore[list-item]
    assert np.isnan(figures[0].total_usd_month) and not np.isnan(figures[1].total_usd_month)
    assert figures[0].output_tokens_per_usd == figures[1].output_tokens_per_usd


def test_verdict_bounds() -> None:
    assert verdict(5.0, 1.2, 1.4) is Verdict.above
    assert verdict(1.3, 1.2, 1.4) is Verdict.inside
    assert verdict(1.4, 1.2, 1.4) is Verdict.inside  # the bounds belong to the interval
    assert verdict(1.0, 1.2, 1.4) is Verdict.below


def test_compare_gives_a_ci_the_cost_drivers_and_a_verdict(fleet: Path, con: duckdb.DuckDBPyConnection) -> None:
    """On the simulated fleet (the point estimate itself: test_compare_weighs_nights_not_runs, by hand)."""
    result = compare(fleet, load_prices(None), "vendor=nvidia", "vendor=amd", CompareOptions(claim=5.0, resamples=500))
    assert [s.concurrency for s in result.strata] == [1, 4, 16]
    for s in result.strata:
        assert 1.0 < s.lo < s.ratio < s.hi < 2.0 and s.hi - s.lo < 0.3
        assert s.verdict is Verdict.above  # 5x is far above a ratio of about 1.3
        assert sum(t.b_minus_a for t in s.terms) == pytest.approx(s.b_usd_per_m - s.a_usd_per_m)
        assert s.driver().term == "adaptation"  # 7 ROCm days vs 0.25 CUDA days
    assert result.pooled is not None and result.pooled_verdict is Verdict.above
    again = compare_on(con, "vendor=nvidia", "vendor=amd", CompareOptions(claim=5.0, resamples=500))
    assert [(s.lo, s.hi) for s in again.strata] == [(s.lo, s.hi) for s in result.strata]  # fixed seed
    inside = compare_on(
        con, "vendor=nvidia,concurrency=4", "vendor=amd", CompareOptions(claim=result.strata[1].ratio, resamples=500)
    )
    assert inside.strata[0].verdict is Verdict.inside and inside.pooled is None
    assert inside.notes == ("concurrency 1 only in B: not compared", "concurrency 16 only in B: not compared")
    below = compare_on(con, "vendor=nvidia", "vendor=amd", CompareOptions(claim=1.0, resamples=200))
    assert below.pooled_verdict is Verdict.below


def test_compare_rented_basis_and_total_tokens(con: duckdb.DuckDBPyConnection) -> None:
    owned = compare_on(con, "host=gpu-nv-1", "host=gpu-amd-1", CompareOptions(resamples=200))
    rented = compare_on(
        con, "host=gpu-nv-1", "host=gpu-amd-1", CompareOptions(basis=CostBasis(RentalTier.rental_3yr), resamples=200)
    )
    # 3-year rental: H200 1.60 vs MI300X 1.55 USD/GPU-hour, so the throughput gap dominates
    assert rented.strata[0].ratio != pytest.approx(owned.strata[0].ratio)
    with pytest.raises(ConfigError, match=r"cost basis 'on-demand' has no priced run \(priced: owned, [a-z0-9-]+, "):
        compare_on(con, "host=gpu-nv-1", "host=gpu-amd-1", CompareOptions(basis=CostBasis(RentalTier.on_demand)))
    total = compare_on(con, "host=gpu-nv-1", "host=gpu-amd-1", CompareOptions(tokens="total", resamples=200))
    assert total.tokens == "total" and total.strata[0].a_tokens_per_usd > owned.strata[0].a_tokens_per_usd


def _unlike_store(root: Path) -> Path:
    a = make_run(run_id="a", host="ha", gpu_vendor="nvidia", hardware_key="test-hw")
    b = make_run(
        run_id="b",
        host="hb",
        gpu_vendor="amd",
        hardware_key="test-hw",
        prompt_set_hash="f" * 64,
        num_ctx=8192,
        engine_settings='{"threads": 8, "model_path": "/x"}',
        extra_body='{"samplers": ["temperature"]}',
    )
    for run in (a, b):
        write_results(root, run, [make_request(run_id=run.run_id, host=run.host, request_index=i) for i in range(4)])
    return root


def test_compare_refuses_unlike_runs_and_lists_the_differences(tmp_path: Path) -> None:
    store = _unlike_store(tmp_path)
    with pytest.raises(QueryError) as info:
        compare(store, make_prices(), "vendor=nvidia", "vendor=amd", CompareOptions(claim=5))
    message = str(info.value)
    assert message.startswith("refused: the selections differ in what was measured: ")
    assert "workload (prompt_set_hash): A {0000000000000000000000000000000000000...} vs B {fffff" in message
    assert 'extra_body (engine request fields): A {null} vs B {{"samplers": ["temperature"]}}' in message
    assert "--allow-different" in message and "\n" not in message
    # the engine's settings (its context length too) may differ between platforms: listed, never a refusal
    assert "num_ctx" not in message and "engine_settings" not in message
    allowed = compare(
        store, make_prices(), "vendor=nvidia", "vendor=amd", CompareOptions(allow_different=True, resamples=200)
    )
    assert len(allowed.differences) == 2
    setup = {d.setting: (d.a, d.b) for d in allowed.setup}
    assert setup["context length (num_ctx)"] == (("2048",), ("8192",))
    assert setup["engine setting threads"] == (("-",), ("8",))  # model_path is a location, not a setting
    assert not any("model_path" in name for name in setup)
    assert allowed.strata[0].ratio == pytest.approx(1.0)  # same requests, same prices
    assert "one run on a side" in allowed.notes[0]


def test_engines_of_different_versions_compare_and_are_listed(tmp_path: Path) -> None:
    a = make_run(run_id="a", host="ha", gpu_vendor="nvidia", hardware_key="test-hw", engine_version="0.32.0")
    b = make_run(run_id="b", host="hb", gpu_vendor="amd", hardware_key="test-hw", engine_version="0.30.1")
    for run in (a, b):
        write_results(
            tmp_path, run, [make_request(run_id=run.run_id, host=run.host, request_index=i) for i in range(4)]
        )
    done = compare(tmp_path, make_prices(), "vendor=nvidia", "vendor=amd", CompareOptions(resamples=100))
    assert done.differences == ()
    assert {d.setting: (d.a, d.b) for d in done.setup}["engine version"] == (("0.32.0",), ("0.30.1",))


def test_compare_errors(fleet: Path, con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(QueryError, match="selection A 'vendor=intel' matches no stored run"):
        compare_on(con, "vendor=intel", "vendor=amd")
    with pytest.raises(QueryError, match="share 15 run"):
        compare_on(con, "vendor=nvidia", "gpu=h200")
    with pytest.raises(QueryError, match="no concurrency level in common"):
        compare_on(con, "vendor=nvidia,concurrency=1", "vendor=amd,concurrency=4")
    # bad arguments fail before the store is opened
    with pytest.raises(ConfigError, match="--claim must be a positive ratio"):
        compare(fleet, load_prices(None), "vendor=nvidia", "vendor=amd", CompareOptions(claim=-1))
    with pytest.raises(ConfigError, match="tokens must be output or total"):
        compare(fleet, load_prices(None), "vendor=nvidia", "vendor=amd", CompareOptions(tokens="prompt"))
    with pytest.raises(ConfigError, match="unknown key"):
        compare(fleet, load_prices(None), "vendor=nvidia", "colour=red")


def test_runs_without_a_cost_are_left_out_with_a_note(tmp_path: Path) -> None:
    runs = [
        make_run(run_id="a1", gpu_vendor="nvidia"),
        make_run(run_id="a2", gpu_vendor="nvidia", hardware_key="x"),
        make_run(run_id="b1", gpu_vendor="amd"),
    ]
    for run in runs:
        write_results(tmp_path, run, [make_request(run_id=run.run_id, request_index=i) for i in range(3)])
    result = compare(tmp_path, make_prices(), "vendor=nvidia", "vendor=amd", CompareOptions(resamples=100))
    assert result.strata[0].a_runs == 1
    assert "1 run(s) of A left out, without a cost: hardware key 'x' is not in the price table" in result.notes
    assert not any(n.startswith("power basis differs") for n in result.notes)  # both sides estimated


def test_a_note_when_one_side_is_measured_and_the_other_estimated(fleet: Path) -> None:
    own = connect(fleet, load_prices(None), needs=compare_views(CostBasis(RentalTier.on_demand)))  # tco too
    try:
        freeze_views(own)
        # as if gpu-nv-1 had no valid telemetry: its power would be the price-table estimate (tco and cost_basis
        # both carry energy_valid; an owned comparison reads cost_basis', a rented one tco's)
        for view in ("tco", "cost_basis"):
            own.execute(
                f"CREATE OR REPLACE TEMP TABLE _frozen_{view} AS SELECT * REPLACE (host <> 'gpu-nv-1' AND "
                f"energy_valid AS energy_valid) FROM _frozen_{view}"
            )
        result = compare_on(own, "vendor=nvidia", "vendor=amd", CompareOptions(resamples=100))
    finally:
        own.close()
    assert "power basis differs: A price-table estimate, B measured" in " ".join(result.notes)


def test_an_owned_comparison_reads_view_tcos_columns_from_cost_basis(tmp_path: Path) -> None:
    """On the owned basis load_runs reads cost_basis alone (tco_scenarios computed once): the same rows as joining
    view tco, for priced, unpriced (a hardware key not in the price table) and failed runs; rented still joins tco."""
    runs = [
        make_run(run_id="a1", gpu_vendor="nvidia"),
        make_run(run_id="a2", gpu_vendor="nvidia", hardware_key="x"),
        make_run(run_id="b1", gpu_vendor="amd", site_key="nowhere"),
        make_run(run_id="b2", gpu_vendor="amd", status=RunStatus.failed, error="boom"),
    ]
    for run in runs:
        write_results(tmp_path, run, [make_request(run_id=run.run_id, request_index=i) for i in range(3)])
    own = connect(tmp_path, make_prices(rental={}), needs=compare_views(CostBasis(RentalTier.on_demand)))
    try:
        # the tco columns as view tco has them, beside macro candidate_runs' rows (on owned: from cost_basis)
        joined = (
            "SELECT c.* REPLACE (t.output_tok_s AS output_tok_s, t.purchase_usd IS NOT NULL AS has_hardware_price, "
            "t.pue IS NOT NULL AS has_site_price, t.ops_hours_per_month IS NOT NULL AS has_ops_price, "
            "t.energy_valid AS energy_valid) FROM candidate_runs($basis) AS c JOIN tco AS t USING (run_id) "
            "ORDER BY c.run_id"
        )
        # on owned, macro candidate_runs scans what cost_basis and run_summary scan, no more (view tco not computed)
        alone = (
            "SELECT * FROM runs AS r JOIN cost_basis AS c ON c.run_id = r.run_id AND c.basis = $basis "
            "JOIN run_summary AS s ON s.run_id = r.run_id"
        )
        scans = {}
        for basis in (OWNED, CostBasis(RentalTier.on_demand)):
            rows = load_runs(own, basis)
            assert sorted(rows, key=lambda r: r["run_id"]) == fetch_rows(
                own, joined, CandidateRun, {"basis": str(basis)}
            )
            assert [r["run_id"] for r in rows] == ["a1", "a2", "b1"]
            for name, sql in (("macro", "SELECT * FROM candidate_runs($basis)"), ("alone", alone)):
                plan = str(own.execute(f"EXPLAIN {sql}", {"basis": str(basis)}).fetchall())
                # scans of stored tables: a CTE_SCAN re-reads a result already computed (the CTEs of view
                # availability, which tco_scenarios joins, number differently in the two plans)
                scans[name, str(basis)] = plan.count("SCAN") - plan.count("CTE_SCAN")
        assert scans["macro", str(OWNED)] <= scans["alone", str(OWNED)], scans
        owned = {r["run_id"]: r for r in load_runs(own, OWNED)}
        assert [owned[k]["has_hardware_price"] for k in ("a1", "a2", "b1")] == [True, False, True]
        assert [owned[k]["has_site_price"] for k in ("a1", "a2", "b1")] == [True, True, False]
    finally:
        own.close()


def test_load_priced_reads_the_runs_load_runs_prices_with_their_figures(tmp_path: Path) -> None:
    """load_priced (the report's cost whiskers) reads views runs and cost_basis alone: per basis, exactly the runs
    load_runs has a cost for on it (priced ones, not unpriced or failed), oldest first, with the same figures; with
    ids, only those; a basis nothing is priced on is refused as load_runs refuses it."""
    runs = [
        make_run(run_id="a1", gpu_vendor="nvidia", started_ns=10**18),
        make_run(run_id="a2", gpu_vendor="nvidia", hardware_key="x", started_ns=10**18 + 1),
        make_run(run_id="b1", gpu_vendor="amd", concurrency=4, started_ns=10**18 + 2),
        make_run(run_id="b0", gpu_vendor="amd", started_ns=10**18 - 1),
        make_run(run_id="b2", gpu_vendor="amd", status=RunStatus.failed, error="boom"),
    ]
    for run in runs:
        write_results(tmp_path, run, [make_request(run_id=run.run_id, request_index=i) for i in range(3)])
    con = connect(tmp_path, make_prices(rental={}), needs=compare_views(CostBasis(RentalTier.on_demand)))
    try:
        bases = [OWNED, CostBasis(RentalTier.on_demand)]
        found = load_priced(con, bases)
        keys = ("run_id", "batch_id", "date", "concurrency", "output_tokens_per_usd", "total_tokens_per_usd")
        for basis in bases:
            want = [
                {k: v for k, v in r.items() if k in keys}
                for r in load_runs(con, basis)
                if r["output_tokens_per_usd"] is not None
            ]
            assert found[str(basis)] == want and len(want) == 3, basis
        assert [r["run_id"] for r in found["owned"]] == ["b0", "a1", "b1"]  # oldest first; a2 unpriced, b2 failed
        assert [r["run_id"] for r in load_priced(con, [OWNED], ["b1", "a2"])["owned"]] == ["b1"]
        with pytest.raises(ConfigError, match="has no priced run"):
            load_priced(con, [CostBasis(RentalTier.rental_1yr)])
    finally:
        con.close()


def test_compare_weighs_nights_not_runs(tmp_path: Path) -> None:
    # A: night 1 runs of 60 and 120 output tok/s (600 tokens in 10 s and 5 s), night 2 one of 30 (20 s):
    #    night-weighted (90 + 30) / 2 = 60 tok/s; a run-weighted mean would say (60 + 120 + 30) / 3 = 70
    write_nights(tmp_path, "ha", "nvidia", {"2023-11-14": [10, 5], "2023-11-15": [20]})
    # B: one run of 60 tok/s each night
    write_nights(tmp_path, "hb", "amd", {"2023-11-14": [10], "2023-11-15": [10]})
    (s,) = compare(tmp_path, make_prices(), "vendor=nvidia", "vendor=amd", CompareOptions(resamples=200)).strata
    assert (s.a_runs, s.a_nights, s.b_runs, s.b_nights) == (3, 2, 2, 2)
    assert (s.a_tok_s, s.b_tok_s) == pytest.approx((60.0, 60.0))
    # the same prices and the same night-weighted throughput: equally cost-efficient (run-weighted: 70 / 60 = 1.17)
    assert s.ratio == pytest.approx(1.0)
    # 865.70 USD/month for 60 tok/s x 3600 x 730 h x 0.5 = 78.84 M tokens: 10.98 USD per 1M on both sides
    assert round(s.a_usd_per_m, 2) == round(s.b_usd_per_m, 2) == 10.98
    assert round(s.a_usd_month, 2) == 865.70


def test_compare_refuses_runs_measured_from_different_placements(tmp_path: Path) -> None:
    near = make_run(run_id="a", host="ha", gpu_vendor="nvidia", hardware_key="test-hw", client_placement="loopback")
    far = make_run(
        run_id="b",
        host="hb",
        gpu_vendor="amd",
        hardware_key="test-hw",
        client_placement="network",
        rtt_p50_ns=2_400_000,
        engine_url="http://gpu-b.example.internal:8000",
    )
    old = make_run(run_id="c", host="hc", gpu_vendor="amd", hardware_key="test-hw")  # stored before placement was
    for run in (near, far, old):
        write_results(
            tmp_path, run, [make_request(run_id=run.run_id, host=run.host, request_index=i) for i in range(4)]
        )
    with pytest.raises(QueryError) as info:
        compare(tmp_path, make_prices(), "host=ha", "host=hb")
    assert "client_placement (where the load generator ran): A {loopback} vs B {network}" in str(info.value)
    allowed = compare(
        tmp_path, make_prices(), "host=ha", "host=hb", CompareOptions(allow_different=True, resamples=100)
    )
    assert allowed.differences == ("client_placement (where the load generator ran): A {loopback} vs B {network}",)
    # a row from before placement was recorded: its loopback engine URL says loopback, so it compares
    assert compare(tmp_path, make_prices(), "host=ha", "host=hc", CompareOptions(resamples=100)).differences == ()


def test_three_batches_on_one_date_are_three_nights(tmp_path: Path) -> None:
    # A: three nightly batches on 2023-11-14: b1 runs of 60 and 120 tok/s (night mean 90), b2 one of 30, b3 one of
    #    60: night-weighted (90 + 30 + 60) / 3 = 60 tok/s. By date it would be one night: (60+120+30+60) / 4 = 67.5
    write_nights(tmp_path, "ha", "nvidia", {"2023-11-14~b1": [10, 5], "2023-11-14~b2": [20], "2023-11-14~b3": [10]})
    write_nights(tmp_path, "hb", "amd", {"2023-11-14~b1": [10], "2023-11-14~b2": [10], "2023-11-14~b3": [10]})
    result = compare(tmp_path, make_prices(), "vendor=nvidia", "vendor=amd", CompareOptions(resamples=200))
    (s,) = result.strata
    assert (s.a_runs, s.a_nights, s.b_runs, s.b_nights) == (4, 3, 3, 3)
    assert s.a_tok_s == pytest.approx(60.0) and s.ratio == pytest.approx(1.0)
    assert "4 run(s) over 3 night(s) (nightly batches) on 1 UTC date(s)" in result.a_desc
    con = connect(tmp_path, make_prices(), needs={"platform_cost"})
    try:
        rows = con.execute("SELECT host, runs, nights, dates, output_tok_s FROM platform_cost ORDER BY host").fetchall()
    finally:
        con.close()
    assert [r[:4] for r in rows] == [("ha", 4, 3, 1), ("hb", 3, 3, 1)]
    assert rows[0][4] == pytest.approx(60.0)


def test_the_all_levels_interval_resamples_whole_nights(tmp_path: Path) -> None:
    # A's nights are good or bad at every level alike (the same window at c=1 and c=4); B is steady. One run of
    # one request per night and level, so the replicates vary only by which nights are drawn. Whole nights
    # drawn for all levels together: each replicate's ratio is the same at both levels, so the all-levels
    # interval is each level's interval. Levels resampled independently would average out and narrow it.
    windows = [10, 12, 8, 15, 9, 11, 20, 7]
    nights = {f"2023-11-{14 + i}": [w] for i, w in enumerate(windows)}
    for c in (1, 4):
        write_nights(tmp_path, "ha", "nvidia", nights, concurrency=c)
        write_nights(tmp_path, "hb", "amd", {night: [10] for night in nights}, concurrency=c)
    result = compare(tmp_path, make_prices(), "vendor=nvidia", "vendor=amd", CompareOptions(resamples=1000))
    one, four = result.strata
    assert (one.lo, one.hi) == pytest.approx((four.lo, four.hi))
    assert result.pooled is not None
    _, lo, hi = result.pooled
    assert (lo, hi) == pytest.approx((one.lo, one.hi))
    assert hi - lo > 0.2  # the nights do vary: a real interval, not a point


def test_night_draws_count_every_night_once_per_replicate_on_average() -> None:
    draws = night_draws(["n2", "n1", "n3", "n1"], 4000, np.random.default_rng(1))
    assert sorted(draws) == ["n1", "n2", "n3"]
    total = sum(draws.values())
    assert np.all(total == 3)  # each replicate draws as many nights as there are
    assert all(abs(float(d.mean()) - 1.0) < 0.05 for d in draws.values())
    again = np.random.default_rng(1).integers(0, 3, size=(3, 4000))  # the same draw, counted by hand
    for i, night in enumerate(["n1", "n2", "n3"]):
        assert draws[night].tolist() == (again == i).sum(axis=0).tolist()


def test_a_selection_bounds_its_concurrency_levels_only_where_every_match_is_at_them() -> None:
    from tcobench.tasks.analysis.compare.selection import parse_selection

    assert parse_selection("vendor=amd,concurrency=4|16").levels() == frozenset({4, 16})
    assert parse_selection("concurrency=1|4,concurrency=4|8").levels() == frozenset({4})  # all terms must hold
    assert parse_selection("vendor=amd").levels() is None  # unbounded
    assert parse_selection("concurrency=four").levels() is None  # no number: left to the matching


def test_the_level_prefilter_keeps_every_run_either_side_matches(tmp_path: Path) -> None:
    """load_runs reads only the levels the selections allow; what each side is, and its notes, stay the same as
    over every level (A has a level B lacks: it is named, not compared)."""
    for c in (1, 4, 16):
        write_nights(tmp_path, "ha", "nvidia", {"2023-11-14": [10], "2023-11-15": [12]}, concurrency=c)
        write_nights(tmp_path, "hb", "amd", {"2023-11-14": [11], "2023-11-15": [10]}, concurrency=c)
    bounded = compare(
        tmp_path,
        make_prices(),
        "vendor=nvidia,concurrency=1|4",
        "vendor=amd,concurrency=4",
        CompareOptions(resamples=200),
    )
    unbounded = compare(
        tmp_path,
        make_prices(),
        "vendor=nvidia,concurrency=1|4",
        "vendor=amd,concurrency=4|1|16",
        CompareOptions(resamples=200),
    )
    assert [s.concurrency for s in bounded.strata] == [4] and "concurrency 1 only in A: not compared" in bounded.notes
    assert [s.concurrency for s in unbounded.strata] == [1, 4]
    # the same figures (NaN where both have none: assert_equal takes NaN as equal to NaN)
    np.testing.assert_equal(
        astuple(bounded.strata[0]), astuple(next(s for s in unbounded.strata if s.concurrency == 4))
    )
    with pytest.raises(QueryError, match="no concurrency level in common"):
        compare(
            tmp_path,
            make_prices(),
            "vendor=nvidia,concurrency=1",
            "vendor=amd,concurrency=16",
            CompareOptions(resamples=200),
        )


def test_the_replicates_of_a_stretch_of_runs_are_each_runs_own_to_the_bit() -> None:
    """bootstrap's _all_replicates draws the normal approximation of consecutive runs in one call: the numbers are
    those of _run_replicates run after run from the same stream, whatever mix of runs (drawn one by one, normal,
    constant) comes in between."""
    gen = np.random.default_rng(5)

    def sample(i: int, n: int) -> RunSample:
        tokens, e2e = gen.integers(10, 60, n).astype(float), gen.uniform(0.5, 2.0, n)
        return RunSample(f"r{i}", f"n{i % 3}", float(gen.uniform(1e5, 2e5)), tokens, e2e)

    sizes = [150, 300, 1, 120, 5, 0, 200, 40, 100, 101, 2, 500]  # normal, constant (n < 2) and drawn runs mixed
    samples = [sample(i, n) for i, n in enumerate(sizes)] + [
        RunSample("z", "n0", 7.0, moments=Moments(0, 0, 0, 0, 0, 0))
    ]
    one_by_one = [_run_replicates(s, 300, rng) for rng in (np.random.default_rng(9),) for s in samples]
    batched = _all_replicates(samples, 300, np.random.default_rng(9))
    assert len(batched) == len(samples)
    for mine, reference in zip(batched, one_by_one, strict=True):
        assert np.array_equal(mine, reference)
    # the same stream afterwards: the batch took exactly the numbers the loop took
    after_loop = np.random.default_rng(9)
    for s in samples:
        _run_replicates(s, 300, after_loop)
    after_batch = np.random.default_rng(9)
    _all_replicates(samples, 300, after_batch)
    assert after_loop.integers(0, 2**62) == after_batch.integers(0, 2**62)


def test_compare_connects_with_every_view_and_macro_its_queries_name() -> None:
    """compare connects with COMPARE_VIEWS and what they build on only: every shipped view or macro named in the
    code of tasks/analysis/compare and tasks/analysis/history (their SQL) must be among them, or a query fails at run
    time (as
    goodput's night_weighted_mean did for runs with service levels)."""
    import tcobench.tasks.analysis.compare as package
    from tcobench.tasks.analysis import history
    from tcobench.tasks.analysis.compare.best import BEST_VIEWS
    from tcobench.tasks.analysis.compare.candidates import CANDIDATE_MACROS_WHEN_CALLED
    from tcobench.tasks.analysis.compare.comparison import compare_views
    from tcobench.tasks.analysis.compare.plan import PLAN_VIEWS
    from tcobench.tasks.store.query import _needed, sql_views

    folder = Path(package.__file__).parent
    strings = []  # the SQL lives in string literals; docstrings (prose) are left out
    # best.py's and plan.py's queries run on their own connections (BEST_VIEWS, PLAN_VIEWS), not compare's
    assert "frontier_run_points" in BEST_VIEWS and "capacity_plan" in PLAN_VIEWS
    own = {"best.py", "plan.py"}
    for path in [*sorted(p for p in folder.glob("*.py") if p.name not in own), Path(history.__file__)]:
        tree = ast.parse(path.read_text("utf-8"))
        scopes = [n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)]
        docs = {id(n.body[0].value) for n in scopes if n.body and isinstance(n.body[0], ast.Expr)}
        strings += [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
        ]
    # nightly_trend is history's view with costs; compare asks for none (detect_changes(costs=False) reads
    # trend_runs), so it need not be connected, and every test here that compares runs would fail if it were read.
    # "frontier" is a word of compare's messages ("has no frontier"); its queries read view frontier_points
    named = views_named(" ".join(strings)) - {"runs", "nightly_trend", "frontier"}
    defined = {name for name, _ in _needed(sql_views(), set(compare_views(CostBasis(RentalTier.on_demand))), set())}
    assert {"side_goodput", "night_weighted_mean", "trend_series", "trend_runs", "tco"} <= named
    assert "goodput" not in defined  # read by macro side_goodput only, defined with it when goodput is asked for
    assert "nightly_trend" not in defined  # not connected: compare reads no cost from it
    assert "frontier" not in defined and "frontier_points" in named  # the pareto flag is not read
    when_called = set(CANDIDATE_MACROS_WHEN_CALLED)  # defined by the function that calls it (define_needed)
    assert when_called <= named and not when_called & defined
    assert named <= defined | when_called, f"named in compare's SQL but not connected: {sorted(named - defined)}"
    # an owned comparison reads tco's columns from cost_basis (test_an_owned_comparison_reads_view_tcos_columns_...)
    assert set(compare_views(OWNED)) == set(compare_views(CostBasis(RentalTier.on_demand))) - {"tco"}


def test_compare_shows_carbon_beside_the_cost_and_no_downtime_without_a_nightly_history(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """The simulated fleet measured its energy and runs outside nightly cells: each side's carbon per 1M output
    tokens is the night-weighted mean of cost_basis' column over its runs; its downtime term is NaN (no history)."""
    rows = [r for r in load_runs(con, OWNED) if r["has_cost_basis"]]
    result = compare_on(con, "vendor=nvidia", "vendor=amd", CompareOptions(resamples=100))
    for s in result.strata:
        a = [r for r in rows if r["gpu_vendor"] == "nvidia" and r["concurrency"] == s.concurrency]
        b = [r for r in rows if r["gpu_vendor"] == "amd" and r["concurrency"] == s.concurrency]
        assert s.a_gco2e_per_m_output_tokens == pytest.approx(
            _night_weighted_by_hand(a, "gco2e_per_m_output_tokens"), rel=1e-12
        )
        assert s.b_gco2e_per_m_output_tokens == pytest.approx(
            _night_weighted_by_hand(b, "gco2e_per_m_output_tokens"), rel=1e-12
        )
        assert s.a_gco2e_per_m_output_tokens > 0 and s.b_gco2e_per_m_output_tokens > 0
        assert np.isnan(s.a_downtime_usd_per_m) and np.isnan(s.b_downtime_usd_per_m)
        # beside the cost, never in it: the terms still add up to the cost per 1M tokens
        assert sum(t.b_minus_a for t in s.terms) == pytest.approx(s.b_usd_per_m - s.a_usd_per_m)


def test_compare_shows_the_downtime_term_once_the_history_is_long_enough(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """14 nights of nightly cells, and one night where the AMD host's cell failed on the platform: its downtime term
    per 1M tokens is the view's monthly term x cost per 1M / monthly total; NVIDIA's, never down, is 0 (not NaN).
    With TCOBENCH_DOWNTIME_MIN_NIGHTS above the history, both are NaN again."""
    write_fleet(tmp_path, nights=14, concurrency=(4,), regression=None, requests=5, cells=True)
    down = make_run(
        run_id="gpu-amd-1-down",
        batch_id="gpu-amd-1-down",
        host="gpu-amd-1",
        cell="gpu-amd-1/c4",
        hardware_key="amd-mi300x",
        site_key="datacenter",
        ops_key="default",
        status=RunStatus.failed,
        error="amdgpu: GPU not found",
        failure_class=FailureClass.platform,
    )
    write_results(tmp_path, down, [])
    prices = load_prices(None)
    result = compare(tmp_path, prices, "vendor=nvidia", "vendor=amd", CompareOptions(resamples=100))
    (s,) = result.strata
    connection = connect(tmp_path, prices, needs={"tco"})
    try:
        # one figure a platform: its availability over the history, per host
        ((month,),) = connection.execute(
            "SELECT DISTINCT downtime_usd_month FROM tco WHERE hardware_key = 'amd-mi300x'"
        ).fetchall()
        nvidia = connection.execute("SELECT DISTINCT downtime_usd_month FROM tco WHERE gpu_vendor = 'nvidia'")
        assert nvidia.fetchall() == [(0.0,)]
    finally:
        connection.close()
    assert month > 0 and s.a_downtime_usd_per_m == 0.0
    # as each cost term: the side's cost per 1M tokens x the monthly term / the side's monthly total
    assert s.b_downtime_usd_per_m == pytest.approx(s.b_usd_per_m * month / s.b_usd_month, rel=1e-9)
    monkeypatch.setenv("TCOBENCH_DOWNTIME_MIN_NIGHTS", "100")
    again = compare(tmp_path, prices, "vendor=nvidia", "vendor=amd", CompareOptions(resamples=100))
    assert np.isnan(again.strata[0].a_downtime_usd_per_m) and np.isnan(again.strata[0].b_downtime_usd_per_m)
    assert again.strata[0].ratio == s.ratio  # the ratio never includes downtime
