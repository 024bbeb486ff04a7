"""measure(): load generation and failure rows. The subject is our client logic, so the transport is
httpx.MockTransport speaking OpenAI SSE (the real engine is exercised in tests/integration)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from tcobench.schemas import Phase, Protocol, WorkloadConfig
from tcobench.tasks.load.measure import measure
from tcobench.tasks.load.record import RunContext
from tcobench.tasks.load.stream import Target

CTX = RunContext("run1", "2026-11-30", "host")
TARGET = Target("http://127.0.0.1:1", Protocol.openai, "m")


def workload(**kw: object) -> WorkloadConfig:
    return WorkloadConfig.model_validate_json(json.dumps({"prompts": ["a", "b", "c"], **kw}))


class SSE(httpx.AsyncByteStream):
    """Three content chunks, a usage chunk and [DONE], with a small real gap between chunks."""

    def __init__(self, gap_s: float = 0.002, done: bool = True) -> None:
        self.gap_s, self.done = gap_s, done

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for text in ("Hel", "lo", "!"):
            await asyncio.sleep(self.gap_s)
            yield f'data: {{"choices":[{{"text":"{text}","finish_reason":null}}]}}\n\n'.encode()
        usage = {"prompt_tokens": 4, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 1}}
        yield f'data: {{"choices":[{{"text":"","finish_reason":"length"}}],"usage":{json.dumps(usage)}}}\n\n'.encode()
        if self.done:
            yield b"data: [DONE]\n\n"


def test_closed_loop_rows_seeds_and_inflight_cap() -> None:
    sent: list[dict[str, object]] = []
    inflight = peak = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal inflight, peak
        sent.append(json.loads(request.content))
        inflight += 1
        peak = max(peak, inflight)
        await asyncio.sleep(0.01)
        inflight -= 1
        return httpx.Response(200, stream=SSE())

    result = measure(TARGET, workload(requests=5, warmup_requests=1), CTX, 2, transport=httpx.MockTransport(handler))
    assert [r.phase for r in result.warmup] == [Phase.warmup]
    assert [r.request_index for r in result.measured] == [0, 1, 2, 3, 4]
    assert [r.prompt_index for r in result.measured] == [0, 1, 2, 0, 1]
    assert [r.seed for r in result.measured] == [42, 43, 44, 45, 46]
    assert peak == 2
    first = result.measured[0]
    assert first.error is None and first.chunks == 3 and len(first.itl_ns) == 2
    assert first.output_tokens == 3 and first.prompt_tokens == 4 and first.cached_tokens == 1
    assert first.token_count_source == "usage" and first.finish_reason == "length"
    assert first.ttft_ns is not None and first.e2e_ns is not None and 0 < first.ttft_ns < first.e2e_ns
    assert first.decode_ns == sum(first.itl_ns)
    assert result.measure_start_ns == min(r.start_ns for r in result.measured)
    assert all(body["stream"] is True and body["max_tokens"] == 64 for body in sent)


def test_poisson_sends_all_requests_within_cap() -> None:
    inflight = peak = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal inflight, peak
        inflight += 1
        peak = max(peak, inflight)
        await asyncio.sleep(0.02)
        inflight -= 1
        return httpx.Response(200, stream=SSE(gap_s=0))

    wl = workload(requests=12, warmup_requests=0, mode="poisson", rate=500.0)
    result = measure(TARGET, wl, CTX, 3, transport=httpx.MockTransport(handler))
    assert len(result.measured) == 12 and all(r.error is None for r in result.measured)
    assert 1 <= peak <= 3


def _http_500(request: httpx.Request) -> httpx.Response:
    return httpx.Response(500, text="boom")


def _refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


@pytest.mark.parametrize(("handler", "needle"), [(_http_500, "HTTP 500: boom"), (_refused, "ConnectError")])
def test_failed_request_is_a_row(handler: Callable[[httpx.Request], httpx.Response], needle: str) -> None:
    result = measure(TARGET, workload(requests=2, warmup_requests=0), CTX, 1, transport=httpx.MockTransport(handler))
    assert len(result.measured) == 2
    for row in result.measured:
        assert row.error is not None and needle in row.error
        assert row.output_tokens is None and row.chunks == 0


def test_stream_without_end_marker_is_an_error() -> None:
    class Cut(SSE):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield b'data: {"choices":[{"text":"x","finish_reason":null}]}\n\n'

    result = measure(
        TARGET,
        workload(requests=1, warmup_requests=0),
        CTX,
        1,
        transport=httpx.MockTransport(lambda r: httpx.Response(200, stream=Cut())),
    )
    assert result.measured[0].error == "stream ended before the server marked it complete"
    assert result.measured[0].chunks == 1


def test_request_timeout_is_a_row() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return httpx.Response(200, stream=SSE())

    wl = workload(requests=1, warmup_requests=0, request_timeout_s=0.05)
    result = measure(TARGET, wl, CTX, 1, transport=httpx.MockTransport(slow))
    assert result.measured[0].error == "timed out after 0.05 s"


def test_timed_phase_stops_starting_requests_at_the_deadline() -> None:
    """duration_s: requests start until the deadline; the ones in flight then finish, are kept and flagged."""

    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.05)
        return httpx.Response(200, stream=SSE(gap_s=0))

    wl = workload(duration_s=0.3, warmup_requests=0, requests=1)
    result = measure(TARGET, wl, CTX, 2, transport=httpx.MockTransport(handler))
    assert result.stop_rule == "duration"
    assert len(result.measured) >= 2  # about 2 x 0.3 / 0.05 (fewer on a busy machine); `requests` is no limit
    assert result.measure_end_ns is not None and result.measure_start_ns is not None
    deadline, slack = result.measure_start_ns + 0.3e9, 0.02e9  # the clock starts as the first request is sent
    for r in result.measured:
        assert r.e2e_ns is not None
        end = r.start_ns + r.e2e_ns
        assert r.start_ns <= deadline + slack  # nothing starts after the deadline
        assert end >= deadline - slack if r.in_flight_at_stop else end <= deadline + slack
    assert any(r.in_flight_at_stop for r in result.measured)  # two always in flight: the end cut at least one
    assert [r.request_index for r in result.measured] == list(range(len(result.measured)))


def test_min_requests_outlast_the_deadline() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.03)
        return httpx.Response(200, stream=SSE(gap_s=0))

    wl = workload(duration_s=0.01, min_requests=5, warmup_requests=0)
    result = measure(TARGET, wl, CTX, 1, transport=httpx.MockTransport(handler))
    assert result.stop_rule == "min_requests" and len(result.measured) == 5


def test_conversation_turns_carry_the_earlier_answers() -> None:
    sent: list[dict[str, object]] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, stream=SSE(gap_s=0))

    wl = workload(requests=6, warmup_requests=0, turns=3)
    result = measure(TARGET, wl, CTX, 2, transport=httpx.MockTransport(handler))
    rows = result.measured
    assert [(r.conversation, r.turn) for r in rows] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    third = next(b for b in sent if isinstance(b["prompt"], str) and b["prompt"].count("Hello!") == 2)
    assert third["prompt"] == "a\n\nHello!\n\nb\n\nHello!\n\nc"  # turns 0 and 1 with their answers, then turn 2


def test_tokenizer_counts_what_the_server_does_not() -> None:
    from tcobench.tasks.workload import WorkloadPlan

    class Words:
        name = "words"

        def count(self, text: str) -> int:
            return len(text.split())

        def special_tokens(self) -> int:
            return 1

    class NoUsage(SSE):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            for text in ("Hel lo", " there", "!"):
                yield f'data: {{"choices":[{{"text":"{text}","finish_reason":null}}]}}\n\n'.encode()
            yield b'data: {"choices":[{"text":"","finish_reason":"length"}]}\n\n'
            yield b"data: [DONE]\n\n"

    wl = workload(requests=1, warmup_requests=0, prompts=["one two three"])
    plan = WorkloadPlan(wl, tokenizer=Words(), overhead=1)  # type: ignore[arg-type]
    result = measure(
        TARGET, wl, CTX, 1, plan=plan, transport=httpx.MockTransport(lambda r: httpx.Response(200, stream=NoUsage()))
    )
    row = result.measured[0]
    assert (row.output_tokens, row.prompt_tokens, row.token_count_source) == (3, 3 + 1, "tokenizer")


def test_a_measure_result_prints_short_whatever_its_rows() -> None:
    """asyncio.run formats the finished task's result when it restores the SIGINT handler: a result's repr
    must not print every request row (docs/dev/performance.md#result-repr)."""
    from tcobench.tasks.load.record import MeasureResult

    result = MeasureResult(warmup=[], measured=[object()] * 100_000, measure_start_ns=1, measure_end_ns=2)  # type: ignore[list-item]
    assert repr(result) == "MeasureResult(warmup=0 rows, measured=100000 rows, stopped=None, stop_rule='requests')"


async def _passes_per_iteration(per_turn: int, tasks: int, cancel: int | None = None) -> tuple[list[int], list[int]]:
    """Start ``tasks`` completions in one loop iteration; (the order they passed the turnstile, the loop iteration
    each passed in). A ticker that re-arms itself with call_soon counts the iterations."""
    from tcobench.tasks.load.record import _Turnstile

    loop, turnstile = asyncio.get_running_loop(), _Turnstile(per_turn)
    iteration, order, seen = [0], list[int](), list[int]()

    def tick() -> None:
        iteration[0] += 1
        if len(order) + (cancel is not None) < tasks:
            loop.call_soon(tick)

    async def one(i: int) -> None:
        await turnstile.turn()
        order.append(i)
        seen.append(iteration[0])

    loop.call_soon(tick)
    running = [asyncio.ensure_future(one(i)) for i in range(tasks)]
    await asyncio.sleep(0)  # every task reaches the turnstile in this iteration
    if cancel is not None:
        running[cancel].cancel()
    await asyncio.gather(*running, return_exceptions=True)
    return order, seen


def test_the_turnstile_lets_a_few_completions_through_per_loop_iteration_in_order() -> None:
    order, seen = asyncio.run(_passes_per_iteration(per_turn=3, tasks=10))
    assert order == list(range(10))  # first come, first served
    per_iteration = [seen.count(i) for i in sorted(set(seen))]
    assert per_iteration == [3, 3, 3, 1]  # never more than 3 in one iteration, and the loop polled between them
    assert len(set(seen)) == 4


def test_a_completion_cancelled_at_the_turnstile_does_not_hold_the_others() -> None:
    order, seen = asyncio.run(_passes_per_iteration(per_turn=2, tasks=6, cancel=4))
    assert order == [0, 1, 2, 3, 5]  # 4 was cancelled while it waited; 5 still passes, in its own turn
    assert max(seen.count(i) for i in set(seen)) <= 2


def test_an_open_loop_sleep_never_wakes_before_its_instant_and_a_stop_cuts_it_short() -> None:
    """``Stop.sleep_until``: waits on the alarm thread (>= ALARM_MIN_NS) or asyncio's timer (shorter); never
    returns before the instant; a stop wakes a long wait at once; an instant already past returns at once."""
    import time

    from tcobench.tasks.load.pacing import ALARM_MIN_NS, Stop, _Alarm

    async def main() -> tuple[list[int], float]:
        stop, alarm = Stop(1.0), _Alarm(asyncio.get_running_loop())
        try:
            early = []
            for wait_ns in (3 * ALARM_MIN_NS, ALARM_MIN_NS // 2, 2 * ALARM_MIN_NS, -ALARM_MIN_NS):
                due = time.perf_counter_ns() + wait_ns
                await stop.sleep_until(due, alarm)
                early.append(min(0, time.perf_counter_ns() - due))
            asyncio.get_running_loop().call_later(0.05, stop.set, "test")
            t0 = time.monotonic()
            await stop.sleep_until(time.perf_counter_ns() + 60 * 10**9, alarm)
            return early, time.monotonic() - t0
        finally:
            alarm.close()

    early, cut_after_s = asyncio.run(main())
    assert early == [0, 0, 0, 0]
    assert cut_after_s < 30  # woken by the stop, not by the 60 s instant
