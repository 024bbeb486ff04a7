"""measure()'s bounds and early stops: the bounded stream reader, the 429/503 retry policy, API keys, stopping on
a signal or a run deadline with a grace period. The subject is client logic, so the transport is
httpx.MockTransport; tests/faults/ runs the same faults against real servers and a real `tcobench run`."""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import json
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, cast

import httpx
import pytest
from pydantic import SecretStr

from tcobench.errors import ConfigError
from tcobench.schemas import Protocol, WorkloadConfig
from tcobench.tasks.load import shutdown
from tcobench.tasks.load.measure import measure
from tcobench.tasks.load.record import RunContext
from tcobench.tasks.load.stream import MAX_RETRY_AFTER_S, StreamLimitError, Target, bounded_lines, retry_delay

CTX = RunContext("run1", "2026-11-30", "host")
TARGET = Target("http://127.0.0.1:1", Protocol.openai, "m")
DONE = (
    b'data: {"choices":[{"text":"x","finish_reason":null}]}\n\n'
    b'data: {"choices":[{"text":"","finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1}}\n\n'
    b"data: [DONE]\n\n"
)


def workload(**kw: object) -> WorkloadConfig:
    return WorkloadConfig.model_validate_json(json.dumps({"prompts": ["a"], "warmup_requests": 0, **kw}))


class Chunks(httpx.AsyncByteStream):
    def __init__(self, *chunks: bytes, gap_s: float = 0.0) -> None:
        self.chunks, self.gap_s = chunks, gap_s

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            await asyncio.sleep(self.gap_s)
            yield chunk


async def _lines(*chunks: bytes, limit: int = 16) -> list[str]:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return [line async for line in bounded_lines(source(), limit)]


@pytest.fixture(autouse=True)
def _no_pending_stop() -> Iterator[None]:
    shutdown.reset()
    yield
    shutdown.reset()


# --- the bounded line reader ------------------------------------------------------------------------------


def test_lines_end_with_lf_crlf_or_cr_across_chunk_borders() -> None:
    assert asyncio.run(_lines(b"a\r", b"\nb\rc\n", b"d")) == ["a", "b", "c", "d"]
    assert asyncio.run(_lines(b"\xe2\x82", b"\xac\n")) == ["\u20ac"]  # a character split across chunks


def test_a_line_without_end_past_the_limit_fails() -> None:
    with pytest.raises(StreamLimitError, match="no line end within 16 bytes"):
        asyncio.run(_lines(b"x" * 10, b"x" * 10))


def test_a_chunk_over_the_limit_fails() -> None:
    with pytest.raises(StreamLimitError, match="chunk of 17 bytes exceeds the 16-byte limit"):
        asyncio.run(_lines(b"x" * 17))


def test_no_newline_stream_fails_the_request_with_a_clear_error() -> None:
    endless = Chunks(*([b"y" * 65536] * 40))  # 2.5 MiB without a line end
    result = measure(
        TARGET,
        workload(requests=1),
        CTX,
        1,
        transport=httpx.MockTransport(lambda r: httpx.Response(200, stream=endless)),
    )
    assert (
        result.measured[0].error == "stream refused: no line end within 1,048,576 bytes of the stream "
        "(malformed or hostile server)"
    )


def test_compressed_stream_is_refused_and_identity_asked_for() -> None:
    seen: list[str | None] = []

    def gzip(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("accept-encoding"))
        return httpx.Response(200, headers={"Content-Encoding": "gzip"}, stream=Chunks(b"\x1f\x8b"))

    result = measure(TARGET, workload(requests=1), CTX, 1, transport=httpx.MockTransport(gzip))
    assert seen == ["identity"]
    assert "compressed the stream (Content-Encoding: gzip)" in (result.measured[0].error or "")


def test_error_body_is_read_only_up_to_its_limit() -> None:
    big = Chunks(*([b"e" * 1024] * 10_000))  # 10 MiB, never read in full
    result = measure(
        TARGET, workload(requests=1), CTX, 1, transport=httpx.MockTransport(lambda r: httpx.Response(500, stream=big))
    )
    assert result.measured[0].error == "HTTP 500: " + "e" * 200


# --- retries of 429/503 with Retry-After ------------------------------------------------------------------


def test_retry_policy() -> None:
    assert retry_delay(429, "2", 0, 3) == 2.0
    assert retry_delay(503, "0", 2, 3) == 0.0
    assert retry_delay(503, "0", 3, 3) is None  # retries used up
    assert retry_delay(429, None, 0, 3) is None  # no Retry-After: not retried
    assert retry_delay(429, "soon", 0, 3) is None
    assert retry_delay(429, str(int(MAX_RETRY_AFTER_S) + 1), 0, 3) is None  # too long to wait
    assert retry_delay(500, "1", 0, 3) is None  # only 429 and 503
    when = email.utils.format_datetime(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=30), usegmt=True)
    wait = retry_delay(429, when, 0, 3)
    assert wait is not None and 25 < wait <= 30


def test_throttled_requests_are_retried_and_counted() -> None:
    attempts: dict[int, int] = {}

    def throttle_twice(request: httpx.Request) -> httpx.Response:
        seed = json.loads(request.content)["seed"]
        attempts[seed] = attempts.get(seed, 0) + 1
        if attempts[seed] <= 2:
            return httpx.Response(429, headers={"Retry-After": "0"}, text="slow down")
        return httpx.Response(200, stream=Chunks(DONE))

    result = measure(TARGET, workload(requests=2), CTX, 1, transport=httpx.MockTransport(throttle_twice))
    assert [(r.error, r.retries) for r in result.measured] == [(None, 2), (None, 2)]


def test_retries_are_bounded_and_the_error_says_so() -> None:
    def busy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"Retry-After": "0"}, text="overloaded")

    result = measure(TARGET, workload(requests=1, max_retries=2), CTX, 1, transport=httpx.MockTransport(busy))
    assert result.measured[0].retries == 2
    assert result.measured[0].error == "HTTP 503: overloaded (gave up after 2 retries)"


def test_429_without_retry_after_is_not_retried() -> None:
    result = measure(
        TARGET, workload(requests=1), CTX, 1, transport=httpx.MockTransport(lambda r: httpx.Response(429, text="no"))
    )
    assert result.measured[0].retries == 0
    assert result.measured[0].error == "HTTP 429: no (no usable Retry-After: not retried)"


# --- API keys ------------------------------------------------------------------------------------------------


def test_api_key_is_sent_as_bearer_and_masked_in_errors() -> None:
    seen: list[str | None] = []

    def echo(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return httpx.Response(401, text=f"bad key {request.headers.get('authorization')}")

    target = Target("http://127.0.0.1:1", Protocol.openai, "m", api_key=SecretStr("sk-test-123"))
    result = measure(target, workload(requests=1), CTX, 1, transport=httpx.MockTransport(echo))
    assert seen == ["Bearer sk-test-123"]
    assert result.measured[0].error == "HTTP 401: bad key Bearer ***"


def test_missing_key_variable_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from tcobench.schemas import EngineKind
    from tcobench.tasks.engine.endpoint import api_key_of

    monkeypatch.delenv("NOT_SET_KEY", raising=False)
    engine = SimpleNamespace(kind=EngineKind.endpoint, api_key_env="NOT_SET_KEY")
    with pytest.raises(ConfigError, match="NOT_SET_KEY is not set"):
        api_key_of(cast(Any, SimpleNamespace(engine=engine)))
    monkeypatch.setenv("NOT_SET_KEY", "sk-1")  # read at use, the config's variable before a command's key
    key = api_key_of(cast(Any, SimpleNamespace(engine=engine)), SecretStr("given"))
    assert key is not None and key.get_secret_value() == "sk-1"


# --- stopping early: signals, deadline, grace ---------------------------------------------------------------


class Slow:
    """A transport whose streams take ``gap_s`` per chunk, counting requests begun (for signals sent mid-run)."""

    def __init__(self, gap_s: float) -> None:
        self.gap_s = gap_s
        self.begun = 0
        self.lock = threading.Lock()

    def handle(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.begun += 1
        return httpx.Response(200, stream=Chunks(DONE, gap_s=self.gap_s))

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)


def _signal_when(ready: Callable[[], bool], signum: int = signal.SIGINT, times: int = 1) -> threading.Thread:
    """Call the stop path a signal handler calls, from another thread, once ``ready()`` (a signal mid-run)."""

    def fire() -> None:
        deadline = time.monotonic() + 60
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.01)
        for _ in range(times):
            with shutdown.deferred():
                shutdown.on_signal(signum)
            time.sleep(0.2)

    thread = threading.Thread(target=fire)
    thread.start()
    return thread


def test_a_signal_stops_sending_and_keeps_what_finished_in_the_grace_period() -> None:
    shutdown.configure(30.0)  # long enough for the request in flight
    slow = Slow(0.1)
    thread = _signal_when(lambda: slow.begun >= 3)  # two finished, the third in flight
    result = measure(TARGET, workload(requests=50), CTX, 1, transport=slow.transport())
    thread.join()
    assert result.stopped == "interrupted by SIGINT" and result.cancelled == 0
    assert 3 <= len(result.measured) < 50 and all(r.error is None for r in result.measured)
    assert [r.request_index for r in result.measured] == list(range(len(result.measured)))


def test_requests_in_flight_past_the_grace_period_are_cancelled_and_dropped() -> None:
    shutdown.configure(0.2)
    slow = Slow(30.0)
    thread = _signal_when(lambda: slow.begun >= 2, signal.SIGTERM)
    result = measure(TARGET, workload(requests=4), CTX, 2, transport=slow.transport())
    thread.join()
    assert result.stopped == "interrupted by SIGTERM" and result.cancelled == 2 and result.measured == []


def test_a_second_signal_ends_the_grace_period_at_once() -> None:
    shutdown.configure(60.0)
    slow = Slow(30.0)
    thread = _signal_when(lambda: slow.begun >= 1, times=2)
    result = measure(TARGET, workload(requests=4), CTX, 1, transport=slow.transport())  # done in well under 60 s
    thread.join()
    assert result.stopped == "interrupted by SIGINT" and result.cancelled == 1


def test_a_pending_stop_sends_nothing() -> None:
    with shutdown.deferred():
        shutdown.on_signal(signal.SIGHUP)
    result = measure(TARGET, workload(requests=3, warmup_requests=1), CTX, 1, transport=Slow(0.0).transport())
    assert result.stopped == "interrupted by SIGHUP" and result.warmup == [] and result.measured == []


def test_the_run_deadline_stops_the_run_like_a_signal() -> None:
    shutdown.configure(0.1)
    slow = Slow(0.05)
    result = measure(TARGET, workload(requests=100_000, run_deadline_s=0.5), CTX, 1, transport=slow.transport())
    assert result.stopped == "run deadline of 0.5 s reached"
    assert len(result.measured) < 100_000


def test_poisson_arrivals_stop_too() -> None:
    shutdown.configure(5.0)
    slow = Slow(0.0)
    thread = _signal_when(lambda: slow.begun >= 3)
    result = measure(TARGET, workload(requests=1000, mode="poisson", rate=20.0), CTX, 4, transport=slow.transport())
    thread.join()
    assert result.stopped == "interrupted by SIGINT" and 3 <= len(result.measured) < 1000
