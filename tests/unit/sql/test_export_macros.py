"""Given / expect tests of macro export_figures (tcobench/sql/macros/export_figures.sql): the means, sample standard
deviations and extremes `tcobench export --format benchmark-report` writes, over the ok measured requests only, and
the rates over run_summary's measured window."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tcobench.schemas import Phase
from tests.unit.factories import make_request
from tests.unit.sql.given_expect import given, run

MS = 1_000_000


def _requests() -> pa.Table:
    ok = [
        make_request(run_id="r1", request_index=i, ttft_ns=t * MS, itl_ns=gaps, prompt_tokens=p, output_tokens=11)
        for i, (t, gaps, p) in enumerate([(100, [10 * MS, 20 * MS], 10), (200, [30 * MS], 20), (300, [], 30)])
    ]
    left_out = [
        make_request(run_id="r1", request_index=3, ttft_ns=900 * MS, itl_ns=[900 * MS], error="boom"),  # failed
        make_request(run_id="r1", phase=Phase.warmup, ttft_ns=5 * MS, itl_ns=[1 * MS], prompt_tokens=1),  # warm-up
        make_request(run_id="r3", ttft_ns=7 * MS),  # a run not asked for
    ]
    return given("requests", *ok, *left_out)


SUMMARY = [
    {"run_id": "r1", "measure_s": 2.0, "prompt_tokens": 60, "ok": 3},
    {"run_id": "r2", "measure_s": 0.0, "prompt_tokens": None, "ok": 0},  # no window, no request
    {"run_id": "r3", "measure_s": 1.0, "prompt_tokens": 10, "ok": 1},
]


def test_export_figures_of_the_ok_measured_requests() -> None:
    rows = run(
        "export_figures",
        {"requests": _requests(), "run_summary": SUMMARY},
        "SELECT * FROM export_figures(['r1', 'r2']) ORDER BY run_id",
    )
    assert [r["run_id"] for r in rows] == ["r1", "r2"]
    r1, r2 = rows
    assert (r1["ttft_mean_ms"], r1["ttft_std_ms"], r1["ttft_min_ms"], r1["ttft_max_ms"]) == (200.0, 100.0, 100.0, 300.0)
    assert (r1["itl_mean_ms"], r1["itl_min_ms"], r1["itl_max_ms"]) == (20.0, 10.0, 30.0)  # every gap of every request
    assert r1["itl_std_ms"] == pytest.approx(10.0)
    assert (r1["isl_mean"], r1["isl_std"], r1["isl_min"], r1["isl_max"]) == (20.0, 10.0, 10, 30)
    assert (r1["osl_mean"], r1["osl_std"]) == (11.0, 0.0)
    assert (r1["input_tok_s"], r1["request_rate_qps"]) == (30.0, 1.5)
    assert all(v is None for k, v in r2.items() if k != "run_id")  # nothing measured: every figure NULL
