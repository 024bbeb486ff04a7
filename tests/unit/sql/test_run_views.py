"""Given / expect tests of the run layer (tcobench/sql/run): energy and run_summary over small in-memory tables."""

from __future__ import annotations

from tcobench.schemas import Phase
from tests.unit.factories import T0_NS, make_request, make_run, make_telemetry
from tests.unit.sql.given_expect import expect_rows, given, run

S = 1_000_000_000  # ns per second
W = 1_000  # mW per W


def _energy_tables() -> dict[str, object]:
    """Run a: 5 samples 1 s apart bracketing its 4 s window exactly, 100 W, with a counter (100 J/s), one idle sample
    at 20 W, 1 GiB in use (2 GiB at t = 2 s), a steady window [1 s, 3 s]. Run b: 2 samples 1 s apart, power only."""
    a = [
        make_telemetry(
            run_id="a",
            ts_ns=T0_NS + k * S,
            power_mw=100 * W,
            energy_mj=100_000 * k,
            mem_used_bytes=2**30 * (2 if k == 2 else 1),
        )
        for k in range(5)
    ]
    idle = make_telemetry(run_id="a", ts_ns=T0_NS - S, phase="idle", power_mw=20 * W)
    b = [make_telemetry(run_id="b", ts_ns=T0_NS + k * S, power_mw=100 * W) for k in range(2)]
    return {
        "runs": given(
            "runs",
            make_run(run_id="a", measure_start_ns=T0_NS, measure_end_ns=T0_NS + 4 * S, telemetry_source="nvml"),
            make_run(run_id="b", measure_start_ns=T0_NS, measure_end_ns=T0_NS + S, telemetry_source="nvml"),
        ),
        "telemetry": given("telemetry", idle, *a, *b),
        "run_summary": [
            {"run_id": "a", "output_tokens": 200, "steady_output_tok_s": 50.0},
            {"run_id": "b", "output_tokens": 0, "steady_output_tok_s": None},
        ],
        "steady_window": [
            {"run_id": "a", "steady_start_ns": T0_NS + S, "steady_end_ns": T0_NS + 3 * S, "steady_s": 2.0},
            {"run_id": "b", "steady_start_ns": None, "steady_end_ns": None, "steady_s": None},
        ],
    }


def test_energy_of_a_counter_run_and_an_integrated_one() -> None:
    rows = run("energy", _energy_tables(), "SELECT * FROM energy ORDER BY run_id")
    expect_rows(
        rows,
        [
            {
                "run_id": "a",
                "devices": 1,
                "source": "nvml",
                "span_s": 4.0,
                "window_s": 4.0,
                "counter_j": 400.0,
                "integrated_j": 400.0,
                "energy_j": 400.0,
                "energy_source": "counter",
                "mean_w": 100.0,
                "window_j": 400.0,
                "idle_w": 20.0,
                "j_per_output_token": 2.0,
                "peak_vram_bytes": 2 * 2**30,
                "max_gap_ms": 1000.0,
                "valid": True,
                "invalid_reason": None,
                "steady_mean_w": 100.0,
                "steady_j_per_token": 2.0,
            },
            {
                "run_id": "b",
                "span_s": 1.0,
                "counter_j": None,
                "integrated_j": 100.0,
                "energy_j": 100.0,
                "energy_source": "integrated",
                "mean_w": 100.0,
                "window_j": 100.0,
                "idle_w": None,
                "j_per_output_token": None,
                "peak_vram_bytes": None,
                "valid": False,
                "invalid_reason": "a gap of 1000 ms between samples exceeds 500 ms",
                "steady_mean_w": None,
            },
        ],
    )


def test_energy_brackets_the_window_with_the_samples_around_it() -> None:
    """A window [0.5 s, 3.5 s] of run a: the samples at 0 s and 4 s bracket it (span 4 s > 1.1 x 3 s: invalid)."""
    tables = _energy_tables()
    tables["runs"] = given(
        "runs", make_run(run_id="a", measure_start_ns=T0_NS + S // 2, measure_end_ns=T0_NS + 7 * S // 2)
    )
    rows = run("energy", tables, "SELECT * FROM energy ORDER BY run_id")
    reason = "the samples bracketing the 3.0 s window span 4.0 s, over 10% more (counter energy)"
    expect_rows(
        rows,
        [
            {
                "run_id": "a",
                "span_s": 4.0,
                "window_s": 3.0,
                "counter_j": 400.0,
                "mean_w": 100.0,
                "window_j": 300.0,
                "valid": False,
                "invalid_reason": reason,
            }
        ],
    )


def test_run_summary_counts_the_measured_requests_only() -> None:
    """Three measured requests (TTFT 100, 200, 300 ms; 10, 20, 30 output tokens) over a 10 s window, and a warm-up
    request that no figure counts."""
    requests = [
        make_request(run_id="r", request_index=i, ttft_ns=(i + 1) * 100_000_000, output_tokens=10 * (i + 1))
        for i in range(3)
    ]
    warmup = make_request(run_id="r", request_index=3, phase=Phase.warmup, ttft_ns=5 * S, output_tokens=99)
    tables = {"runs": given("runs", make_run(run_id="r")), "requests": given("requests", *requests, warmup)}
    expect_rows(
        run("run_summary", tables),
        [
            {
                "run_id": "r",
                "n": 3,
                "ok": 3,
                "errors": 0,
                "ttft_p50_ms": 200.0,
                "ttft_p90_ms": 280.0,
                "prompt_tokens": 30,
                "output_tokens": 60,
                "measure_s": 10.0,
                "output_tok_s": 6.0,
                "total_tok_s": 9.0,
            }
        ],
    )
