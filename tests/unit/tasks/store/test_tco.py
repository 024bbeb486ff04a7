"""The run_summary and tco views on a hand-worked example: every number is written out here.

One run, a 10 s measured window, three ok measured requests, one failed measured request and one
warm-up request (the last two must not count), priced with a small custom table (tests/unit/factories.py):

    hardware test-hw: purchase 20 000 USD, server share 4 000 USD, 48 months, 1 000 W load, 200 W idle,
                      6 adaptation days
    site test-site:   0.10 USD/kWh, PUE 1.5
    ops test-ops:     2 h/month at 100 USD/h; 800 USD per engineer day
    run:              utilisation 0.5
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tcobench.schemas import Phase, RequestRecord, RunStatus, TelemetryRecord
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import write_results
from tests.unit.factories import T0_NS, make_prices, make_request, make_run, make_telemetry

MS = 1_000_000  # ns per ms


def _requests(run_id: str = "run0") -> list[RequestRecord]:
    return [
        # ok: 10 prompt + 101 output tokens; decode 1.0 s -> (101-1)/1.0 = 100 tok/s, TPOT 10 ms
        make_request(
            run_id=run_id,
            request_index=0,
            ttft_ns=100 * MS,
            e2e_ns=1_100 * MS,
            decode_ns=1_000 * MS,
            prompt_tokens=10,
            output_tokens=101,
            chunks=4,
            itl_ns=[10 * MS, 20 * MS, 30 * MS],
            server_eval_count=100,
            server_eval_ns=800 * MS,  # 100 / 0.8 s = 125 tok/s (engine clock)
        ),
        # ok: 20 prompt + 201 output tokens; decode 4.0 s -> 200/4.0 = 50 tok/s, TPOT 20 ms
        make_request(
            run_id=run_id,
            request_index=1,
            ttft_ns=200 * MS,
            e2e_ns=4_200 * MS,
            decode_ns=4_000 * MS,
            prompt_tokens=20,
            output_tokens=201,
            chunks=2,
            itl_ns=[40 * MS],
        ),
        # ok: 30 prompt + 298 output tokens; decode 2.97 s -> 297/2.97 = 100 tok/s, TPOT 10 ms
        make_request(
            run_id=run_id,
            request_index=2,
            ttft_ns=300 * MS,
            e2e_ns=3_270 * MS,
            decode_ns=2_970 * MS,
            prompt_tokens=30,
            output_tokens=298,
            chunks=2,
            itl_ns=[50 * MS],
        ),
        # failed measured request: counted in n and errors, in no latency or token figure
        make_request(
            run_id=run_id,
            request_index=3,
            ttft_ns=5_000 * MS,
            e2e_ns=None,
            decode_ns=None,
            prompt_tokens=None,
            output_tokens=None,
            chunks=1,
            itl_ns=[999 * MS],
            http_status=500,
            error="HTTP 500",
        ),
        # warm-up: ignored entirely
        make_request(
            run_id=run_id,
            phase=Phase.warmup,
            request_index=0,
            ttft_ns=9_000 * MS,
            e2e_ns=9_999 * MS,
            prompt_tokens=1_000,
            output_tokens=1_000,
            itl_ns=[5_000 * MS],
        ),
    ]


def _row(con: duckdb.DuckDBPyConnection, view: str, run_id: str = "run0") -> dict[str, Any]:
    cursor = con.execute(f"SELECT * FROM {view} WHERE run_id = ?", [run_id])
    names = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    assert len(rows) == 1, rows
    return dict(zip(names, rows[0], strict=True))


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """Connected once: the tests that use it only read it."""
    tmp_path = tmp_path_factory.mktemp("tco")
    # measured window: measure_end - measure_start = 10 000 000 000 ns = 10 s exactly
    run = make_run(measure_start_ns=T0_NS + 5_000_000_000, measure_end_ns=T0_NS + 15_000_000_000, utilisation=0.5)
    write_results(tmp_path, run, _requests())
    connection = connect(tmp_path, make_prices())
    yield connection
    connection.close()


def test_run_summary_counts_and_percentiles(con: duckdb.DuckDBPyConnection) -> None:
    s = _row(con, "run_summary")
    assert (s["n"], s["errors"], s["ok"]) == (4, 1, 3)
    # TTFT of ok requests: 100, 200, 300 ms. quantile_cont at position (3-1)*q:
    # p50 -> pos 1.0 -> 200; p90 -> pos 1.8 -> 200 + 0.8*100 = 280; p99 -> pos 1.98 -> 200 + 0.98*100 = 298
    assert (s["ttft_p50_ms"], s["ttft_p90_ms"], s["ttft_p99_ms"]) == pytest.approx((200.0, 280.0, 298.0))
    # ITL gaps of ok requests, pooled: 10, 20, 30, 40, 50 ms (not 999 of the failed one, not 5000 of the warm-up)
    # p50 -> pos 2.0 -> 30; p90 -> pos 3.6 -> 40 + 0.6*10 = 46; p99 -> pos 3.96 -> 40 + 0.96*10 = 49.6
    assert (s["itl_p50_ms"], s["itl_p90_ms"], s["itl_p99_ms"]) == pytest.approx((30.0, 46.0, 49.6))
    # E2E sorted: 1100, 3270, 4200 ms; p50 = 3270; p90 = 3270 + 0.8*930 = 4014; p99 = 3270 + 0.98*930 = 4181.4
    assert (s["e2e_p50_ms"], s["e2e_p90_ms"], s["e2e_p99_ms"]) == pytest.approx((3270.0, 4014.0, 4181.4))
    # TPOT per request: 10, 20, 10 ms -> mean 40/3 = 13.333 ms
    assert s["tpot_mean_ms"] == pytest.approx(40 / 3)
    # client decode rate per request: 100, 50, 100 tok/s -> mean 250/3 = 83.333, median 100
    assert s["req_decode_tok_s_mean"] == pytest.approx(250 / 3)
    assert s["req_decode_tok_s_p50"] == pytest.approx(100.0)
    # server decode rate: only request 0 reports it: 125 tok/s
    assert (s["server_decode_tok_s_mean"], s["server_decode_tok_s_p50"]) == pytest.approx((125.0, 125.0))


def test_request_metrics_hand_worked(con: duckdb.DuckDBPyConnection) -> None:
    cursor = con.execute(
        "SELECT phase, request_index, measured, ok, total_tokens, decode_tokens, tpot_ns, decode_tok_s, "
        "server_decode_tok_s FROM request_metrics ORDER BY phase, request_index"
    )
    rows = cursor.fetchall()
    assert [r[:4] for r in rows] == [
        ("measure", 0, True, True),
        ("measure", 1, True, True),
        ("measure", 2, True, True),
        ("measure", 3, True, False),  # failed: measured, not ok
        ("warmup", 0, False, False),  # warm-up: never ok
    ]
    # request 0: 10 + 101 = 111 tokens; 100 decoded after the first over 1.0 s: TPOT 10 ms = 1e7 ns, 100 tok/s;
    # the engine: 100 tokens / 0.8 s = 125 tok/s
    assert rows[0][4:] == (111, 100, 10_000_000.0, 100.0, 125.0)
    # request 1: 20 + 201 = 221; 200 over 4.0 s: TPOT 20 ms, 50 tok/s; request 2: 30 + 298 = 328; 297 over 2.97 s
    assert rows[1][4:8] == (221, 200, 20_000_000.0, 50.0) and rows[1][8] is None
    assert rows[2][4:6] == (328, 297) and rows[2][6] == pytest.approx(10_000_000.0) and rows[2][7] == pytest.approx(100)
    # the failed request counted no tokens and has no decode time: every derived figure is NULL
    assert rows[3][4:] == (None, None, None, None, None)


def test_run_summary_tpot_percentiles(con: duckdb.DuckDBPyConnection) -> None:
    s = _row(con, "run_summary")
    # TPOT of ok requests sorted: 10, 10, 20 ms; p50 -> pos 1.0 -> 10; p90 -> pos 1.8 -> 10 + 0.8 x 10 = 18;
    # p99 -> pos 1.98 -> 10 + 0.98 x 10 = 19.8
    assert (s["tpot_p50_ms"], s["tpot_p90_ms"], s["tpot_p99_ms"]) == pytest.approx((10.0, 18.0, 19.8))


def test_run_summary_throughput(con: duckdb.DuckDBPyConnection) -> None:
    s = _row(con, "run_summary")
    assert s["prompt_tokens"] == 10 + 20 + 30 == 60
    assert s["output_tokens"] == 101 + 201 + 298 == 600
    assert s["measure_s"] == 10.0
    assert s["output_tok_s"] == pytest.approx(600 / 10)  # 60 tok/s
    assert s["total_tok_s"] == pytest.approx((60 + 600) / 10)  # 66 tok/s
    assert str(s["started"]) == "2023-11-14 22:13:20"  # T0_NS as a UTC timestamp
    assert s["status"] == RunStatus.ok.value


def test_run_summary_cached_share(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    # no request reports cached tokens: NULL, not 0 (unreported is not "nothing cached")
    s = _row(con, "run_summary")
    assert s["cached_tokens"] is None and s["cached_share"] is None
    # requests 0 and 2 report 4 and 30 cached prompt tokens, request 1 does not; the failed one's 99 and the
    # warm-up's 500 do not count: 4 + 30 = 34 of 10 + 20 + 30 = 60 prompt tokens -> 34 / 60 = 0.5667
    cached = {(Phase.measure, 0): 4, (Phase.measure, 2): 30, (Phase.measure, 3): 99, (Phase.warmup, 0): 500}
    requests = [
        r.model_copy(update={"cached_tokens": cached.get((r.phase, r.request_index))}) for r in _requests("run1")
    ]
    run = make_run(run_id="run1", measure_start_ns=T0_NS, measure_end_ns=T0_NS + 10_000_000_000)
    write_results(tmp_path / "cached", run, requests)
    other = connect(tmp_path / "cached", make_prices(), needs={"run_summary"})
    try:
        s = _row(other, "run_summary", "run1")
    finally:
        other.close()
    assert s["cached_tokens"] == 34 and s["cached_share"] == pytest.approx(34 / 60)


def test_tco_hand_worked(con: duckdb.DuckDBPyConnection) -> None:
    t = _row(con, "tco")
    # assumptions shown next to the numbers
    assert (t["hardware_key"], t["utilisation"], t["hours_per_month"]) == ("test-hw", 0.5, 730.0)
    assert (t["purchase_usd"], t["server_share_usd"], t["lifetime_months"]) == (20_000.0, 4_000.0, 48)
    assert (t["pue"], t["kwh_usd"], t["ops_hours_per_month"], t["hourly_usd"]) == (1.5, 0.10, 2.0, 100.0)
    assert (t["adaptation_days"], t["daily_usd"]) == (6.0, 800.0)
    assert t["power_basis"] == "estimate: price-table load/idle watts"

    # hardware: (20 000 + 4 000) / 48 months = 500.00 USD/month
    hardware_usd_month = 500.00
    # power: 0.5 * 1 000 W + (1 - 0.5) * 200 W = 600 W
    power_w = 600.0
    # energy: 600 W * 1.5 PUE * 730 h / 1000 = 657 kWh/month
    energy_kwh_month = 657.0
    # power cost: 657 kWh * 0.10 USD/kWh = 65.70 USD/month
    power_usd_month = 65.70
    # ops: 2 h * 100 USD/h = 200.00 USD/month
    ops_usd_month = 200.00
    # adaptation: 6 days * 800 USD/day / 48 months = 4 800 / 48 = 100.00 USD/month
    adaptation_usd_month = 100.00
    # total: 500 + 65.70 + 200 + 100 = 865.70 USD/month
    total_usd_month = 865.70
    # output tokens: 60 tok/s * 3600 s/h * 730 h * 0.5 = 78 840 000 tokens/month
    output_tokens_month = 78_840_000.0
    # all tokens: 66 tok/s * 3600 * 730 * 0.5 = 86 724 000 tokens/month
    total_tokens_month = 86_724_000.0
    # 865.70 USD / 78.84 M tokens = 10.98047... -> 10.98 USD per 1M output tokens
    usd_per_m_output_tokens = 10.98
    # 865.70 USD / 86.724 M tokens = 9.98224... -> 9.98 USD per 1M tokens (prompt + output)
    usd_per_m_total_tokens = 9.98

    assert round(t["hardware_usd_month"], 2) == hardware_usd_month
    assert t["power_w"] == pytest.approx(power_w)
    assert t["energy_kwh_month"] == pytest.approx(energy_kwh_month)
    assert round(t["power_usd_month"], 2) == power_usd_month
    assert round(t["ops_usd_month"], 2) == ops_usd_month
    assert round(t["adaptation_usd_month"], 2) == adaptation_usd_month
    assert round(t["total_usd_month"], 2) == total_usd_month
    assert t["output_tokens_month"] == pytest.approx(output_tokens_month)
    assert t["total_tokens_month"] == pytest.approx(total_tokens_month)
    assert round(t["usd_per_m_output_tokens"], 2) == usd_per_m_output_tokens
    assert round(t["usd_per_m_total_tokens"], 2) == usd_per_m_total_tokens
    # raw USD stays unrounded DOUBLE in the view
    assert t["usd_per_m_output_tokens"] == pytest.approx(865.70 / 78.84)


def test_tco_is_null_without_tokens_and_null_prices_for_unknown_keys(tmp_path: Path) -> None:
    failed = make_run(run_id="failed", status=RunStatus.failed, error="engine died")
    write_results(tmp_path, failed, [make_request(run_id="failed", error="refused", output_tokens=None)])
    zero_window = make_run(run_id="zero", measure_start_ns=T0_NS, measure_end_ns=T0_NS)
    write_results(tmp_path, zero_window, [make_request(run_id="zero")])
    unpriced = make_run(run_id="unpriced", hardware_key="not-in-table")
    write_results(tmp_path, unpriced, [make_request(run_id="unpriced")])
    con = connect(tmp_path, make_prices(), needs={"tco"})
    try:
        failed_row = _row(con, "tco", "failed")
        assert failed_row["output_tok_s"] is None
        assert failed_row["total_usd_month"] == pytest.approx(865.70)  # the host still costs money
        assert failed_row["usd_per_m_output_tokens"] is None
        assert failed_row["usd_per_m_total_tokens"] is None
        zero_row = _row(con, "tco", "zero")
        assert zero_row["output_tok_s"] is None
        assert zero_row["usd_per_m_output_tokens"] is None
        unpriced_row = _row(con, "tco", "unpriced")
        assert unpriced_row["output_tok_s"] is not None
        assert unpriced_row["purchase_usd"] is None
        assert unpriced_row["usd_per_m_output_tokens"] is None
    finally:
        con.close()


def test_run_without_measured_requests_still_has_a_summary_row(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(status=RunStatus.failed, error="no engine"), [])
    con = connect(tmp_path, make_prices(), needs={"run_summary"})
    try:
        s = _row(con, "run_summary")
        assert (s["n"], s["errors"], s["ok"]) == (0, 0, 0)
        assert s["ttft_p50_ms"] is None
        assert s["itl_p50_ms"] is None
        assert s["output_tok_s"] is None
    finally:
        con.close()


# ---------------------------------------------------------------------------------------------------------
# Owned TCO with measured energy and two GPUs, and the rented basis, on the same requests (60 output tok/s,
# 66 total tok/s over the 10 s window; 600 output tokens).
#
#   telemetry: two GPUs, each 200 W from 0.05 s before the window opens to 0.05 s after it closes (10 Hz,
#              energy counters consistent), and each 60 W in a 1 s idle phase before
#   run:       gpu_count 2 (the hardware row is per GPU: accelerators 1), utilisation 0.5
#   rental:    test-rate, 2.00 USD per GPU-hour for test-hw
# ---------------------------------------------------------------------------------------------------------

STEP = 100 * MS
WINDOW_START, WINDOW_END = T0_NS + 5_000_000_000, T0_NS + 15_000_000_000


def _samples() -> list[TelemetryRecord]:
    rows = []
    stamps = [(T0_NS + k * STEP, "idle", 60.0) for k in range(10)]
    stamps += [(WINDOW_START - STEP // 2 + k * STEP, "measure", 200.0) for k in range(102)]
    for device in (0, 1):
        energy_mj = 0
        for k, (ts, phase, watts) in enumerate(stamps):
            energy_mj += round(watts * (ts - stamps[k - 1][0]) / 1e6) if k else 0
            rows.append(
                make_telemetry(
                    ts_ns=ts,
                    phase=phase,
                    device_index=device,
                    power_mw=round(watts * 1000),
                    energy_mj=energy_mj,
                    mem_used_bytes=2**30,
                )
            )
    return rows


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """Connected once: the tests that use it only read it."""
    tmp_path = tmp_path_factory.mktemp("measured")
    run = make_run(gpu_count=2, gpu_vendor="nvidia", gpu_name="Test GPU", telemetry_source="nvml")
    write_results(tmp_path, run, _requests(), _samples())
    connection = connect(tmp_path, make_prices(rental={}))
    yield connection
    connection.close()


def test_tco_owned_with_measured_energy_hand_worked(measured: duckdb.DuckDBPyConnection) -> None:
    e = _row(measured, "energy")
    # span 10.1 s (101 steps); 2 GPUs x 200 W x 10.1 s = 4040 J -> mean 400 W; window 400 W x 10 s = 4000 J
    assert e["valid"] is True and round(e["mean_w"], 6) == 400.0 and round(e["idle_w"], 6) == 120.0
    t = _row(measured, "tco")
    assert t["power_basis"].startswith("measured: nvml mean W over the measurement window (2 device(s);")
    assert t["power_basis"].endswith("idle: measured")
    # units: gpu_count 2 / accelerators 1 = 2 rows of test-hw
    assert (t["units"], t["gpus_used"]) == (2.0, 2)
    # hardware: (20 000 + 4 000) x 2 / 48 months = 1 000.00 USD/month
    hardware_usd_month = 1_000.00
    # power: 0.5 x 400 W (measured, both GPUs) + 0.5 x 120 W (measured idle, 2 x 60 W) = 260 W
    power_w = 260.0
    # energy: 260 W x 1.5 PUE x 730 h / 1000 = 284.7 kWh/month; x 0.10 USD/kWh = 28.47 USD/month
    energy_kwh_month, power_usd_month = 284.7, 28.47
    # ops 2 h x 100 = 200.00 (per host, not per GPU); adaptation 6 days x 800 / 48 = 100.00 (per platform)
    ops_usd_month, adaptation_usd_month = 200.00, 100.00
    # total: 1 000 + 28.47 + 200 + 100 = 1 328.47 USD/month
    total_usd_month = 1_328.47
    # 1 328.47 USD / 78.84 M output tokens = 16.8502... -> 16.85; / 86.724 M tokens = 15.3183... -> 15.32
    usd_per_m_output_tokens, usd_per_m_total_tokens = 16.85, 15.32

    assert (t["load_w_used"], t["idle_w_used"]) == pytest.approx((400.0, 120.0))
    assert round(t["hardware_usd_month"], 2) == hardware_usd_month
    assert t["power_w"] == pytest.approx(power_w)
    assert t["energy_kwh_month"] == pytest.approx(energy_kwh_month)
    assert round(t["power_usd_month"], 2) == power_usd_month
    assert (round(t["ops_usd_month"], 2), round(t["adaptation_usd_month"], 2)) == (ops_usd_month, adaptation_usd_month)
    assert round(t["total_usd_month"], 2) == total_usd_month
    assert round(t["usd_per_m_output_tokens"], 2) == usd_per_m_output_tokens
    assert round(t["usd_per_m_total_tokens"], 2) == usd_per_m_total_tokens

    f = _row(measured, "efficiency")
    # 4 000 J / 600 output tokens = 6.6667 J/token; 3.6e6 / 6.6667 = 540 000 tokens/kWh
    # electricity: 6.6667 J x 1.5 PUE / 3.6e6 J/kWh x 0.10 USD/kWh x 1e6 = 0.2778 USD per 1M output tokens
    assert f["energy_basis"] == "measured"
    assert f["j_per_output_token"] == pytest.approx(4000 / 600)
    assert f["output_tokens_per_kwh"] == pytest.approx(540_000)
    assert round(f["electricity_usd_per_m_output_tokens"], 4) == 0.2778


def test_tco_rented_hand_worked(measured: duckdb.DuckDBPyConnection) -> None:
    r = _row(measured, "tco_rented")
    assert (r["rental_key"], r["tier"], r["gpus_rented"], r["source"]) == ("test-rate", "on-demand", 2, "test fixture")
    # rent: 2.00 USD/GPU-hour x 2 GPUs x 730 h = 2 920.00 USD/month (every hour, whatever the utilisation)
    assert round(r["rent_usd_month"], 2) == 2_920.00
    # total: 2 920 + 200 ops + 100 adaptation = 3 220.00 USD/month
    assert round(r["total_usd_month"], 2) == 3_220.00
    # 3 220 / 78.84 M = 40.8422... -> 40.84 per 1M output tokens; 3 220 / 86.724 M = 37.1293... -> 37.13
    assert round(r["usd_per_m_output_tokens"], 2) == 40.84
    assert round(r["usd_per_m_total_tokens"], 2) == 37.13
    bases = measured.execute(
        "SELECT basis, capital_usd_month, power_usd_month, total_usd_month, output_tokens_per_usd FROM cost_basis "
        "ORDER BY basis"
    ).fetchall()
    assert [b[0] for b in bases] == ["owned", "rented: on-demand"]
    assert [round(b[3], 2) for b in bases] == [1_328.47, 3_220.00]
    assert bases[1][2] == 0.0  # power is inside the GPU-hour rate
    # tokens per USD: 78 840 000 / 1 328.47 = 59 346.47; 78 840 000 / 3 220 = 24 484.47
    assert round(bases[0][4], 2) == 59_346.47 and round(bases[1][4], 2) == 24_484.47


def test_rented_basis_of_the_first_example_uses_the_row_accelerators(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(), _requests())  # no gpu_count: the row's accelerators (1) are rented
    con = connect(tmp_path, make_prices(rental={}), needs={"tco_rented"})
    try:
        r = _row(con, "tco_rented")
        # 2.00 x 1 x 730 = 1 460.00; + 200 + 100 = 1 760.00; / 78.84 M = 22.3237... -> 22.32
        assert (r["gpus_rented"], round(r["rent_usd_month"], 2), round(r["total_usd_month"], 2)) == (1, 1460.0, 1760.0)
        assert round(r["usd_per_m_output_tokens"], 2) == 22.32
    finally:
        con.close()


def test_tco_estimate_says_why_telemetry_was_not_used(tmp_path: Path) -> None:
    # power only (no energy counter), so the trapezoid rule and its 500 ms gap limit apply
    gappy = [
        s.model_copy(update={"energy_mj": None})
        for s in _samples()
        if not (WINDOW_START + 2 * 10**9 <= s.ts_ns <= WINDOW_START + 3 * 10**9)
    ]
    write_results(tmp_path, make_run(gpu_count=2), _requests(), gappy)
    con = connect(tmp_path, make_prices(), needs={"tco"})
    try:
        t = _row(con, "tco")
        assert t["power_basis"] == (
            "estimate: price-table load/idle watts x 2.0 units (telemetry not used: a gap of 1100 ms between "
            "samples exceeds 500 ms)"
        )
        # estimate for two GPUs: 0.5 x 2 000 W + 0.5 x 400 W = 1 200 W
        assert t["power_w"] == pytest.approx(1_200.0)
    finally:
        con.close()
