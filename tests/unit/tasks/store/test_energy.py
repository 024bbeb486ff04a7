"""The `energy` view on hand-made telemetry: counter delta vs trapezoid integration, J/token, validity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tcobench.schemas import TelemetryRecord
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import write_results
from tests.unit.factories import T0_NS, make_request, make_run

START = T0_NS + 5_000_000_000  # make_run's measurement window: 10 s
END = T0_NS + 15_000_000_000
STEP = 100_000_000  # 10 Hz


def sample(ts: int, phase: str, watts: float, device: int = 0) -> TelemetryRecord:
    # counter: 1 MJ at T0, then `watts` J per second; power constant
    energy_mj = 1_000_000_000 + round(watts * (ts - T0_NS) / 1e6)
    return TelemetryRecord(
        run_id="run0",
        date="2023-11-14",
        host="testhost",
        ts_ns=ts,
        phase=phase,
        source="nvml",
        device_index=device,
        device_uuid=None,
        power_mw=round(watts * 1000),
        energy_mj=energy_mj,
        util_pct=None,
        mem_used_bytes=(device + 1) * 2**30,
        sm_clock_mhz=None,
        temperature_c=None,
        power_limit_mw=None,
    )


def energy_row(tmp_path: Path, samples: list[TelemetryRecord]) -> dict[str, Any]:
    requests = [make_request(request_index=i, output_tokens=100) for i in range(4)]  # 400 output tokens
    write_results(tmp_path, make_run(telemetry_source="nvml"), requests, samples)
    con = connect(tmp_path, load_prices(None), needs={"energy"})
    rows: list[dict[str, Any]] = con.sql("SELECT * FROM energy").to_arrow_table().to_pylist()
    con.close()
    assert len(rows) == 1
    return rows[0]


def test_counter_and_integration_agree_and_give_joules_per_token(tmp_path: Path) -> None:
    samples = [sample(T0_NS + k * STEP, "idle", 80.0, d) for k in range(20) for d in (0, 1)]
    # 0.05 s before the window opens up to 0.05 s after it closes, every 0.1 s, two GPUs at 200 W each
    samples += [sample(START - STEP // 2 + k * STEP, "measure", 200.0, d) for k in range(102) for d in (0, 1)]
    row = energy_row(tmp_path, samples)
    # span: last - first sample = 101 steps = 10.1 s; 2 GPUs x 200 W x 10.1 s = 4040 J
    assert row["devices"] == 2 and row["span_s"] == 10.1 and row["window_s"] == 10.0
    assert round(row["counter_j"], 6) == 4040.0 and round(row["integrated_j"], 6) == 4040.0
    assert row["energy_source"] == "counter" and round(row["mean_w"], 6) == 400.0
    # window: 400 W x 10 s = 4000 J over 400 output tokens = 10 J/token
    assert round(row["window_j"], 6) == 4000.0 and round(row["j_per_output_token"], 6) == 10.0
    assert round(row["idle_w"], 6) == 160.0  # 2 x 80 W
    assert row["peak_vram_bytes"] == 3 * 2**30  # 1 GiB + 2 GiB at the same instant
    assert row["valid"] is True and row["invalid_reason"] is None and row["max_gap_ms"] == 100.0


def test_gap_makes_an_integrated_figure_invalid(tmp_path: Path) -> None:
    samples = [
        sample(START - STEP // 2 + k * STEP, "measure", 200.0).model_copy(update={"energy_mj": None})
        for k in range(102)
        if not 30 <= k < 40
    ]
    row = energy_row(tmp_path, samples)
    assert row["energy_source"] == "integrated"
    assert row["valid"] is False and row["invalid_reason"] == "a gap of 1100 ms between samples exceeds 500 ms"


def test_counter_energy_stays_valid_across_gaps_while_the_span_fits_the_window(tmp_path: Path) -> None:
    """A counter's delta is exact however sparse the samples (the amd-smi command samples slowly)."""
    samples = [sample(START - STEP // 2 + k * STEP, "measure", 200.0) for k in range(102) if not 30 <= k < 40]
    row = energy_row(tmp_path, samples)
    assert row["energy_source"] == "counter" and row["max_gap_ms"] == 1100.0
    assert round(row["energy_j"], 6) == round(200.0 * 10.1, 6) and row["valid"] is True


def test_counter_energy_invalid_when_the_bracketing_span_overshoots(tmp_path: Path) -> None:
    # one sample every 2 s from 1.5 s before the window: the bracketing samples span 12 s for a 10 s window
    samples = [sample(START - 1_500_000_000 + k * 2_000_000_000, "measure", 200.0, 0) for k in range(7)]
    row = energy_row(tmp_path, samples)
    assert row["span_s"] == 12.0 and row["valid"] is False
    assert (
        row["invalid_reason"] == "the samples bracketing the 10.0 s window span 12.0 s, over 10% more (counter energy)"
    )


def test_integration_when_no_counter(tmp_path: Path) -> None:
    samples = [
        s.model_copy(update={"energy_mj": None})
        for s in [sample(START - STEP // 2 + k * STEP, "measure", 150.0) for k in range(102)]
    ]
    row = energy_row(tmp_path, samples)
    assert row["counter_j"] is None and row["energy_source"] == "integrated"
    assert round(row["energy_j"], 6) == round(150.0 * 10.1, 6) and row["valid"] is True
