"""Given / expect tests of the table macros Python calls (tcobench/sql/macros), over small in-memory tables."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from tcobench.schemas import RunStatus
from tests.unit.factories import make_run
from tests.unit.sql.given_expect import expect_rows, given, run


def _trend_row(run_id: str, series: str, night: int, status: str = "ok", usd: float | None = 1.0) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "series": series,
        "night": night,
        "status": status,
        "host": series,
        "model_name": "m",
        "workload": "w",
        "concurrency": 1,
        "usd_per_m_output_tokens": usd,
    }


TREND = [
    *(_trend_row(f"s1-{n}", "s1", n) for n in range(1, 7)),
    _trend_row("s1-x", "s1", 7, status="failed"),  # not a trend: not counted among the positions either
    *(_trend_row(f"s2-{n}", "s2", n) for n in range(1, 4)),
]


@pytest.mark.parametrize(
    ("ids", "before", "expected"),
    [
        (["s1-5"], 2, ["s1-3", "s1-4", "s1-5"]),
        (["s1-4", "s1-6"], 1, ["s1-3", "s1-4", "s1-5", "s1-6"]),
        (["s1-1"], 5, ["s1-1"]),
        (["s2-3", "s1-2"], 1, ["s1-1", "s1-2", "s2-2", "s2-3"]),
        (["s1-2", "s1-6"], 1, ["s1-1", "s1-2", "s1-5", "s1-6"]),  # runs far apart: not the runs between them
    ],
)
def test_history_points_around_reads_each_run_and_the_runs_before_it(
    ids: list[str], before: int, expected: list[str]
) -> None:
    names = sorted({i.split("-")[0] for i in ids})
    rows = run(
        "history_points_around",
        {"nightly_trend": TREND},
        "SELECT run_id FROM history_points_around('nightly_trend', $names, $ids, $before)",
        {"names": names, "ids": ids, "before": before},
    )
    assert [r["run_id"] for r in rows] == expected


def test_history_points_without_costs_adds_a_null_cost() -> None:
    uncosted = [{k: v for k, v in row.items() if k != "usd_per_m_output_tokens"} for row in TREND]
    rows = run("history_points", {"trend_runs": uncosted}, "SELECT * FROM history_points('trend_runs')")
    assert [r["run_id"] for r in rows] == [*(f"s1-{n}" for n in range(1, 7)), "s2-1", "s2-2", "s2-3"]
    assert {r["usd_per_m_output_tokens"] for r in rows} == {None}
    costed = run("history_points", {"nightly_trend": TREND}, "SELECT * FROM history_points('nightly_trend')")
    assert {r["usd_per_m_output_tokens"] for r in costed} == {1.0}


def _answer(run_id: str, prompt: str, prefix: str | None, ok: bool = True, seed: int = 1) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "prompt_sha256": prompt,
        "prompt_index": 0,
        "seed": seed,
        "output_prefix": prefix,
        "ok": ok,
        "date": "2026-01-01",
    }


def test_prefix_parity_pairs_the_prompts_both_sides_answered_with_the_same_seed() -> None:
    answers = [
        _answer("a1", "p1", "same"),
        _answer("b1", "p1", "same"),
        _answer("a1", "p2", "mine"),
        _answer("b1", "p2", "theirs"),
        _answer("a1", "p3", "only A"),
        _answer("a1", "p4", "x", seed=1),
        _answer("b1", "p4", "x", seed=2),  # another seed: no pair
        _answer("a1", "p5", "x"),
        _answer("b1", "p5", "x", ok=False),  # a failed answer: no pair
    ]
    sql = "SELECT * FROM prefix_parity(['a1'], ['b1'])"
    expect_rows(run("prefix_parity", {"request_metrics": answers}, sql), [{"pairs": 2, "same": 1}])
    dated = "SELECT * FROM prefix_parity(['a1'], ['b1'], first_date := '2026-02-01', last_date := '2026-02-28')"
    expect_rows(run("prefix_parity", {"request_metrics": answers}, dated), [{"pairs": 0, "same": 0}])


def _cost(run_id: str, basis: str, per_usd: float) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "basis": basis,
        "output_tokens_per_usd": per_usd,
        "total_tokens_per_usd": 2 * per_usd,
        "output_tok_s": 10.0,
        "total_tok_s": 20.0,
        "total_usd_month": 1.0,
        "capital_usd_month": 0.5,
        "power_usd_month": 0.25,
        "ops_usd_month": 0.25,
        "adaptation_usd_month": 0.0,
        "downtime_usd_month": 0.125,
        "gco2e_per_m_output_tokens": 300.0,
        "purchase_usd": 100.0,
        "pue": 1.2,
        "ops_hours_per_month": 1.0,
        "energy_valid": True,
    }


def _candidates() -> dict[str, Any]:
    """Runs r1 (c=1, chat, 2026-01-01), r2 (c=4, Code, 2026-01-02), r3 failed; r1 priced on owned and on-demand,
    r2 on owned only; view tco's row of r2 has no hardware price."""
    runs = given(
        "runs",
        make_run(run_id="r1", concurrency=1, workload="chat", date="2026-01-01", started_ns=1),
        make_run(run_id="r2", concurrency=4, workload="Code", date="2026-01-02", started_ns=2),
        make_run(run_id="r3", status=RunStatus.failed, error="boom", started_ns=3),
    )
    summary = [
        {"run_id": r, "isl_mean": 10.0, "osl_mean": 20.0, "config_id": "cfg", "gpus_counted": 1} for r in ("r1", "r2")
    ]
    tco = [
        {
            "run_id": "r1",
            "output_tok_s": 11.0,
            "purchase_usd": 1.0,
            "pue": 1.0,
            "ops_hours_per_month": 1.0,
            "energy_valid": False,
        },
        {
            "run_id": "r2",
            "output_tok_s": 12.0,
            "purchase_usd": None,
            "pue": 1.0,
            "ops_hours_per_month": 1.0,
            "energy_valid": True,
        },
    ]
    costs = [_cost("r1", "owned", 5.0), _cost("r2", "owned", 6.0), _cost("r1", "rented: on-demand", 3.0)]
    return {"runs": runs, "run_summary": summary, "tco": tco, "cost_basis": costs}


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("candidate_runs('owned')", [("r1", 5.0, 10.0, True), ("r2", 6.0, 10.0, True)]),
        ("candidate_runs('rented: on-demand')", [("r1", 3.0, 11.0, True), ("r2", None, 12.0, False)]),
        ("candidate_runs('owned', levels := [4])", [("r2", 6.0, 10.0, True)]),
        ("candidate_runs('owned', levels := [])", []),
        ("candidate_runs('owned', workloads := ['code'])", [("r2", 6.0, 10.0, True)]),
        ("candidate_runs('owned', first_date := '2026-01-02')", [("r2", 6.0, 10.0, True)]),
        ("candidate_runs('owned', last_date := '2026-01-01')", [("r1", 5.0, 10.0, True)]),
    ],
)
def test_candidate_runs_reads_the_tco_columns_from_the_basis_row_on_owned(
    call: str, expected: list[tuple[str, float | None, float, bool]]
) -> None:
    """(run, output tokens per USD, output_tok_s, has_hardware_price): on owned from view cost_basis' row, on a rented
    basis from view tco; failed runs never."""
    rows = run("candidate_runs", _candidates(), f"SELECT * FROM {call}")
    got = [(r["run_id"], r["output_tokens_per_usd"], r["output_tok_s"], r["has_hardware_price"]) for r in rows]
    assert got == expected


def test_left_out_runs_are_the_failed_and_interrupted() -> None:
    rows = run("left_out_runs", _candidates(), "SELECT * FROM left_out_runs()")
    expect_rows(rows, [{"status": "failed", "run_id": "r3", "isl_mean": None}])


def test_run_setups_has_engine_settings_and_every_setup_column() -> None:
    """Macro run_setups' columns are setup_table's: engine_settings and SETUP_COLUMNS' columns, in that order; each
    distinct setup once."""
    from tcobench.tasks.analysis.compare.setup_table import SETUP_COLUMNS

    runs = given("runs", make_run(run_id="x1"), make_run(run_id="x2"), make_run(run_id="y", engine_version="b9"))
    rows = run("run_setups", {"runs": runs}, "SELECT * FROM run_setups(['x1', 'x2', 'y'])")
    assert list(rows[0]) == ["engine_settings", *SETUP_COLUMNS.values()]
    assert sorted(r["engine_version"] for r in rows) == ["b1234", "b9"]


def test_selectable_runs_are_every_run_with_its_summary_or_nulls() -> None:
    """Every status; a run without a run_summary row (r3, and r4 though ok) has NULL there and is not summarised:
    candidate_runs leaves r4 out, and left_out_runs too (it is neither failed nor interrupted)."""
    given_tables = _candidates()
    given_tables["runs"] = pa.concat_tables(
        [given_tables["runs"], given("runs", make_run(run_id="r4", concurrency=1, started_ns=4))]
    )
    rows = run("selectable_runs", given_tables, "SELECT * FROM selectable_runs() ORDER BY started_ns")
    expect_rows(
        rows,
        [
            {"run_id": "r1", "status": "ok", "summarised": True, "isl_mean": 10.0, "config_id": "cfg"},
            {"run_id": "r2", "status": "ok", "summarised": True, "isl_mean": 10.0, "config_id": "cfg"},
            {"run_id": "r3", "status": "failed", "summarised": False, "isl_mean": None, "config_id": None},
            {"run_id": "r4", "status": "ok", "summarised": False, "isl_mean": None, "config_id": None},
        ],
    )
    candidates = run("candidate_runs", given_tables, "SELECT run_id FROM candidate_runs('owned')")
    assert [r["run_id"] for r in candidates] == ["r1", "r2"]
    left_out = run("left_out_runs", given_tables, "SELECT * FROM left_out_runs()")
    assert [r["run_id"] for r in left_out] == ["r3"]
    columns = run("candidate_runs", _candidates(), "SELECT * FROM candidate_runs('owned')")[0]
    assert {"status", "started_ns", "summarised"}.isdisjoint(columns) and "gpus_counted" in columns
    assert list(left_out[0])[:2] == ["status", "run_id"] and "summarised" not in left_out[0]


_PLAN_TABLES: dict[str, list[dict[str, Any]]] = {
    # two 2-GPU runs priced owned (1,000 and 1,200 USD/month: 1,100 on average) and on one rented tier (1,500); a
    # 4-GPU run r3 on another configuration's 8-GPU hosts, at 3,000 owned
    "run_summary": [{"run_id": r, "gpus_counted": 2} for r in ("r1", "r2")] + [{"run_id": "r3", "gpus_counted": 4}],
    "cost_basis": [
        {"run_id": "r1", "basis": "owned", "total_usd_month": 1000.0},
        {"run_id": "r2", "basis": "owned", "total_usd_month": 1200.0},
        {"run_id": "r1", "basis": "rented: x", "total_usd_month": 1500.0},
        {"run_id": "r2", "basis": "rented: x", "total_usd_month": None},  # no price: left out of the mean
        {"run_id": "r3", "basis": "owned", "total_usd_month": 3000.0},
    ],
}
_PLAN_COLUMNS = "basis, draw, replicas, gpus, hosts, headroom_at_peak, replica_usd_month, usd_month"


def _inventory(gpu_count: int | None, accelerators: int, ids: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    """Tables runs and hardware for capacity_plan's GPUs per host: the runs ``ids`` on one hardware row, each with
    the GPUs detected where it ran (``gpu_count``) and the row's declared ``accelerators``."""
    runs = [{"run_id": r, "hardware_key": "hw", "gpu_count": gpu_count} for r in ids]
    return {"runs": runs, "hardware": [{"key": "hw", "accelerators": accelerators}]}


def _plan_rows(gpu_count: int | None, per_gpu: list[float]) -> list[dict[str, Any]]:
    """capacity_plan over one 2-GPU configuration's two runs (r1, r2: _PLAN_TABLES) for 9,000 output tok/s with a
    busiest minute of 10,000."""
    return run(
        "capacity_plan",
        {**_PLAN_TABLES, **_inventory(gpu_count, 4, ("r1", "r2"))},
        f"SELECT {_PLAN_COLUMNS} FROM capacity_plan(['r1', 'r2'], ['c', 'c'], $per_gpu, $fleets, 9000.0, 10000.0)",
        {"per_gpu": per_gpu, "fleets": ["c"] * len(per_gpu)},
    )


def test_capacity_plan_sizes_whole_instances_and_hosts_and_prices_each_basis() -> None:
    # 9,000 / (1,000 x 2) = 4.5: 5 instances, 10 GPUs, ceil(10 / 8) = 2 hosts, 10 x 1,000 / 10,000 - 1 = 0 headroom;
    # draw 1 at 1,500 tok/s per GPU: 3 instances, 6 GPUs, 1 host, -10%; draw 2 (NaN: not reached) has no fleet
    rows = _plan_rows(8, [1000.0, 1500.0, float("nan")])
    owned = [(1100.0, 5500.0), (1100.0, 3300.0), (1100.0, None)]
    rented = [(1500.0, 7500.0), (1500.0, 4500.0), (1500.0, None)]
    fleet = [(5, 10, 2, 0.0), (3, 6, 1, -0.1), (None, None, None, None)]
    expect_rows(
        rows,
        [
            {
                "basis": basis,
                "draw": d,
                "replicas": r,
                "gpus": g,
                "hosts": h,
                "headroom_at_peak": hr,
                "replica_usd_month": one,
                "usd_month": usd,
            }
            for basis, costs in (("owned", owned), ("rented: x", rented))
            for d, ((r, g, h, hr), (one, usd)) in enumerate(zip(fleet, costs, strict=True))
        ],
    )


def test_capacity_plan_takes_the_price_tables_gpus_per_host_when_none_were_detected() -> None:
    rows = _plan_rows(None, [1000.0])  # gpu_count unknown: [hardware] accelerators, 4 GPUs a host
    assert [(r["gpus"], r["hosts"]) for r in rows if r["basis"] == "owned"] == [(10, 3)]


def test_capacity_plan_sizes_several_configurations_in_one_call_each_as_alone() -> None:
    """Two configurations in one call (their runs and draws interleaved in the lists): each gets the rows it gets in
    a call of its own, from its own runs and draws only."""
    tables = {**_PLAN_TABLES, **_inventory(8, 8, ("r1", "r2", "r3"))}

    def rows(ids: list[str], fleets: list[str], per_gpu: list[float], draws: list[str]) -> list[dict[str, Any]]:
        sql = f"SELECT fleet, {_PLAN_COLUMNS} FROM capacity_plan($ids, $fleets, $per_gpu, $draws, 9000.0, 10000.0)"
        return run("capacity_plan", tables, sql, {"ids": ids, "fleets": fleets, "per_gpu": per_gpu, "draws": draws})

    both = rows(["r3", "r1", "r2"], ["b", "a", "a"], [1000.0, 500.0, 1500.0, 700.0], ["a", "b", "a", "b"])
    alone_a = rows(["r1", "r2"], ["a", "a"], [1000.0, 1500.0], ["a", "a"])
    alone_b = rows(["r3"], ["b"], [500.0, 700.0], ["b", "b"])
    assert [r for r in both if r["fleet"] == "a"] == alone_a and [r for r in both if r["fleet"] == "b"] == alone_b
    # b: 9,000 / (500 x 4) = 4.5: 5 instances of 4 GPUs, 20 GPUs on 3 hosts of 8, 5 x 3,000 a month
    assert [(r["draw"], r["gpus"], r["hosts"], r["usd_month"]) for r in alone_b][0] == (0, 20, 3, 15000.0)
    assert {r["basis"] for r in alone_b} == {"owned"} and len(alone_a) == 4  # a: 2 bases x 2 draws


def _replay(run_id: str, hardware: str, scale: float | None, **changes: Any) -> dict[str, Any]:
    """A runs row of a replay of trace set 'h1' (a closed-loop run with load_mode 'closed' and no scale)."""
    return {
        "run_id": run_id,
        "hardware_key": hardware,
        "status": "ok",
        "load_mode": "replay",
        "prompt_set_hash": "h1",
        "seed": 42,
        "time_scale": scale,
        **changes,
    }


def _summary(run_id: str, config: str, gpus: int, tok_s_user: float, **changes: Any) -> dict[str, Any]:
    """A run_summary row: interactivity (median) tok_s_user, its p90 half of it, TTFT p90 100 ms, client fine."""
    return {
        "run_id": run_id,
        "config_id": config,
        "gpus_counted": gpus,
        "client_saturated": False,
        "interactivity": tok_s_user,
        "interactivity_p90": tok_s_user / 2,
        "ttft_p90_ms": 100.0,
        **changes,
    }


def test_replay_sets_lists_each_replayed_prompt_set_once() -> None:
    """Replays (load_mode 'replay' with a time scale) give their (prompt_set_hash, seed) once each; a closed-loop
    run and a replay stored before time_scale (NULL) give none."""
    runs = [
        _replay("r1", "hw", 1.0),
        _replay("r2", "hw", 0.5),  # the same set at another scale: one row
        _replay("r3", "hw", 1.0, prompt_set_hash="h2", seed=7),
        _replay("r4", "hw", None, prompt_set_hash="h3"),  # no time scale recorded
        _replay("r5", "hw", None, load_mode="closed", prompt_set_hash="h4"),
    ]
    rows = run("replay_sets", {"runs": runs}, "SELECT * FROM replay_sets()")
    expect_rows(rows, [{"prompt_set_hash": "h1", "seed": 42}, {"prompt_set_hash": "h2", "seed": 7}])


def test_replay_capacity_takes_the_fastest_met_replay_above_every_missed_one() -> None:
    """Target 50 tok/s/user, SLO TTFT p90 200 ms and TPOT p90 60 ms, busiest minute 1,000 tok/s.
    hw-a cfg-a (2 GPUs): met at scales 2, 1 and 0.25, missed at 0.5 (40 tok/s/user): 0.25 is faster than a miss,
    not trusted; its point is scale 1: 1,000 / (1 x 2) = 500 tok/s per GPU.
    hw-a cfg-b: a partial replay and a client-saturated one: none met, no point.
    hw-b cfg-c (1 GPU): missed at 1 (TTFT p90 300 ms), met at 4 (TPOT p90 1000 / 20 = 50 ms): 1,000 / 4 = 250.
    Not counted: another trace set, a closed-loop run, a replay without a scale, a run outside ids."""
    runs = [
        _replay("a1", "hw-a", 2.0),
        _replay("a2", "hw-a", 1.0),
        _replay("a3", "hw-a", 0.5),
        _replay("a4", "hw-a", 0.25),
        _replay("b1", "hw-a", 1.0, status="partial"),
        _replay("b2", "hw-a", 3.0),
        _replay("c1", "hw-b", 1.0),
        _replay("c2", "hw-b", 4.0),
        _replay("x1", "hw-b", 8.0, prompt_set_hash="other"),
        _replay("x2", "hw-b", None, load_mode="closed"),
        _replay("x3", "hw-b", None),
        _replay("x4", "hw-b", 16.0),
    ]
    summaries = [
        _summary("a1", "cfg-a", 2, 80.0),
        _summary("a2", "cfg-a", 2, 60.0),
        _summary("a3", "cfg-a", 2, 40.0),
        _summary("a4", "cfg-a", 2, 55.0),
        _summary("b1", "cfg-b", 1, 90.0),
        _summary("b2", "cfg-b", 1, 90.0, client_saturated=True),
        _summary("c1", "cfg-c", 1, 60.0, ttft_p90_ms=300.0),
        _summary("c2", "cfg-c", 1, 60.0, interactivity_p90=20.0),
        *(_summary(r, "cfg-c", 1, 90.0) for r in ("x1", "x2", "x3", "x4")),
    ]
    ids = ["a1", "a2", "a3", "a4", "b1", "b2", "c1", "c2", "x1", "x2", "x3"]
    rows = run(
        "replay_capacity",
        {"runs": runs, "run_summary": summaries},
        "SELECT * FROM replay_capacity($ids, ['h1'], 50.0, CAST(200.0 AS DOUBLE), CAST(60.0 AS DOUBLE), 1000.0)",
        {"ids": ids},
    )
    expect_rows(
        rows,
        [
            {
                "config": "hw-a cfg-a",
                "runs": ["a1", "a2", "a3", "a4"],
                "replays": 4,
                "met": 3,
                "replica_gpus": 2,
                "time_scale": 1.0,
                "tok_s_per_gpu": 500.0,
            },
            {"config": "hw-a cfg-b", "replays": 2, "met": 0, "time_scale": None, "tok_s_per_gpu": None},
            {"config": "hw-b cfg-c", "runs": ["c1", "c2"], "met": 1, "time_scale": 4.0, "tok_s_per_gpu": 250.0},
        ],
    )
    no_slo = run(
        "replay_capacity",
        {"runs": runs, "run_summary": summaries},
        "SELECT config, time_scale FROM replay_capacity($ids, ['h1'], 50.0, CAST(NULL AS DOUBLE), "
        "CAST(NULL AS DOUBLE), 1000.0)",
        {"ids": ids},
    )
    # without the SLO, hw-b cfg-c met at 1 too (interactivity 60): its point is scale 1
    assert [(r["config"], r["time_scale"]) for r in no_slo] == [
        ("hw-a cfg-a", 1.0),
        ("hw-a cfg-b", None),
        ("hw-b cfg-c", 1.0),
    ]
