"""The analytics views (tcobench/sql/5x-8x) on test_tco's hand-worked run: every number written out here.

The run (tests/unit/tasks/store/test_tco.py): 10 s window, 3 ok measured requests (TTFT 100/200/300 ms; TPOT 10, 20,
10 ms; e2e 1 100/4 200/3 270 ms), 600 output and 60 prompt tokens -> 60 output tok/s, 66 total tok/s; no
telemetry (power is the price-table estimate); priced with make_prices(): 865.70 USD/month owned, 10.98 USD
per 1M output tokens (hardware 500.00 + power 65.70 + ops 200.00 + adaptation 100.00).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect, freeze_views
from tcobench.tasks.store.store import write_results
from tests.unit.factories import make_prices, make_run, write_fleet, write_nights
from tests.unit.tasks.store.test_tco import _requests


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """Connected once: the tests that use it read it (a test's own temporary tables are dropped in its finally)."""
    tmp_path = tmp_path_factory.mktemp("cost-views")
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
    assert round(full["change_pct"], 1) == -47.5  # 5.7680 / 10.9807 = 0.52528...


def test_cost_at_latency_target(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(), _requests())
    con = connect(tmp_path, make_prices(latency_target={"ttft_p90_ms": 250.0}), needs={"cost_at_latency_target"})
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


def test_tco_scenarios_rows_and_the_views_that_select_them(con: duckdb.DuckDBPyConnection) -> None:
    # one run priced owned (baseline + 14 one-assumption scenarios) and at its one GPU-hour rate (baseline only)
    rows = _dicts(con, "SELECT basis, scenario, parameter, value, total_usd_month FROM tco_scenarios ORDER BY ALL")
    assert len(rows) == 1 + 14 + 1
    assert [(r["basis"], r["scenario"]) for r in rows if r["parameter"] is None] == [
        ("owned", "baseline"),
        ("rented: on-demand", "baseline"),
    ]
    # tco is the owned baseline, cost_basis the baselines, sensitivity the owned scenarios: no row computed twice
    (tco,) = _dicts(con, "SELECT total_usd_month, output_tokens_per_usd FROM tco")
    assert round(tco["total_usd_month"], 2) == 865.70 and round(tco["output_tokens_per_usd"], 2) == 91_070.81
    assert [r["basis"] for r in _dicts(con, "SELECT basis FROM cost_basis ORDER BY basis")] == [
        "owned",
        "rented: on-demand",
    ]
    (full,) = _dicts(con, "SELECT * FROM sensitivity WHERE parameter = 'utilisation' AND value = 1.0")
    # 157 680 000 tokens / 909.50 USD = 173 369.98 tokens per USD (909.50 x 173 370 = 157 680 015: 15 too many)
    assert round(full["output_tokens_per_usd"], 2) == 173_369.98


def test_night_weighting_macros_hand_worked(con: duckdb.DuckDBPyConnection) -> None:
    # night n1: runs 100 and 300 (mean 200); n2: 50. Night-weighted (200 + 50) / 2 = 125; run-weighted 150.
    pairs = "[(100.0, 'n1'), (300.0, 'n1'), (50.0, 'n2')]"
    assert con.sql(f"SELECT night_means({pairs}), night_weighted_mean({pairs})").fetchone() == ([200.0, 50.0], 125.0)
    # a NULL value is left out of its night; a night without any value is left out of the mean
    with_nulls = "[(NULL::DOUBLE, 'n1'), (300.0, 'n1'), (NULL::DOUBLE, 'n2')]"
    assert con.sql(f"SELECT night_means({with_nulls}), night_weighted_mean({with_nulls})").fetchone() == (
        [300.0, None],
        300.0,
    )


def test_the_table_form_of_the_night_weighting_gives_the_list_macros_figures(con: duckdb.DuckDBPyConnection) -> None:
    """Table macro night_weighted against night_weighted_mean / night_means per group: random groups of uneven
    nights and runs, NULL values and a group whose only night has no value."""
    rng = np.random.default_rng(5)
    rows = [
        (f"g{g}", float(v) if rng.random() > 0.1 else None, f"n{int(rng.integers(0, 9))}")
        for g in range(40)
        for v in rng.normal(100, 30, int(rng.integers(1, 30)))
    ]
    rows += [("empty", None, "n1")]
    con.register(
        "_pairs",
        pa.table(
            {
                "key": [r[0] for r in rows],
                "value": pa.array([r[1] for r in rows], pa.float64()),
                "night": [r[2] for r in rows],
            }
        ),
    )
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE _night_input AS SELECT * FROM _pairs")
        table = {r[0]: r[1:] for r in con.sql("SELECT * FROM night_weighted('_night_input')").fetchall()}
        lists = {
            r[0]: r[1:]
            for r in con.sql(
                "SELECT key, night_weighted_mean(list((value, night))), list_min(night_means(list((value, night)))), "
                "list_max(night_means(list((value, night)))), count(DISTINCT night), count(*) FROM _pairs "
                "WHERE value IS NOT NULL GROUP BY key"
            ).fetchall()
        }
    finally:
        con.execute("DROP TABLE IF EXISTS _night_input")
        con.unregister("_pairs")
    assert set(table) == set(lists) and len(lists) >= 35 and "empty" not in table
    for key, (mean, lowest, highest, nights, runs) in lists.items():
        assert table[key] == (pytest.approx(mean, rel=1e-12), lowest, highest, nights, runs)


def test_platform_cost_is_night_weighted_where_that_differs_from_run_weighted(tmp_path: Path) -> None:
    # 600 output tokens a run: night 1 windows 10 s and 5 s (60 and 120 tok/s), night 2 one of 20 s (30 tok/s)
    write_nights(tmp_path, "ha", "nvidia", {"2023-11-14": [10, 5], "2023-11-15": [20]})
    con = connect(tmp_path, make_prices(), needs={"platform_cost"})
    try:
        (row,) = _dicts(con, "SELECT * FROM platform_cost WHERE basis = 'owned'")
    finally:
        con.close()
    assert (row["runs"], row["nights"]) == (3, 2)
    # night means: (60 + 120) / 2 = 90 and 30 -> (90 + 30) / 2 = 60 tok/s (a run-weighted mean says 70)
    assert row["output_tok_s"] == pytest.approx(60.0)
    # every run costs 865.70 USD/month (price-table power); tokens per USD = tok/s x 3600 x 730 x 0.5 / 865.70,
    # linear in tok/s: the night-weighted 60 tok/s gives 78 840 000 / 865.70 = 91 070.81 (run-weighted: 106 249.28)
    assert round(row["output_tokens_per_usd"], 2) == 91_070.81
    assert round(row["usd_per_m_output_tokens"], 2) == 10.98 and round(row["total_usd_month"], 2) == 865.70
    # terms, each USD/month / 78.84 M tokens: hardware 500.00 -> 6.3420, power 65.70 -> 0.8333, ops 200 -> 2.5368,
    # adaptation 100 -> 1.2684 USD per 1M output tokens
    assert round(row["capital_usd_per_m_output_tokens"], 4) == 6.3420
    assert round(row["power_usd_per_m_output_tokens"], 4) == 0.8333
    assert round(row["ops_usd_per_m_output_tokens"], 4) == 2.5368
    assert round(row["adaptation_usd_per_m_output_tokens"], 4) == 1.2684


def test_platform_cost_groups_and_its_terms_add_up_on_the_fleet(tmp_path: Path) -> None:
    """On the simulated fleet (measured power, shipped prices): one group per platform, the four cost terms add up
    to the cost per 1M tokens, which is 1e6 / tokens per USD (the arithmetic itself: the hand-worked tests above)."""
    write_fleet(tmp_path, nights=2, concurrency=(4,), regression=None)
    con = connect(tmp_path, load_prices(None), needs={"platform_cost"})
    try:
        freeze_views(con)
        rows = _dicts(con, "SELECT * FROM platform_cost WHERE basis = 'owned' ORDER BY host")
    finally:
        con.close()
    assert [(r["host"], r["runs"], r["nights"]) for r in rows] == [("gpu-amd-1", 2, 2), ("gpu-nv-1", 2, 2)]
    for row in rows:
        terms = sum(row[f"{t}_usd_per_m_output_tokens"] for t in ("capital", "power", "ops", "adaptation"))
        assert terms == pytest.approx(row["usd_per_m_output_tokens"])
        assert row["usd_per_m_output_tokens"] == pytest.approx(1e6 / row["output_tokens_per_usd"])


def test_the_lists_form_of_the_night_weighting_is_the_table_form_position_by_position(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """Table macro night_weighted_lists against night_weighted over the same lists unnested: random groups of
    uneven nights and runs, a NULL element, a NULL list and a group whose only list is NULL."""
    rng = np.random.default_rng(11)
    rows: list[tuple[str, list[float | None] | None, str]] = [
        (f"g{g}", [float(x) for x in rng.normal(100, 30, 6)], f"n{int(rng.integers(0, 7))}")
        for g in range(30)
        for _ in range(int(rng.integers(1, 12)))
    ]
    first = rows[3][1]
    assert first is not None
    first[2] = None  # a NULL element: left out of its position
    rows += [("g0", None, "n1"), ("empty", None, "n2")]
    con.register(
        "_lists",
        pa.table(
            {
                "key": [r[0] for r in rows],
                "value": pa.array([r[1] for r in rows], pa.list_(pa.float64())),
                "night": [r[2] for r in rows],
            }
        ),
    )
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE _lists_input AS SELECT * FROM _lists")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _elements AS SELECT struct_pack(k := key, i := i) AS key, value, night "
            "FROM (SELECT key, generate_subscripts(value, 1) AS i, unnest(value) AS value, night FROM _lists)"
        )
        lists = {r[0]: r[1:] for r in con.sql("SELECT * FROM night_weighted_lists('_lists_input')").fetchall()}
        elements = {
            (r[0]["k"], r[0]["i"]): r[1:] for r in con.sql("SELECT * FROM night_weighted('_elements')").fetchall()
        }
        counts = dict(con.sql("SELECT key, count(*) FROM _lists WHERE value IS NOT NULL GROUP BY key").fetchall())
    finally:
        for table in ("_lists_input", "_elements"):
            con.execute(f"DROP TABLE IF EXISTS {table}")
        con.unregister("_lists")
    assert set(lists) == {f"g{g}" for g in range(30)} and "empty" not in lists
    for key, (mean, lowest, highest, nights, runs) in lists.items():
        assert len(mean) == len(lowest) == len(highest) == 6 and runs == counts[key]
        for i in range(6):
            e_mean, e_low, e_high, e_nights, _ = elements[(key, i + 1)]
            assert mean[i] == pytest.approx(e_mean, rel=1e-12)
            assert (lowest[i], highest[i]) == (pytest.approx(e_low, rel=1e-12), pytest.approx(e_high, rel=1e-12))
            assert e_nights <= nights
