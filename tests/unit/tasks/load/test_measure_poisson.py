"""Poisson arrivals are Poisson: a Kolmogorov-Smirnov test of the inter-arrival times against the exponential
distribution at the stated rate (p > 0.01, fixed seed), for the schedule itself and for the sends of a real run
against bench/zero_endpoint.py (its own process)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from itertools import islice

import pytest

from tcobench.schemas import LoadMode, Protocol, WorkloadConfig
from tcobench.tasks.analysis.quantile import quantile
from tcobench.tasks.load.measure import measure
from tcobench.tasks.load.pacing import arrivals
from tcobench.tasks.load.record import MeasureResult, RunContext
from tcobench.tasks.load.stream import Target


def ks_exponential(gaps: Sequence[float], rate: float) -> tuple[float, float]:
    """(D, p): the one-sample KS statistic of ``gaps`` against Exp(rate), and its p-value from the Kolmogorov
    distribution with Stephens' small-sample correction (Numerical Recipes' probks)."""
    xs = sorted(gaps)
    n = len(xs)
    d = max(max((i + 1) / n - (1 - math.exp(-rate * x)), (1 - math.exp(-rate * x)) - i / n) for i, x in enumerate(xs))
    lam = (math.sqrt(n) + 0.12 + 0.11 / math.sqrt(n)) * d
    p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return d, min(1.0, max(0.0, p))


def test_the_ks_check_rejects_what_is_not_exponential() -> None:
    """The check can fail: evenly spaced or uniform gaps of the same mean are rejected, exponential ones are not."""
    rate, rng = 50.0, random.Random(7)
    assert ks_exponential([1 / rate] * 400, rate)[1] < 0.01
    assert ks_exponential([rng.uniform(0, 2 / rate) for _ in range(400)], rate)[1] < 0.01
    assert ks_exponential([rng.expovariate(rate * 1.5) for _ in range(400)], rate)[1] < 0.01  # the wrong rate
    assert ks_exponential([rng.expovariate(rate) for _ in range(400)], rate)[1] > 0.01


def test_the_schedule_is_exponential_at_the_stated_rate() -> None:
    rate = 37.0
    times = list(islice(arrivals(rate, 42, 0), 2000))
    gaps = [(b - a) / 1e9 for a, b in zip([0, *times], times, strict=False)]
    d, p = ks_exponential(gaps, rate)
    assert p > 0.01, f"D = {d:.4f}, p = {p:.4g}"
    assert list(islice(arrivals(rate, 42, 0), 5)) == times[:5]  # the same seed, the same schedule


@pytest.fixture
def endpoint(zero_endpoint: Callable[..., str]) -> str:
    return zero_endpoint("--ttft-ms", "1", "--itl-ms", "1")


def _poisson_run(url: str, procs: int, rate: float, requests: int) -> MeasureResult:
    workload = WorkloadConfig.model_validate(
        {
            "requests": requests,
            "warmup_requests": 4,
            "concurrency": (64,),
            "max_tokens": 2,
            "prompts": ("hi",),
            "mode": LoadMode.poisson,
            "rate": rate,
            "seed": 42,
            "client_procs": procs,
        }
    )
    result = measure(Target(url, Protocol.openai, "zero"), workload, RunContext("r", "2026-01-01", "h"), 64)
    assert all(r.error is None for r in result.measured) and len(result.measured) == requests
    assert len(result.client) == procs
    return result


def _gaps(times: list[int]) -> list[float]:
    times = sorted(times)
    return [(b - a) / 1e9 for a, b in zip(times, times[1:], strict=False)]


@pytest.mark.parametrize("procs", [1, 2])
def test_a_poisson_run_follows_one_exponential_schedule(endpoint: str, procs: int) -> None:
    """300 requests at 200/s (1.5 s): the arrival times the rows were scheduled at (send - send lateness) have
    exponential gaps at the stated rate; with 2 client processes, process k sent arrivals k, k+2, ... of the one
    schedule, so together they follow it exactly (not 2 independent schedules at half the rate each). Those times
    are exact whatever the load (lateness is measured against them), so the rate can be high."""
    rate = 200.0
    result = _poisson_run(endpoint, procs, rate, 300)
    assert [r.client_proc for r in result.measured] == [r.request_index % procs for r in result.measured]
    due = [r.start_ns - r.send_lateness_ns for r in result.measured if r.send_lateness_ns is not None]
    assert len(due) == 300
    d, p = ks_exponential(_gaps(due), rate)
    assert p > 0.01, f"D = {d:.4f}, p = {p:.4g}"


@pytest.mark.quiet  # its sends are timed: skipped on a loaded machine, so run alone (tests/run_suite.sh)
@pytest.mark.parametrize("procs", [1, 2])
def test_a_poisson_run_sends_at_exponential_gaps(endpoint: str, procs: int) -> None:
    """The sends themselves (200 at 50/s, 4 s) fit Exp(50), when the client kept to the schedule: on a machine so
    loaded that sends were over 2 ms late at p99 (the run's own lateness says so), the gaps measure the machine, and
    this is skipped."""
    rate = 50.0
    result = _poisson_run(endpoint, procs, rate, 200)
    late = quantile([r.send_lateness_ns or 0 for r in result.measured], 0.99) or 0
    if late > 2e6:
        pytest.skip(f"send lateness p99 {late / 1e6:.1f} ms: the machine is too loaded to time sends")
    d, p = ks_exponential(_gaps([r.start_ns for r in result.measured]), rate)
    assert p > 0.01, f"D = {d:.4f}, p = {p:.4g}"
