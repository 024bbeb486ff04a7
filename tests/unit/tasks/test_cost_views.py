"""The analytics views (tcobench/sql/5x-8x) on test_tco's hand-worked run: every number written out here.

The run (tests/unit/tasks/test_tco.py): 10 s window, 3 ok measured requests (TTFT 100/200/300 ms; TPOT 10, 20,
10 ms; e2e 1 100/4 200/3 270 ms), 600 output and 60 prompt tokens -> 60 output tok/s, 66 total tok/s; no
telemetry (power is the price-table estimate); priced with make_prices(): 865.70 USD/month owned, 10.98 USD
per 1M output tokens (hardware 500.00 + power 65.70 + ops 200.00 + adaptation 100.00).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tcobench.tasks.prices import load_prices
from tcobench.tasks.query import connect, freeze_views
from tcobench.tasks.store import write_results

from ..factories import make_prices, make_run, write_fleet
from .test_tco import _requests


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    write_results(tmp_path, make_run(), _requests())
    connection = connect(tmp_path, make_prices(rental={}, latency_target={}))
    yield connection
    connection.close()


def _dicts(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = con.sql(sql).to_arrow_table().to_pylist()
    return rows


def test_sensitivity_hand_worked(con: duckdb.DuckDBPyConnection) -> None:
    rows = {(r["parameter"], r["value"]): r for r in _dicts(con, "SELECT * FROM sensitivity")}
    assert len(rows) == 5 + 4 + 5
    # utilisation 1.0: power 1 000 W x 1.5 x 730 / 1000 x 0.10 = 109.50; total 500 + 109.50 + 200 + 100 = 909.50;
    # tokens 60 x 3600 x 730 x 1.0 = 157 680 000 -> 909.50 / 157.68 = 5.7680... -> 5.77 USD per 1M
    full = rows[("utilisation", 1.0)]
    assert round(full["total_usd_month"], 2) == 909.50 and round(full["usd_per_m_output_tokens"], 2) == 5.77
    # lifetime 24 months: hardware 24 000 / 24 = 1 000; adaptation 4 800 / 24 = 200;
    # total 1 000 + 65.70 + 200 + 200 = 1 465.70 -> / 78.84 = 18.5908... -> 18.59
    short = rows[("lifetime_months", 24.0)]
    assert round(short["total_usd_month"], 2) == 1465.70 and round(short["usd_per_m_output_tokens"], 2) == 18.59
    # electricity x 2 (0.20 USD/kWh): power 131.40; total 931.40 -> / 78.84 = 11.8138... -> 11.81
    dear = rows[("kwh_usd", 0.2)]
    assert round(dear["usd_per_m_output_tokens"], 2) == 11.81
    # the unchanged point is the baseline itself
    same = rows[("utilisation", 0.5)]
    assert same["usd_per_m_output_tokens"] == pytest.approx(same["baseline_usd_per_m_output_tokens"])
    assert same["change_pct"] == pytest.approx(0.0, abs=1e-9)
    assert round(full["change_pct"], 1) == round((5.7680 / 10.9807 - 1) * 100, 1)  # -47.5 %


def test_cost_at_latency_target(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(), _requests())
    con = connect(tmp_path, make_prices(latency_target={"ttft_p90_ms": 250.0}))
    try:
        (strict,) = _dicts(con, "SELECT * FROM cost_at_latency_target")
    finally:
        con.close()
    # TTFT p90 280 ms > 250 ms: no run meets the target, the row stays with NULLs
    assert (strict["runs"], strict["runs_meeting"], strict["best_run_id"]) == (1, 0, None)
    assert strict["usd_per_m_output_tokens"] is None


def test_cost_at_latency_target_met(con: duckdb.DuckDBPyConnection) -> None:
    (row,) = _dicts(con, "SELECT * FROM cost_at_latency_target")
    # TTFT p90 = 280 ms <= 500; TPOT per request 10, 20, 10 ms -> p90 at position 1.8 of [10, 10, 20] = 18 ms <= 50
    assert (row["target"], row["runs_meeting"], row["best_run_id"]) == ("test-target", 1, "run0")
    assert row["ttft_p90_ms"] == pytest.approx(280.0) and row["tpot_p90_ms"] == pytest.approx(18.0)
    assert round(row["usd_per_m_output_tokens"], 2) == 10.98


def test_efficiency_estimate_and_record_card(con: duckdb.DuckDBPyConnection) -> None:
    (f,) = _dicts(con, "SELECT * FROM efficiency")
    # no telemetry: 1 000 W (price-table load) / 60 tok/s = 16.667 J per output token
    # electricity: 16.667 x 1.5 / 3.6e6 x 0.10 x 1e6 = 0.6944 USD per 1M output tokens
    assert f["energy_basis"] == "estimate: price-table load watts"
    assert f["j_per_output_token"] == pytest.approx(1000 / 60)
    assert round(f["electricity_usd_per_m_output_tokens"], 4) == 0.6944
    # tokens per USD: 78 840 000 / 865.70 = 91 070.81
    assert round(f["output_tokens_per_usd"], 2) == 91_070.81
    (card,) = _dicts(con, "SELECT * FROM record_card")
    assert card["gpu_model"] == "CPU: Test CPU"
    assert card["mean_tok_s"] == pytest.approx(125.0) and card["tok_s_source"] == "engine: eval_count / eval_duration"
    assert card["p50_latency_ms"] == pytest.approx(3270.0) and card["single_request_ms"] == pytest.approx(3270.0)
    assert card["adaptation_days"] == 6.0 and card["mean_power_w"] is None
    assert card["electricity_usd_per_output_token"] == pytest.approx(0.6944e-6, rel=1e-3)
    assert (card["requests_ok"], card["at_least_20"]) == (3, False)
    assert card["mean_input_tokens"] == pytest.approx(20.0)  # 60 prompt tokens / 3


def test_platform_cost_weighs_nights_equally_and_terms_add_up(tmp_path: Path) -> None:
    write_fleet(tmp_path, nights=2, concurrency=(4,), regression=None)
    con = connect(tmp_path, load_prices(None))
    try:
        freeze_views(con)
        rows = _dicts(con, "SELECT * FROM platform_cost WHERE basis = 'owned' ORDER BY host")
        per_run = _dicts(con, "SELECT r.host, r.date, c.output_tokens_per_usd FROM cost_basis AS c JOIN runs AS r "
                              "USING (run_id) WHERE basis = 'owned'")  # fmt: skip
    finally:
        con.close()
    assert [(r["host"], r["runs"], r["nights"]) for r in rows] == [("gpu-amd-1", 2, 2), ("gpu-nv-1", 2, 2)]
    for row in rows:
        mine = [r["output_tokens_per_usd"] for r in per_run if r["host"] == row["host"]]
        assert row["output_tokens_per_usd"] == pytest.approx(sum(mine) / len(mine))
        terms = sum(row[f"{t}_usd_per_m_output_tokens"] for t in ("capital", "power", "ops", "adaptation"))
        assert terms == pytest.approx(row["usd_per_m_output_tokens"])
        assert row["usd_per_m_output_tokens"] == pytest.approx(1e6 / row["output_tokens_per_usd"])
