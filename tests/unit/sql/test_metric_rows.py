"""Given / expect tests of macro metric_rows (tcobench/sql/macros/metric_rows.sql) over small in-memory tables: a
configuration's last night is its latest batch, its run at a level the latest of that batch; a target no point
reaches has no sample; a NULL figure has no sample; a run without a hardware key keeps its rows."""

from __future__ import annotations

import datetime as dt
from typing import Any

from tests.unit.sql.given_expect import run

COUNTS = ("cells", "platform_failures", "nights_scheduled")
CLASSES = ("platform", "engine", "harness", "infrastructure", "unknown")
AVAILABILITY: list[dict[str, Any]] = [  # another host's, no NULL sample: availability NULL
    {
        "scope": "host",
        "platform": "x",
        "host": "x",
        **dict.fromkeys(COUNTS, 1),
        **{f"cells_failed_{c}": 0 for c in CLASSES},
        "availability": None,
        "night_availability": 1.0,
    }
]


def _tables(runs: list[tuple[str, str, str | None, int, int, float | None]]) -> dict[str, Any]:
    """runs: (run_id, batch_id, hardware_key, concurrency, started minute, output_tok_s_per_gpu); one frontier
    point each, at 100 / concurrency tok/s per user, with 1 tok/s/GPU more than the run's figure."""
    summary = [
        {
            "run_id": r,
            "batch_id": b,
            "host": "h",
            "started": dt.datetime(2026, 1, 1, 0, s),
            "config_id": "cfg",
            "engine_name": "e",
            "model_name": "m",
            "workload": "w",
            "concurrency": c,
            "output_tok_s_per_gpu": t,
            "ttft_p50_ms": 100.0,
            "ttft_p90_ms": None,
            "tpot_p50_ms": 10.0,
            "tpot_p90_ms": 20.0,
        }
        for r, b, _, c, s, t in runs
    ]
    return {
        "run_summary": summary,
        "runs": [
            {"run_id": r, "batch_id": b, "host": "h", "hardware_key": k, "started_ns": s * 10**9, "status": "ok"}
            for r, b, k, _, s, _ in runs
        ],
        "energy": [{"run_id": r, "valid": False, "j_per_output_token": 9.0} for r, *_ in runs],
        "nightly_trend": [
            {
                "run_id": runs[0][0],
                "night": 1,
                "req_decode_tok_s_p50": 1.0,
                "prior_mean_decode_tok_s_p50": None,
                "decode_change_pct": None,
            }
        ],
        "frontier_points": [
            {
                "run_id": r,
                "basis": "owned",
                "interactivity": 100.0 / c,
                "output_tok_s_per_gpu": (t or 0.0) + 1,
                "usd_per_m_output_tokens": 10.0 / c,
            }
            for r, _, _, c, _, t in runs
        ],
        "availability": AVAILABILITY,
    }


def _rows(tables: dict[str, Any], targets: list[float]) -> list[dict[str, Any]]:
    return run("metric_rows", tables, "SELECT * FROM metric_rows($t)", {"t": targets})


def test_the_last_night_is_the_latest_batch_and_the_latest_run_of_each_level() -> None:
    tables = _tables(
        [
            ("old", "b1", "hw", 1, 1, 5.0),
            ("new-1", "b2", "hw", 1, 10, 7.0),
            ("new-1-again", "b2", "hw", 1, 11, 8.0),
            ("new-4", "b2", "hw", 4, 12, 20.0),
        ]
    )
    rows = _rows(tables, [30.0])
    tok_s = {r["concurrency"]: r["value"] for r in rows if r["metric"] == "tcobench_output_tokens_per_second_per_gpu"}
    assert tok_s == {"1": 8.0, "4": 20.0}  # b1's run is not the last night; the later repeat of level 1 wins
    at = [r for r in rows if r["metric"] == "tcobench_output_tokens_per_second_per_gpu_at_interactivity"]
    # points of b2 reaching 30 tok/s/user: level 1 (100) twice, not level 4 (25); the best of them
    assert [(r["target"], r["value"], r["concurrency"]) for r in at] == [("30.0", 9.0, None)]


def test_a_target_no_point_reaches_and_a_null_figure_have_no_sample() -> None:
    rows = _rows(_tables([("a", "b1", "hw", 2, 1, 4.0)]), [80.0])
    names = {r["metric"] for r in rows}
    assert not {n for n in names if n.endswith("_at_interactivity") or n.endswith("_at_interactivity_usd")}
    ttft = {r["quantile"]: r["value"] for r in rows if r["metric"] == "tcobench_ttft_seconds"}
    assert ttft == {"0.5": 0.1}  # the p90 is NULL in run_summary: no sample, not 0
    assert "tcobench_energy_per_output_token_joules" not in names  # invalid telemetry
    assert {r["help"] is not None for r in rows} == {True}
    assert [r["scope"] for r in rows if r["metric"] == "tcobench_night_availability_ratio"] == ["host"]
    assert "tcobench_availability_ratio" not in names


def test_a_run_without_a_hardware_key_keeps_its_rows_without_a_platform_label() -> None:
    rows = _rows(_tables([("a", "b1", None, 1, 1, 4.0)]), [20.0])
    cost = [r for r in rows if r["metric"] == "tcobench_cost_per_million_output_tokens_usd"]
    assert [(r["platform"], r["basis"], r["value"]) for r in cost] == [(None, "owned", 10.0)]
    runs = [r for r in rows if r["metric"] == "tcobench_last_night_runs"]
    assert [(r["platform"], r["status"], r["value"]) for r in runs] == [(None, "ok", 1.0)]
