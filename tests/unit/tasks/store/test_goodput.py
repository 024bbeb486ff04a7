"""Views goodput and sweep on test_tco's hand-worked run: every number written out here.

The run (tests/unit/tasks/store/test_tco.py): a 10 s window; 4 measured requests, 3 ok and 1 failed (HTTP 500):
  request 0: TTFT 100 ms, TPOT 10 ms (1.0 s / 100), gaps 10, 20, 30 ms, 101 output tokens
  request 1: TTFT 200 ms, TPOT 20 ms (4.0 s / 200), gap 40 ms,         201 output tokens
  request 2: TTFT 300 ms, TPOT 10 ms (2.97 s / 297), gap 50 ms,        298 output tokens
600 output tokens -> 60 output tok/s; owned cost 865.70 USD/month -> 10.98 USD per 1M output tokens
(865.70 / (60 x 3600 x 730 x 0.5) x 1e6 = 10.9805...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tcobench.schemas import WorkloadConfig
from tcobench.tasks.analysis.sweep import sweep_verdict
from tcobench.tasks.store.query import connect, views_named
from tcobench.tasks.store.store import write_results
from tests.unit.factories import T0_NS, make_prices, make_run
from tests.unit.tasks.store.test_tco import _requests


def goodput(tmp_path: Path, **slo: Any) -> dict[str, Any]:
    run = make_run(measure_start_ns=T0_NS + 5_000_000_000, measure_end_ns=T0_NS + 15_000_000_000, **slo)
    write_results(tmp_path, run, _requests())
    sql = "SELECT g.*, t.usd_per_m_output_tokens FROM goodput g JOIN tco t USING (run_id) WHERE g.basis = 'owned'"
    con = connect(tmp_path, make_prices(rental={}, latency_target={}), needs=views_named(sql))
    try:
        rows: list[dict[str, Any]] = con.sql(sql).to_arrow_table().to_pylist()
    finally:
        con.close()
    assert len(rows) == 1
    return rows[0]


def test_ttft_target_by_hand(tmp_path: Path) -> None:
    # TTFT <= 250 ms: requests 0 and 1 are good (100, 200 ms); 2 is not (300 ms); the failed one never is.
    # good = 2 of n = 4 -> good_fraction 0.5; quantile 0.9 -> slo_met false.
    # good output tokens 101 + 201 = 302 of 600 -> good_token_fraction 302 / 600; goodput 302 / 10 s = 30.2 tok/s.
    # cost per 1M good tokens = 10.9805... / (302 / 600) = 21.8155... USD
    row = goodput(tmp_path, slo_ttft_ms=250.0, slo_quantile=0.9)
    assert (row["n"], row["good"], row["good_fraction"], row["slo_met"]) == (4, 2, 0.5, False)
    assert row["good_output_tokens"] == 302 and row["goodput_tok_s"] == pytest.approx(30.2)
    assert row["good_token_fraction"] == pytest.approx(302 / 600)
    assert row["usd_per_m_good_tokens"] == pytest.approx(row["usd_per_m_output_tokens"] * 600 / 302)
    assert round(row["usd_per_m_good_tokens"], 2) == 21.82


def test_tpot_and_itl_targets_by_hand(tmp_path: Path) -> None:
    # TPOT <= 15 ms: requests 0 (10 ms) and 2 (10 ms) good, 1 (20 ms) not -> good 2 of 4, tokens 101 + 298 = 399.
    row = goodput(tmp_path, slo_tpot_ms=15.0, slo_quantile=0.5)
    assert (row["good"], row["good_fraction"], row["slo_met"], row["good_output_tokens"]) == (2, 0.5, True, 399)
    # ITL <= 25 ms at quantile 0.6: request 0 has 2 of 3 gaps within (10, 20; not 30): 2 >= 0.6 x 3 -> good;
    # request 1 (40 ms) and 2 (50 ms) not -> good 1 of 4, 101 tokens; 0.25 < 0.6 -> not met.
    row = goodput(tmp_path / "itl", slo_itl_ms=25.0, slo_quantile=0.6)
    assert (row["good"], row["good_fraction"], row["slo_met"], row["good_output_tokens"]) == (1, 0.25, False, 101)


def test_no_targets_no_verdict(tmp_path: Path) -> None:
    row = goodput(tmp_path)
    assert row["has_slo"] is False and row["slo_met"] is None
    assert row["good"] == 3  # every ok request is good when nothing is asked of it


def test_sweep_stops_when_the_gain_is_under_the_margin(tmp_path: Path) -> None:
    # Three levels of one sweep (same batch and config hash): 60 output tok/s at c=1 (test_tco's requests over 10 s),
    # then the same tokens over 8 s (75 tok/s: +25%) at c=2, then over 7.8 s (76.9 tok/s: +2.6%) at c=4.
    windows = {1: 10_000, 2: 8_000, 4: 7_800}  # ms
    for level, ms in windows.items():
        run_id = f"r{level}"
        run = make_run(
            run_id=run_id,
            concurrency=level,
            sweep_margin=0.05,
            sweep_stop_on_slo=True,
            measure_start_ns=T0_NS,
            measure_end_ns=T0_NS + ms * 1_000_000,
        )
        write_results(tmp_path, run, _requests(run_id))
    con = connect(tmp_path, make_prices(rental={}, latency_target={}), needs={"sweep"})
    rows = {r["concurrency"]: r for r in con.sql("SELECT * FROM sweep").to_arrow_table().to_pylist()}
    con.close()
    assert rows[1]["best_before_tok_s"] is None and rows[1]["stops_sweep"] is False
    assert rows[2]["gain"] == pytest.approx(0.25) and rows[2]["stops_sweep"] is False
    assert rows[4]["gain"] == pytest.approx(10_000 / 7_800 / 1.25 - 1) and rows[4]["stops_sweep"] is True
    assert "under the 5.0% margin" in rows[4]["reason"]
    workload = WorkloadConfig.model_validate_json('{"concurrency": [1, 2, 4, 8], "sweep": {"margin": 0.05}}')
    prices = make_prices(rental={}, latency_target={})
    assert sweep_verdict(tmp_path, prices, workload, ["r1", "r2"]) is None
    assert "concurrency 4" in (sweep_verdict(tmp_path, prices, workload, ["r1", "r2", "r4"]) or "")


def test_sweep_stops_when_the_slo_breaks(tmp_path: Path) -> None:
    run = make_run(run_id="r1", sweep_margin=0.0, sweep_stop_on_slo=True, slo_ttft_ms=150.0, slo_quantile=0.9)
    write_results(tmp_path, run, _requests("r1"))
    con = connect(tmp_path, make_prices(rental={}, latency_target={}), needs={"sweep"})
    (row,) = con.sql("SELECT * FROM sweep").to_arrow_table().to_pylist()
    con.close()
    assert row["slo_broken"] is True and row["reason"] == "concurrency 1 broke the SLO"
