"""Serving configurations as first-class (issue 40): one platform with two configurations whose frontiers cross
against a second platform, each simulated event by event (bench/batching_engine.py: ITL = a + b x streams ms).

A, NVIDIA H200 (an 8-GPU host): "tp1" ITL = 4 + 1.0 c on 1 GPU, measured 1-200 tok/s/user; "tp2" ITL = 8 + 0.2 c on
2 GPUs (tensor parallel 2), 74-122 tok/s/user. Per GPU, tp2 serves more below 93.75 tok/s/user and tp1 above it.
B, AMD MI300X: ITL = 5 + 0.8 c on 1 GPU. At 150 and 40 tok/s/user tp1 is the only configuration of A there; at 110
both reach and tp1 wins, at 75 both reach and tp2 wins."""

from __future__ import annotations

import json
from collections.abc import Iterator

import duckdb
import pytest

from tcobench.errors import QueryError
from tcobench.schemas import BestOptions, CompareOptions, CostBasis, RentalTier
from tcobench.tasks.analysis.compare import TargetRow, compare_on
from tcobench.tasks.analysis.compare.best import BEST_VIEWS, best_on
from tcobench.tasks.analysis.compare.comparison import compare_views
from tcobench.tasks.analysis.compare.document import comparison_document
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect
from tests.unit.factories import SimulatedConfig, write_configs

TP1 = SimulatedConfig("sim-nv", "nvidia", "H200", "nvidia-h200-sxm", 4.0, 1.0, 1, levels=(1, 2, 4, 8, 16, 32))
TP2 = SimulatedConfig(
    "sim-nv", "nvidia", "H200", "nvidia-h200-sxm", 8.0, 0.2, 2, tensor_parallel=2, levels=(1, 2, 4, 8, 16, 32)
)
AMD = SimulatedConfig("sim-amd", "amd", "MI300X", "amd-mi300x", 5.0, 0.8, 1, levels=(1, 2, 4, 8, 16, 32))
KEY = {name: f"{cfg.hardware_key} {cfg.serving().config_id}" for name, cfg in (("tp1", TP1), ("tp2", TP2))}
A, B = "vendor=nvidia", "vendor=amd"
RESAMPLES = 500


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    store = tmp_path_factory.mktemp("configs")
    write_configs(store, [TP1, TP2, AMD])
    # what compare_on (on either basis) and best_on read
    found = connect(store, load_prices(None), needs={*compare_views(CostBasis(RentalTier.on_demand)), *BEST_VIEWS})
    try:
        yield found
    finally:
        found.close()


def _at(con: duckdb.DuckDBPyConnection, a: str, targets: tuple[float, ...]) -> dict[float, TargetRow]:
    c = compare_on(con, a, B, CompareOptions(interactivity=targets, resamples=RESAMPLES))
    assert c.frontier is not None
    return {t.target: t for t in c.frontier.targets}


def test_each_configuration_has_its_own_curve(con: duckdb.DuckDBPyConnection) -> None:
    c = compare_on(con, A, B, CompareOptions(interactivity=(75.0,), resamples=RESAMPLES))
    assert c.frontier is not None
    curves = {cfg.key: cfg for cfg in c.frontier.a.configs}
    assert set(curves) == set(KEY.values())
    assert curves[KEY["tp1"]].low == pytest.approx(29.6, abs=0.5) and curves[KEY["tp1"]].high == pytest.approx(200)
    assert curves[KEY["tp2"]].low == pytest.approx(73.9, abs=0.5) and curves[KEY["tp2"]].high == pytest.approx(
        122.0, 0.01
    )
    assert "TP=2" in curves[KEY["tp2"]].label and "2 GPUs" in curves[KEY["tp2"]].label


def test_a_target_one_configuration_covers_alone_gives_the_single_configuration_ratio(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """The envelope where only tp1 reaches is tp1's curve: the ratio is the comparison of tp1 alone to the last bit.
    The interval is drawn from another position of the same seeded stream (tp2's draws come first on A), so its ends
    agree within the Monte Carlo noise of a 500-resample percentile interval: 1% (seeds 0-2 differed by at most
    0.25%)."""
    tp1_id = TP1.serving().config_id
    both, alone = _at(con, A, (150.0, 40.0)), _at(con, f"{A},config={tp1_id}", (150.0, 40.0))
    for target in (150.0, 40.0):
        row, single = both[target], alone[target]
        assert row.a_config_id == KEY["tp1"] and row.a_config_share == 1.0
        assert row.ratio == single.ratio
        assert row.ci_low == pytest.approx(single.ci_low, rel=0.01)
        assert row.ci_high == pytest.approx(single.ci_high, rel=0.01)


def test_where_both_cover_the_envelopes_configuration_wins_and_the_json_names_it(
    con: duckdb.DuckDBPyConnection,
) -> None:
    c = compare_on(con, A, B, CompareOptions(interactivity=(110.0, 75.0), resamples=RESAMPLES))
    doc = comparison_document(c)
    rows = {r["target"]: r for r in doc["interactivity"]}
    assert rows[110.0]["a_config_id"] == KEY["tp1"] and "TP=1" in rows[110.0]["a_config"]
    assert rows[75.0]["a_config_id"] == KEY["tp2"] and "TP=2" in rows[75.0]["a_config"]
    assert rows[75.0]["a_config_share"] > 0.9 and rows[110.0]["a_config_share"] > 0.9
    # the winner's ratio is its own comparison's, and it beats the other configuration's there
    tp2 = _at(con, f"{A},config={TP2.serving().config_id}", (75.0,))[75.0]
    tp1 = _at(con, f"{A},config={TP1.serving().config_id}", (75.0,))[75.0]
    assert tp2.ratio is not None and tp1.ratio is not None
    assert rows[75.0]["ratio"] == tp2.ratio > tp1.ratio
    verdict = next(v for v in doc["verdicts"] if "at 75 tok/s/user" in v)
    assert "(sim-nv; vllm 0.32.0, TP=2" in verdict and "is " in verdict
    assert json.dumps(doc)  # a JSON document, names and all


def test_configurations_are_never_averaged_together(con: duckdb.DuckDBPyConnection) -> None:
    """At equal concurrency each row pairs one configuration of A with B's, and its ratio is that pair's alone: a
    level's runs of both configurations averaged into one row (the old behaviour) fails here."""
    c = compare_on(con, A, B, CompareOptions(resamples=RESAMPLES, frontier=False))
    assert len(c.strata) == 12  # 6 levels x (tp1, tp2) x B's one configuration
    assert {(s.concurrency, s.a_config_id) for s in c.strata} == {(lv, k) for lv in TP1.levels for k in KEY.values()}
    for name in ("tp1", "tp2"):
        cfg = TP1 if name == "tp1" else TP2
        alone = compare_on(
            con, f"{A},config={cfg.serving().config_id}", B, CompareOptions(resamples=RESAMPLES, frontier=False)
        )
        ratios = {s.concurrency: s.ratio for s in alone.strata}
        for s in c.strata:
            if s.a_config_id == KEY[name]:
                assert s.ratio == pytest.approx(ratios[s.concurrency], rel=1e-12)
                assert s.pair is not None and "TP=" in s.pair


def test_a_two_gpu_configuration_on_an_eight_gpu_host_divides_by_two(con: duckdb.DuckDBPyConnection) -> None:
    row = con.execute(
        "SELECT s.gpus_counted, s.gpus_counted_source, s.output_tok_s_per_gpu, s.output_tok_s, t.gpus_used, t.units "
        "FROM run_summary AS s JOIN tco AS t USING (run_id) JOIN runs AS r USING (run_id) "
        "WHERE r.config_id = $id AND r.concurrency = 8 LIMIT 1",
        {"id": TP2.serving().config_id},
    ).fetchone()
    assert row is not None
    gpus, source, per_gpu, total, used, units = row
    assert (gpus, source, used, units) == (2, "gpus_given", 2, 2.0)  # not the host's 8
    assert per_gpu == pytest.approx(total / 2)


def test_best_ranks_the_configurations_and_names_the_one_to_deploy(con: duckdb.DuckDBPyConnection) -> None:
    found = best_on(con, A, B, BestOptions(interactivity=75.0, resamples=RESAMPLES))
    a, b = found.platforms
    assert [c.key for c in a.candidates] == [KEY["tp2"], KEY["tp1"]]  # cheapest per token first
    assert a.deploy is not None and a.deploy.key == KEY["tp2"] and (a.deploy.won or 0) > 0.9
    assert a.candidates[0].usd_per_m < a.candidates[1].usd_per_m  # type: ignore[operator]
    assert a.deploy.ci_low <= a.deploy.usd_per_m <= a.deploy.ci_high  # type: ignore[operator]
    assert b.deploy is not None and found.ratio is not None
    # the ratio of the deployable bests is compare's at that target (the envelope's)
    assert found.ratio[0] == pytest.approx(_at(con, A, (75.0,))[75.0].ratio, rel=1e-12)


def test_best_leaves_out_configurations_that_miss_the_slo(con: duckdb.DuckDBPyConnection) -> None:
    """TPOT p90 at 75 tok/s/user is about 13.3 ms for every configuration (the simulated engine has no spread): a
    bound above it keeps both, one below it leaves none to deploy."""
    kept = best_on(con, A, None, BestOptions(interactivity=75.0, slo_tpot_ms=20.0, resamples=RESAMPLES))
    assert kept.platforms[0].deploy is not None and all(c.meets_slo for c in kept.platforms[0].candidates)
    none = best_on(con, A, None, BestOptions(interactivity=75.0, slo_tpot_ms=5.0, resamples=RESAMPLES))
    assert none.platforms[0].deploy is None
    assert all(c.meets_slo is False and "TPOT p90" in (c.slo_note or "") for c in none.platforms[0].candidates)


def test_a_config_selection_that_matches_nothing_lists_the_configurations_there_are(
    con: duckdb.DuckDBPyConnection,
) -> None:
    with pytest.raises(QueryError) as raised:
        compare_on(con, f"{A},config=deadbeef", B, CompareOptions(resamples=RESAMPLES))
    message = str(raised.value)
    assert "selection A 'vendor=nvidia,config=deadbeef' matches no stored run" in message
    ids = sorted(cfg.serving().config_id for cfg in (TP1, TP2))
    assert f"configurations: {', '.join(ids)})" in message  # A's two, not B's
