"""View steady_window (tcobench/sql/run/steady_window.sql) on hand-made timelines: where the steady state opens and
closes in a closed and an open loop, its share of the measured window, and the figures inside it (run_summary and
energy carry them)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tcobench.schemas import Phase, RequestRecord, TelemetryRecord
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import write_results
from tests.unit.factories import T0_NS, make_request, make_run, make_telemetry

BENCH = Path(__file__).resolve().parents[4] / "bench"  # the simulated batching engine (not a package)
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
S = 1_000_000_000  # ns per second
BASE = T0_NS + 5 * S


def request(index: int, start_s: float, ttft_s: float, e2e_s: float, **overrides: Any) -> RequestRecord:
    """11 tokens, one a chunk: the first at ttft, the other 10 evenly over the rest of e2e."""
    ttft, e2e = round(ttft_s * S), round(e2e_s * S)
    fields: dict[str, Any] = {"output_tokens": 11, "chunks": 11, "itl_ns": [(e2e - ttft) // 10] * 10, **overrides}
    return make_request(
        request_index=index,
        start_ns=BASE + round(start_s * S),
        ttft_ns=ttft,
        e2e_ns=e2e,
        decode_ns=e2e - ttft,
        **fields,
    )


def rows(tmp_path: Path, view: str, requests: list[RequestRecord], end_s: float, **run: Any) -> dict[str, Any]:
    samples: list[TelemetryRecord] = run.pop("samples", [])
    record = make_run(measure_start_ns=BASE, measure_end_ns=BASE + round(end_s * S), **run)
    write_results(tmp_path, record, requests, samples)
    con = connect(tmp_path, load_prices(None), needs=(view,))
    try:
        found: list[dict[str, Any]] = con.sql(f"SELECT * FROM {view}").to_arrow_table().to_pylist()
    finally:
        con.close()
    assert len(found) == 1
    return found[0]


# Two streams. r0 finishes at 1 s and is replaced by r2; r1 finishes at 6 s and is replaced by r3, the last send.
# First tokens: r0 0.2 s, r2 2 s, r1 3 s, r3 6.5 s: the 2nd (both streams decoding) opens the window at 2 s; the
# first finish after the last send (r2 at 9 s; r1 ends at 6 s, when r3 is sent) closes it.
CLOSED = [
    request(0, 0.0, 0.2, 1.0),
    request(1, 0.0, 3.0, 6.0),
    request(2, 1.0, 1.0, 8.0),
    request(3, 6.0, 0.5, 4.5),
]


def test_closed_loop_window_opens_when_all_streams_decode_and_closes_at_the_first_unreplaced_finish(
    tmp_path: Path,
) -> None:
    warm = make_request(phase=Phase.warmup, request_index=0, start_ns=BASE - 3 * S, ttft_ns=S // 10, e2e_ns=S)
    row = rows(tmp_path, "steady_window", [warm, *CLOSED], 10.5, concurrency=2)
    assert row["steady_start_ns"] == BASE + 2 * S and row["steady_end_ns"] == BASE + 9 * S
    assert row["steady_s"] == 7.0 and row["steady_share"] == pytest.approx(7 / 10.5)
    assert row["short_steady"] is False
    # tokens received inside by their receive times: r0 none; r2 1 + 10 (decode 2-9 s inside); r1 1 + 10; r3 its first
    # (6.5 s) and the 6 of its 10 later chunks (every 0.4 s from 6.9 s) received by 9 s
    assert row["steady_output_tokens"] == pytest.approx(29.0)
    assert row["steady_output_tok_s"] == pytest.approx(29.0 / 7)
    # decode midpoints: r0 0.6 s (outside), r2 5.5 s, r1 4.5 s, r3 8.5 s; TPOT 700, 300, 400 ms
    assert row["steady_requests"] == 3
    assert row["steady_tpot_p50_ms"] == pytest.approx(400.0) and row["steady_tpot_p90_ms"] == pytest.approx(640.0)
    assert row["steady_interactivity"] == pytest.approx(2.5)


def test_a_requests_chunks_share_its_tokens_after_the_first_and_one_chunk_spreads_them(tmp_path: Path) -> None:
    """Chunks are not tokens (vLLM sends several in one): the tokens after the first are shared by the chunks after the
    first; a request stored with a single chunk has no receive times and is spread over its decode time."""
    # r3 as in CLOSED, its 10 tokens after the first in 5 chunks of 2 at 7.5, 8.5, 9.5, 10 and 10.5 s: 2 by 9 s
    chunked = request(3, 6.0, 0.5, 4.5, chunks=6, itl_ns=[S, S, S, S // 2, S // 2])
    row = rows(tmp_path / "chunked", "steady_window", [*CLOSED[:3], chunked], 10.5, concurrency=2)
    assert row["steady_output_tokens"] == pytest.approx(22 + 1 + 2 * 2)
    single = request(3, 6.0, 0.5, 4.5, chunks=1, itl_ns=[])  # 1 + 10 x 2.5 s of its 4 s decode
    row = rows(tmp_path / "single", "steady_window", [*CLOSED[:3], single], 10.5, concurrency=2)
    assert row["steady_output_tokens"] == pytest.approx(22 + 7.25)


def test_steady_throughput_is_the_batching_engines_full_load_rate_within_2_percent(tmp_path: Path) -> None:
    """A simulated batching engine (bench/batching_engine.py, ITL = 5 + 1.2 x streams ms), 32 streams over 96 requests
    of 128 tokens, streams starting 0.1 s apart: the steady window counts what was received in it, 32 x 1000 / (5 +
    1.2 x 32) = 737.3 tok/s within 2%. Spreading each request's tokens evenly over its decode time fails this (too
    high: the requests still running at the window's end speed up after it, as the batch empties)."""
    from batching_engine import BatchingEngine, closed_loop

    engine = BatchingEngine(5.0, 1.2, 1.0)
    simulated = closed_loop(engine, 32, 96, 128, stagger_ms=100.0)  # streams start 0.1 s apart, as a client's do
    requests = [
        make_request(
            request_index=i,
            start_ns=BASE + r.start_ns,
            ttft_ns=r.ttft_ns,
            e2e_ns=r.token_ns[-1] - r.start_ns,
            decode_ns=r.token_ns[-1] - r.token_ns[0],
            chunks=len(r.token_ns),
            itl_ns=r.itl_ns,
            output_tokens=len(r.token_ns),
        )
        for i, r in enumerate(simulated)
    ]
    end = max(r.token_ns[-1] for r in simulated) / S
    row = rows(tmp_path, "steady_window", requests, end, concurrency=32, measured_requests=96)
    full_load = 32 * 1000 / engine.itl_ms(32)
    assert row["steady_output_tok_s"] == pytest.approx(full_load, rel=0.02)


def test_run_summary_and_energy_carry_the_steady_figures(tmp_path: Path) -> None:
    # 200 W on one device every 0.1 s from before the run to after it; an energy counter that agrees
    samples = [make_telemetry(ts_ns=BASE - S + k * S // 10, power_mw=200_000, energy_mj=k * 20_000) for k in range(125)]
    summary = rows(tmp_path, "run_summary", CLOSED, 10.5, concurrency=2, telemetry_source="nvml", samples=samples)
    assert summary["steady_share"] == pytest.approx(7 / 10.5) and summary["short_steady"] is False
    assert summary["steady_output_tok_s"] == pytest.approx(29.0 / 7)
    assert summary["steady_interactivity"] == pytest.approx(2.5)
    assert summary["output_tok_s"] == pytest.approx(44 / 10.5)  # the whole window's figure stays as it was
    con = connect(tmp_path, load_prices(None), needs={"energy"})
    energy = con.sql("SELECT steady_mean_w, steady_j_per_token FROM energy").fetchone()
    con.close()
    assert energy is not None
    assert energy[0] == pytest.approx(200.0) and energy[1] == pytest.approx(200.0 / (29.0 / 7))


def test_open_loop_window_is_first_arrival_plus_median_e2e_to_last_arrival(tmp_path: Path) -> None:
    arrivals = [request(i, float(i), 0.5, 2.0 + i / 10) for i in range(5)]  # e2e 2.0-2.4 s, median 2.2 s
    row = rows(tmp_path, "steady_window", arrivals, 6.4, concurrency=8, load_mode="poisson", rate_rps=1.0)
    assert row["steady_start_ns"] == BASE + round(2.2 * S) and row["steady_end_ns"] == BASE + 4 * S
    assert row["steady_share"] == pytest.approx(1.8 / 6.4) and row["short_steady"] is True


def test_a_batch_that_never_filled_has_no_steady_window(tmp_path: Path) -> None:
    row = rows(tmp_path, "steady_window", CLOSED[:2], 6.0, concurrency=4)
    assert row["steady_start_ns"] is None and row["steady_s"] is None
    assert row["steady_share"] == 0 and row["short_steady"] is True
    assert row["steady_output_tok_s"] is None and row["steady_interactivity"] is None
