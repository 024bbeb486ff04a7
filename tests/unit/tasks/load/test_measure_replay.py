"""Timed replay: each request of a trace is sent at its recorded offset (times the time scale) from the first one, on
the run's own client against bench/zero_endpoint.py (its own process), and its row keeps when it was due and when it
was sent. At 200 requests/s the p99 send lag is within SEND_LAG_P99_LIMIT_NS, the bound docs/workloads.md#replay
justifies from bench/replay_lag.py; no request goes out early. The check fails for a client that sends everything
at once (early sends) or one request after another (the lag grows by the response time each request: the endpoint
takes 35 ms per request, seven gaps of the schedule)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tcobench.schemas import LoadMode, Protocol, TraceConfig, WorkloadConfig
from tcobench.tasks.analysis.quantile import quantile
from tcobench.tasks.load.measure import measure
from tcobench.tasks.load.record import MeasureResult, RunContext
from tcobench.tasks.load.selfcheck import SEND_LAG_P99_LIMIT_NS, run_fields, send_lag_verdict
from tcobench.tasks.load.stream import Target
from tcobench.tasks.workload import WorkloadPlan
from tcobench.tasks.workload.replay import read_replay

EARLY_NS = 1_000_000  # a send may lead its schedule by the perf counter's rounding only; 1 ms is far more


@pytest.fixture
def endpoint(zero_endpoint: Callable[..., str]) -> str:
    return zero_endpoint("--ttft-ms", "20", "--itl-ms", "5", "--tokens", "4")


def write_trace(path: Path, offsets_ms: Sequence[float]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i, at in enumerate(offsets_ms):
            handle.write(json.dumps({"timestamp": 5_000 + at, "prompt": f"request {i}", "output_tokens": 4}) + "\n")
    return path


def replay(url: str, trace: Path, procs: int = 1, time_scale: float = 1.0) -> MeasureResult:
    config = TraceConfig(path=trace, time_scale=time_scale)
    workload = WorkloadConfig.model_validate(
        {
            "trace": {"path": trace, "time_scale": time_scale},
            "warmup_requests": 2,
            "concurrency": (64,),
            "client_procs": procs,
        }
    )
    assert workload.mode is LoadMode.replay and workload.ignore_eos
    plan = WorkloadPlan(workload, replay=read_replay(config))
    result = measure(Target(url, Protocol.openai, "zero"), workload, RunContext("r", "2026-01-01", "h"), 64, plan=plan)
    assert len(result.measured) == len(plan.offsets_ns) and all(r.error is None for r in result.measured)
    return result


def kept_time(lags_ns: Sequence[int]) -> str | None:
    """Why the sends did not keep their schedule (None: they did): an early send, or the p99 lag over the bound."""
    if min(lags_ns) < -EARLY_NS:
        return f"a request went out {-min(lags_ns) / 1e6:.1f} ms early"
    return send_lag_verdict(lags_ns)


def test_the_timing_check_fails_for_broken_pacing() -> None:
    """5 ms gaps, 400 requests: all sent at the start (request i is i x 5 ms early), or serially at 35 ms each (request
    i is i x 30 ms late), fail; sends within a millisecond of their schedule pass."""
    at_once = [-i * 5_000_000 for i in range(400)]
    serial = [i * 30_000_000 for i in range(400)]
    assert kept_time(at_once) is not None and "early" in (kept_time(at_once) or "")
    assert kept_time(serial) is not None and "p99" in (kept_time(serial) or "")
    assert kept_time([i % 1_000_000 for i in range(400)]) is None


@pytest.mark.quiet  # its sends are timed against a 50 ms p99 bound: run alone (tests/run_suite.sh)
@pytest.mark.parametrize("procs", [1, 2])
def test_a_replay_at_200_per_s_keeps_the_traces_times(endpoint: str, tmp_path: Path, procs: int) -> None:
    """400 requests 5 ms apart (2 s), the endpoint 35 ms per request (seven in flight): every row's scheduled time
    is the run's start plus its recorded offset, exactly; its send lag is sent - scheduled; the p99 lag is within
    the bound and nothing went early. With 2 client processes, process k sends requests k, k + 2, ... of the one
    schedule."""
    offsets = [i * 5.0 for i in range(400)]
    result = replay(endpoint, write_trace(tmp_path / "t.jsonl", offsets), procs)
    rows = result.measured
    first = rows[0].scheduled_ns
    assert first is not None
    assert [(r.scheduled_ns or 0) - first for r in rows] == [round(at * 1e6) for at in offsets]
    assert all(r.sent_ns is not None and r.sent_ns - (r.scheduled_ns or 0) == r.send_lateness_ns for r in rows)
    assert [r.client_proc for r in rows] == [r.request_index % procs for r in rows]
    lags = [r.send_lateness_ns or 0 for r in rows]
    assert kept_time(lags) is None, f"p99 {(quantile(lags, 0.99) or 0) / 1e6:.1f} ms, min {min(lags) / 1e6:.1f} ms"
    assert [r.prompt_index for r in rows] == list(range(400))


@pytest.mark.quiet  # its sends are timed against a 50 ms p99 bound: run alone (tests/run_suite.sh)
def test_the_time_scale_compresses_the_schedule(endpoint: str, tmp_path: Path) -> None:
    """A trace 20 ms apart at time scale 0.25 is sent 5 ms apart (200 requests/s)."""
    offsets = [i * 20.0 for i in range(100)]
    rows = replay(endpoint, write_trace(tmp_path / "t.jsonl", offsets), time_scale=0.25).measured
    first = rows[0].scheduled_ns or 0
    assert [(r.scheduled_ns or 0) - first for r in rows] == [round(at * 0.25 * 1e6) for at in offsets]
    assert kept_time([r.send_lateness_ns or 0 for r in rows]) is None


def test_a_lagging_replay_flags_its_client() -> None:
    """The run row's client check carries the replay's lag verdict: over the bound, the client is flagged and the
    note says by how much; within it, the process checks alone decide."""
    from tcobench.schemas import ClientProcessCheck

    check = ClientProcessCheck(
        wall_ns=10**9, cpu_ns=10**8, lag_p50_ns=0, lag_p99_ns=0, own_lag_p99_ns=0, lag_samples=100
    )
    late = [SEND_LAG_P99_LIMIT_NS * 2] * 100
    fields = run_fields([check], late)
    assert fields["client_saturated"] is True
    assert "client lagging: replay send lag p99" in fields["client_check_note"]
    assert run_fields([check], [0] * 100)["client_saturated"] is False
    assert run_fields([check])["client_saturated"] is False
