"""plan (issue 45 item 4): the fleet each platform needs for a small trace, checked by hand against two simulated
platforms' stored runs (bench/batching_engine.py, as test_configurations: A, an H200 host of 8 GPUs with a TP=1 and a
TP=2 configuration; B, an MI300X host of 8 GPUs with one configuration).

The trace: three minutes of requests of 10,000 output tokens each, 60, 90 and 30 of them: 600,000, 900,000 and
300,000 output tokens per minute. quantile_cont at 0.95 of (300,000, 600,000, 900,000) is 600,000 + 0.9 x 300,000 =
870,000 per minute: 14,500 output tok/s to serve; the busiest minute is 15,000 tok/s, the mean 10,000 tok/s."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tcobench.errors import ConfigError, QueryError
from tcobench.schemas import PlanOptions, PlanRate, TraceConfig
from tcobench.tasks.analysis.compare.plan import PLAN_VIEWS, PlanResult, PlatformPlan, plan_document, plan_on
from tcobench.tasks.prices import load_prices
from tcobench.tasks.report.report import build_report
from tcobench.tasks.store.query import connect
from tcobench.tasks.workload.profile_trace import profile_trace
from tests.unit.factories import SimulatedConfig, write_configs, write_replay

TP1 = SimulatedConfig("sim-nv", "nvidia", "H200", "nvidia-h200-sxm", 4.0, 1.0, 1, levels=(1, 2, 4, 8, 16, 32))
TP2 = SimulatedConfig(
    "sim-nv", "nvidia", "H200", "nvidia-h200-sxm", 8.0, 0.2, 2, tensor_parallel=2, levels=(1, 2, 4, 8, 16, 32)
)
AMD = SimulatedConfig("sim-amd", "amd", "MI300X", "amd-mi300x", 5.0, 0.8, 1, levels=(1, 2, 4, 8, 16, 32))
A, B = "vendor=nvidia", "vendor=amd"
RESAMPLES = 300
NEED, PEAK = 870_000 / 60, 900_000 / 60  # output tok/s: the p95 minute's and the busiest minute's


def write_trace(path: Path, per_minute: tuple[int, ...] = (60, 90, 30), output: int = 10_000) -> Path:
    """A Mooncake trace: ``per_minute[m]`` requests in minute m, 0.5 s apart, ``output`` output tokens each."""
    lines = [
        json.dumps({"timestamp": m * 60_000 + j * 500, "input_length": 100, "output_length": output, "hash_ids": []})
        for m, n in enumerate(per_minute)
        for j in range(n)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("plan")
    write_configs(made, [TP1, TP2, AMD])
    return made


@pytest.fixture(scope="module")
def con(store: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    found = connect(store, load_prices(None), needs=_NEEDS)
    try:
        yield found
    finally:
        found.close()


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_trace(tmp_path_factory.mktemp("trace") / "m.jsonl")


# what plan_on reads (as plan() connects), and view tco (_owned_usd_month)
_NEEDS = {*PLAN_VIEWS, "tco"}


def _plan(con: duckdb.DuckDBPyConnection, trace: Path, b: str | None = B, **options: object) -> PlanResult:
    profile = profile_trace(TraceConfig(path=trace))
    return plan_on(con, profile, A, b, PlanOptions(resamples=RESAMPLES, **options))  # type: ignore[arg-type]


def _owned_usd_month(con: duckdb.DuckDBPyConnection, config_id: str) -> float:
    """One instance's monthly cost, read from view tco (the owned basis) for the configuration's runs."""
    row = con.execute(
        "SELECT avg(t.total_usd_month) FROM tco AS t JOIN runs AS r USING (run_id) WHERE r.config_id = $id",
        {"id": config_id},
    ).fetchone()
    assert row is not None and row[0] is not None
    return float(row[0])


def _check_by_hand(con: duckdb.DuckDBPyConnection, p: PlatformPlan, replica_gpus: int, need: float) -> float:
    """The platform's fleet against the arithmetic done here; returns its owned monthly cost."""
    assert p.tok_s_per_gpu is not None and p.replicas is not None and p.gpus is not None and p.hosts is not None
    y = p.tok_s_per_gpu.value
    replicas = math.ceil(need / (y * replica_gpus))
    assert (p.replica_gpus, p.host_gpus) == (replica_gpus, 8)
    assert (p.replicas.value, p.gpus.value) == (replicas, replicas * replica_gpus)
    assert p.hosts.value == math.ceil(replicas * replica_gpus / 8)
    assert p.headroom_at_peak is not None
    assert p.headroom_at_peak.value == pytest.approx(replicas * replica_gpus * y / PEAK - 1)
    owned = p.cost("owned")
    assert owned is not None and p.config_id is not None
    expected = replicas * _owned_usd_month(con, p.config_id.rsplit(" ", 1)[-1])
    assert owned.usd_month.value == pytest.approx(expected)
    for f in (p.tok_s_per_gpu, p.replicas, p.gpus, p.hosts, p.headroom_at_peak, owned.usd_month):
        assert f.ci_low is not None and f.ci_high is not None and f.ci_low <= f.ci_high  # every figure has its CI
    assert p.gpus.ci_low <= p.gpus.value <= p.gpus.ci_high  # type: ignore[operator]
    return owned.usd_month.value


def test_the_fleets_and_their_costs_by_hand(con: duckdb.DuckDBPyConnection, trace: Path) -> None:
    found = _plan(con, trace, interactivity=75.0)
    assert found.need_tok_s == pytest.approx(NEED) and found.peak_tok_s == pytest.approx(PEAK)
    a, b = found.platforms
    # at 75 tok/s/user A deploys TP=2 (2 GPUs an instance; test_configurations: tp2 wins there), B its one config;
    # the simulated engines give about 1,000 and 781 tok/s per GPU there (ITL = a + b x streams)
    assert a.config is not None and "TP=2" in a.config
    assert a.tok_s_per_gpu is not None and a.tok_s_per_gpu.value == pytest.approx(1000, rel=0.15)
    assert b.tok_s_per_gpu is not None and b.tok_s_per_gpu.value == pytest.approx(781, rel=0.15)
    cost_a = _check_by_hand(con, a, 2, NEED)
    cost_b = _check_by_hand(con, b, 1, NEED)
    assert found.ratio is not None and found.ratio.value == pytest.approx(cost_a / cost_b)
    assert found.ratio.ci_low is not None and found.ratio.ci_high is not None
    assert found.ratio.ci_low <= found.ratio.ci_high


def test_at_peak_and_mean_size_for_those_rates(con: duckdb.DuckDBPyConnection, trace: Path) -> None:
    peak = _plan(con, trace, interactivity=75.0, at=PlanRate.peak)
    mean = _plan(con, trace, interactivity=75.0, at=PlanRate.mean)
    assert peak.need_tok_s == pytest.approx(15_000) and mean.need_tok_s == pytest.approx(10_000)
    for result in (peak, mean):
        for p, gpus in zip(result.platforms, (2, 1), strict=True):
            _check_by_hand(con, p, gpus, result.need_tok_s)
    assert peak.platforms[0].headroom_at_peak is not None and peak.platforms[0].headroom_at_peak.value >= 0


def test_every_basis_of_the_price_table_is_priced(con: duckdb.DuckDBPyConnection, trace: Path) -> None:
    """Each basis's monthly cost is the instances times that basis's cost of one (view cost_basis)."""
    p = _plan(con, trace, interactivity=75.0).platforms[1]
    assert p.replicas is not None and len(p.costs) >= 2 and p.costs[0].basis == "owned"
    for c in p.costs:
        assert c.usd_month.value == pytest.approx(p.replicas.value * c.replica_usd_month)


def test_a_target_one_side_does_not_reach_plans_the_other_alone(con: duckdb.DuckDBPyConnection, trace: Path) -> None:
    found = _plan(con, trace, interactivity=190.0)  # A's TP=1 reaches 200 tok/s/user, B's about 170
    a, b = found.platforms
    assert a.gpus is not None and b.gpus is None and found.ratio is None
    assert b.reason is not None and "outside its frontier" in b.reason and "does not extrapolate" in b.reason


def test_a_target_outside_both_frontiers_is_one_line(con: duckdb.DuckDBPyConnection, trace: Path) -> None:
    with pytest.raises(QueryError, match=r"outside every configuration's frontier .*does not extrapolate") as caught:
        _plan(con, trace, interactivity=500.0)
    assert "\n" not in str(caught.value) and "--interactivity 500" in str(caught.value)


def test_a_trace_without_output_lengths_is_refused(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    texts = tmp_path / "t.jsonl"
    texts.write_text('{"timestamp": 0, "prompt": "a"}\n{"timestamp": 1000, "prompt": "b"}\n')
    with pytest.raises(ConfigError, match=r"t.jsonl: no output lengths recorded"):
        _plan(con, texts, interactivity=75.0)


def test_the_json_document_carries_every_figure_with_its_interval(con: duckdb.DuckDBPyConnection, trace: Path) -> None:
    doc = json.loads(json.dumps(plan_document(_plan(con, trace, interactivity=75.0))))
    assert (doc["at"], doc["trace"]["requests"], doc["trace"]["output_rate_peak"]) == ("p95", 180, 900_000)
    for side in doc["platforms"]:
        for name in ("tok_s_per_gpu", "replicas", "gpus", "hosts", "headroom_at_peak"):
            assert set(side[name]) == {"value", "ci_low", "ci_high"} and side[name]["ci_low"] is not None
        assert side["costs"][0]["basis"] == "owned" and side["costs"][0]["usd_month"]["ci_high"] is not None
    assert doc["ratio"]["value"] > 0


# -- plan from replayed runs (docs/plan.md#plan-from-replayed-runs) ---------------------------------------------------
# Replays of the same trace file (tests/unit/factories.write_replay): 20 requests of 101 output tokens, TTFT 100 ms,
# each decoding 100 tokens at the TPOT given, so a replay's interactivity is 1000 / TPOT ms.


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory, trace: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A (TP=1) and B measured by levels, and B's replays of the trace: at time scale 2 (half the trace's rate) at
    100 tok/s/user, at 0.5 (twice its rate) at 50 tok/s/user; and a replay of another trace file, which is not this
    traffic."""
    store = tmp_path_factory.mktemp("plan-replayed")
    write_configs(store, [TP1, AMD])
    write_replay(store, AMD, trace, 2.0, 10.0, "amd-replay-x2")
    write_replay(store, AMD, trace, 0.5, 20.0, "amd-replay-x05")
    other = write_trace(tmp_path_factory.mktemp("other") / "o.jsonl", per_minute=(60, 90, 31))
    write_replay(store, AMD, other, 0.1, 10.0, "amd-replay-other")
    found = connect(store, load_prices(None), needs=_NEEDS)
    try:
        yield found
    finally:
        found.close()


def test_a_replay_that_met_the_target_sizes_the_fleet_by_hand(replayed: duckdb.DuckDBPyConnection, trace: Path) -> None:
    """B's replay at time scale 2 met 75 tok/s/user: one GPU served the busiest minute at 15,000 / 2 = 7,500 tok/s,
    a capacity of 7,500 tok/s per GPU; the p95 minute's 14,500 tok/s need ceil(14,500 / 7,500) = 2 GPUs, 1 host,
    headroom 2 x 7,500 / 15,000 - 1 = 0. The replay at 0.5 (50 tok/s/user) missed the target; the other trace's
    replay at 0.1 is not this traffic. A has no replay: its frontier, with its CI."""
    found = _plan(replayed, trace, interactivity=75.0)
    a, b = found.platforms
    assert (a.source, b.source) == ("frontier", "replayed runs")
    assert a.ci_note is None and a.gpus is not None and a.gpus.ci_low is not None
    assert b.tok_s_per_gpu is not None and b.tok_s_per_gpu.value == pytest.approx(7_500)
    assert b.replicas is not None and b.gpus is not None and b.hosts is not None and b.headroom_at_peak is not None
    assert (b.replicas.value, b.gpus.value, b.hosts.value, b.time_scale) == (2, 2, 1, 2.0)
    assert b.headroom_at_peak.value == pytest.approx(0.0)
    owned = b.cost("owned")
    assert owned is not None
    assert owned.usd_month.value == pytest.approx(2 * _owned_usd_month(replayed, AMD.serving().config_id))
    for f in (b.tok_s_per_gpu, b.replicas, b.gpus, b.hosts, b.headroom_at_peak, owned.usd_month):
        assert (f.ci_low, f.ci_high) == (None, None)  # no interval is made up for a replay
    assert b.ci_note is not None and b.ci_note.startswith("no CI: a replay is one measurement")
    cost_a = a.cost("owned")
    assert found.ratio is not None and cost_a is not None
    assert found.ratio.value == pytest.approx(cost_a.usd_month.value / owned.usd_month.value)
    assert (found.ratio.ci_low, found.ratio.ci_high) == (None, None)
    assert any(n.startswith("B: sized from replayed runs") and "time scale 2 on 1 GPU" in n for n in found.notes)
    doc = json.loads(json.dumps(plan_document(found)))
    assert [p["source"] for p in doc["platforms"]] == ["frontier", "replayed runs"]
    assert doc["platforms"][1]["time_scale"] == 2.0 and doc["platforms"][1]["gpus"]["ci_low"] is None


def test_a_replay_that_missed_the_target_or_slo_falls_back_to_the_frontier(
    replayed: duckdb.DuckDBPyConnection, trace: Path
) -> None:
    """At 150 tok/s/user no replay met the target (100 and 50 tok/s/user), and at 75 with a TTFT SLO of 50 ms none
    met the SLO (TTFT 100 ms): B is sized from its frontier, with its CI, and a note says why."""
    for options in ({"interactivity": 150.0}, {"interactivity": 75.0, "slo_ttft_ms": 50.0}):
        found = _plan(replayed, trace, B, **options)
        b = found.platforms[1]
        assert b.source == "frontier"
        if "slo_ttft_ms" in options:  # no configuration of B's frontier meets that SLO either: no fleet at all
            assert b.gpus is None and b.reason == "no configuration meets the SLO at 75 tok/s/user"
        else:
            assert b.gpus is not None and b.gpus.ci_low is not None and b.reason is None
        assert any(n.startswith("B: 2 replayed run(s) of this trace, none met") for n in found.notes)
    # at 75 the replay at time scale 2 met the target at its median TPOT, but --interactivity-quantile 0.9 asks for
    # the slowest tenth's, which a replay is not judged at: the frontier again, and a note says so
    slowest = _plan(replayed, trace, interactivity=75.0, interactivity_quantile=0.9)
    assert [p.source for p in slowest.platforms] == ["frontier", "frontier"]
    assert any("judged at their median TPOT" in n and "quantile 0.9" in n for n in slowest.notes)


def test_replays_alone_plan_where_no_frontier_exists(tmp_path: Path) -> None:
    """Two replayed runs and nothing else (one level each: no frontier) plan the trace. A met 75 tok/s/user at time
    scale 7 on 2 GPUs (TP=2), B at time scale 1 on 1 GPU; sized for the busiest minute (--at peak, 15,000 tok/s):
    A: 15,000 / (7 x 2) = 1,071.4 tok/s per GPU, 15,000 / (1,071.4 x 2) = 7 instances (in floats
    7.000000000000001: capacity_plan rounds the quotient before its ceiling, so no eighth), 14 GPUs, 2 hosts;
    B met it at time scales 3 and 0.25 but not at 1: a faster replay that passed where a slower one failed is not
    trusted, so its capacity point is time scale 3: 15,000 / 3 = 5,000 tok/s per GPU, 3 instances of 1 GPU."""
    trace = write_trace(tmp_path / "m.jsonl")
    write_replay(tmp_path / "store", TP2, trace, 7.0, 10.0, "nv-replay")
    for scale, tpot_ms in ((3.0, 10.0), (1.0, 20.0), (0.25, 10.0)):
        write_replay(tmp_path / "store", AMD, trace, scale, tpot_ms, f"amd-replay-{scale:g}")
    con = connect(tmp_path / "store", load_prices(None), needs=_NEEDS)
    try:
        found = _plan(con, trace, interactivity=75.0, at=PlanRate.peak)
        with pytest.raises(QueryError, match=r"outside every configuration's frontier .* and no replay of the trace"):
            _plan(con, trace, interactivity=120.0)
    finally:
        con.close()
    a, b = found.platforms
    assert (a.source, b.source) == ("replayed runs", "replayed runs")
    assert a.tok_s_per_gpu is not None and a.tok_s_per_gpu.value == pytest.approx(15_000 / 14)
    assert a.replicas is not None and a.gpus is not None and a.hosts is not None
    assert (a.replicas.value, a.gpus.value, a.hosts.value) == (7, 14, 2)
    assert b.tok_s_per_gpu is not None and b.tok_s_per_gpu.value == pytest.approx(5_000) and b.time_scale == 3.0
    assert b.gpus is not None and b.gpus.value == 3 and found.ratio is not None and found.ratio.ci_low is None


# -- the report's section (tcobench report --trace) -----------------------------------------------------------------


def test_the_report_has_the_plans_figures_with_a_trace_and_no_section_without(
    store: Path, con: duckdb.DuckDBPyConnection, trace: Path
) -> None:
    """`tcobench report --trace --interactivity 75 --a A --b B` shows plan_on's fleets for the headline pair (the same
    figures and CIs as `tcobench plan`), and the ratio; without --trace there is no such section, nor its link."""
    found = _plan(con, trace, interactivity=75.0)
    options = {"a": A, "b": B, "interactivity": 75.0, "resamples": RESAMPLES}
    html = build_report(store, load_prices(None), trace=TraceConfig(path=trace), **options)  # type: ignore[arg-type]
    assert html.count('id="plan"') == 1 and '<a href="#plan">Capacity plan</a>' in html
    section = html.split('<h2 id="plan">Capacity plan</h2>', 1)[1].split("<h2", 1)[0]
    assert "180 requests over 3 min" in section and "14,500.0 tok/s (busiest minute 15,000.0 tok/s)" in section
    for p in found.platforms:
        assert p.gpus is not None and p.gpus.ci_low is not None and p.gpus.ci_high is not None
        owned = p.cost("owned")
        assert owned is not None and owned.usd_month.ci_low is not None and owned.usd_month.ci_high is not None
        row = section.split(f"<td>{p.side}</td>", 1)[1].split("</tr>", 1)[0]
        assert f">{p.gpus.value:,.0f}<br>" in row and f"{p.gpus.ci_low:,.0f} - {p.gpus.ci_high:,.0f}" in row
        assert f"${owned.usd_month.value:,.2f}<br>" in row
        assert f"${owned.usd_month.ci_low:,.2f} - ${owned.usd_month.ci_high:,.2f}" in row
        assert "<td>frontier</td>" in row
    assert found.ratio is not None and found.ratio.ci_low is not None and found.ratio.ci_high is not None
    assert f"<strong>{found.ratio.value:.2f}x</strong>" in section
    assert f"CI {found.ratio.ci_low:.2f}-{found.ratio.ci_high:.2f}" in section
    without = build_report(store, load_prices(None), **options)  # type: ignore[arg-type]
    assert 'id="plan"' not in without and "Capacity plan" not in without
    with pytest.raises(ConfigError, match=r"--trace .*: give --interactivity too"):
        build_report(store, load_prices(None), a=A, b=B, trace=TraceConfig(path=trace))
