"""Multi-process load generation against bench/zero_endpoint.py (its own process): exact slices, rows streamed to the
parent as they finish, and a run deadline that stops every worker."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tcobench.schemas import Phase, Protocol, RequestRecord, WorkloadConfig
from tcobench.tasks.load.loadgen import auto_procs, concurrency_slices
from tcobench.tasks.load.measure import client_procs, measure
from tcobench.tasks.load.record import MeasureResult, RunContext
from tcobench.tasks.load.stream import Target


def test_slices_and_the_default_process_count() -> None:
    assert (
        concurrency_slices(5, 2) == [3, 2] and concurrency_slices(2, 2) == [1, 1] and sum(concurrency_slices(7, 3)) == 7
    )
    assert auto_procs(64, None, cores=16) == 1  # one process holds 128 streams
    assert auto_procs(256, None, cores=16) == 2 and auto_procs(4096, None, cores=16) == 15  # cores minus one
    assert auto_procs(8, 2000.0, cores=16) == 5  # 400 arrivals/s each
    assert auto_procs(512, None, cores=2) == 1 and auto_procs(512, None, cores=1) == 1
    workload = WorkloadConfig.model_validate({"client_procs": 4})
    assert client_procs(workload, 2) == 2  # never more processes than streams


@pytest.fixture
def endpoint(zero_endpoint: Callable[..., str]) -> Callable[..., str]:
    return zero_endpoint


def _run(url: str, on_request: Callable[[RequestRecord], None] | None = None, **extra: object) -> MeasureResult:
    workload = WorkloadConfig.model_validate(
        {
            "requests": 30,
            "warmup_requests": 3,
            "concurrency": (3,),
            "max_tokens": 4,
            "prompts": ("hi",),
            "client_procs": 2,
            **extra,
        }
    )
    return measure(Target(url, Protocol.openai, "zero"), workload, RunContext("r", "2026-01-01", "h"), 3, on_request)


def test_two_processes_send_exactly_the_run_and_stream_every_row(endpoint: Callable[..., str]) -> None:
    url = endpoint("--ttft-ms", "2", "--itl-ms", "2")
    seen: list[RequestRecord] = []
    result = _run(url, seen.append)
    assert [r.request_index for r in result.measured] == list(range(30))  # each request once, none lost
    assert [r.request_index for r in result.warmup] == [0, 1, 2] and all(r.phase is Phase.warmup for r in result.warmup)
    assert all(r.error is None for r in result.measured) and result.stopped is None and result.stop_rule == "requests"
    assert {r.client_proc for r in result.measured} == {0, 1} and len(result.client) == 2
    assert len(seen) == 33 and {id(r) for r in seen} >= {id(r) for r in result.measured}  # handed on, not copied
    assert result.measure_start_ns is not None and result.measure_end_ns is not None
    assert result.measure_start_ns <= min(r.start_ns for r in result.measured)


def test_the_run_deadline_stops_every_worker(endpoint: Callable[..., str]) -> None:
    """Streams of 4 s (80 gaps of 50 ms) and a run deadline of 1.5 s: the run comes back interrupted, with the
    requests that could not finish in the grace period cancelled, and no worker left behind."""
    url = endpoint("--ttft-ms", "1", "--itl-ms", "50", "--tokens", "80", "--fixed-tokens")
    result = _run(url, None, warmup_requests=0, run_deadline_s=1.5, request_timeout_s=30)
    assert result.stopped is not None and "deadline" in result.stopped
    assert result.stop_rule == "interrupted" and len(result.measured) < 30


def test_a_timed_run_stops_every_worker_at_one_deadline(endpoint: Callable[..., str]) -> None:
    """duration_s over two processes: the clock starts at the first measured request sent by either; no request
    starts after it in any process; those in flight then finish and are flagged."""
    url = endpoint("--ttft-ms", "1", "--itl-ms", "25", "--tokens", "4", "--fixed-tokens")
    result = _run(url, None, warmup_requests=0, duration_s=0.6, run_deadline_s=30)
    assert result.stopped is None and result.stop_rule == "duration"
    assert {r.client_proc for r in result.measured} == {0, 1}
    assert result.measure_start_ns is not None
    deadline, slack = result.measure_start_ns + 0.6e9, 0.1e9  # slack: a loaded machine delays a send past its admit
    assert all(r.start_ns <= deadline + slack for r in result.measured)
    assert any(r.in_flight_at_stop for r in result.measured)  # three always in flight: the end cut at least one
