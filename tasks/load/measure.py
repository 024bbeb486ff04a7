"""measure: send warm-up and measured requests to an engine and time every streamed chunk.

Timing (all integers, ns): a phase takes one (wall clock, perf counter) anchor; every instant is on the perf
counter, converted to wall time through that anchor, so durations are exact differences of a monotonic clock. A
line's instant is when its last bytes reached the host: with the lean client (``tasks.load.http1``, every streaming
request) the kernel's receive stamp of the read that brought them, so a busy event loop does not stretch TTFT or
the gaps unless it falls so far behind that two chunks of one stream arrive before it reads the first (the
kernel merges them into one receive-queue entry with the later stamp, as the self-check's loop lag shows). A 200
stream is decoded, split into lines and parsed inside the connection's receive callback (``Response.stream``): no
task wakes per chunk. With an injected httpx transport, the perf counter read when the chunk is parsed.

Design notes: docs/architecture.md#tasks-measure.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime as dt
import email.utils
import hashlib
import itertools
import json
import os
import random
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields
from typing import Any

import httpx

from tcobench.errors import ConfigError, EngineError
from tcobench.schemas import ClientProcessCheck, LoadMode, Phase, Protocol, RequestRecord, WorkloadConfig

from ..tls import tls_context
from ..workload.plan import RequestInput, RequestSpec, WorkloadPlan
from . import http1, shutdown
from .protocols import Adapter, EngineInfo, ServerCounters, adapter_for
from .selfcheck import ProcessProbe

__all__ = [
    "ALARM_MIN_NS",
    "COMPLETIONS_PER_TURN",
    "MAX_ERROR_BODY_BYTES",
    "MAX_LINE_BYTES",
    "MAX_RETRY_AFTER_S",
    "MeasureResult",
    "OUTPUT_PREFIX_CHARS",
    "OnPhase",
    "OnRequest",
    "RunContext",
    "StreamLimitError",
    "Target",
    "Counter",
    "Instant",
    "Slice",
    "answer_fingerprint",
    "api_key",
    "arrivals",
    "client_procs",
    "LineSplitter",
    "bounded_lines",
    "make_send",
    "measure",
    "preflight",
    "probe_prompt_tokens",
    "retry_delay",
]

MAX_LINE_BYTES = 1 << 20  # 1 MiB: a streamed line (one SSE data line or NDJSON object) or network chunk
MAX_ERROR_BODY_BYTES = 4096  # what is read of a non-200 answer's body
MAX_RETRY_AFTER_S = 60.0  # a longer Retry-After is not waited for: the request fails naming it
RETRY_STATUSES = (429, 503)
# Finished requests whose bookkeeping runs per event-loop iteration (``_Turnstile``): the loop reads its sockets within
# a few completions' time however many streams end together (docs/performance.md#completion-bookkeeping).
COMPLETIONS_PER_TURN = 4
# An open-loop wait this long or longer is timed by a thread (``_Alarm``), a shorter one by asyncio's timer: gaps
# that short come at rates where the loop is seldom idle in epoll (so its millisecond rounding seldom applies), and
# a thread waking per arrival would compete with the loop for the GIL (docs/performance.md#alarm-thread).
ALARM_MIN_NS = 1_000_000

OnRequest = Callable[[RequestRecord], None]
OnPhase = Callable[[Phase], None]


@dataclass(frozen=True)
class Target:
    """Where requests go."""

    base_url: str
    protocol: Protocol
    model: str
    chat: bool = False
    connect_timeout_s: float = 5.0
    api_key_env: str | None = None  # NAME of the environment variable with the Bearer token; never the token


def api_key(target: Target) -> str | None:
    """The API key of ``target`` from its environment variable (read at use, never stored); ConfigError if unset."""
    if target.api_key_env is None:
        return None
    value = os.environ.get(target.api_key_env, "")
    if not value:
        raise ConfigError(f"engine.api_key_env: the environment variable {target.api_key_env} is not set or empty")
    return value


def _headers(key: str | None) -> dict[str, str]:
    headers = {"Accept-Encoding": "identity"}  # compressed streams could expand without bound
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


def _redact(text: str | None, key: str | None) -> str | None:
    """An error text with the API key masked (a server may echo the header it was sent)."""
    return text.replace(key, "***") if text and key else text


@dataclass(frozen=True)
class RunContext:
    """Keys every request row of a run carries."""

    run_id: str
    date: str
    host: str
    client_proc: int = 0  # the client worker process that sends (multi-process load generation)


@dataclass(frozen=True)
class MeasureResult:
    warmup: list[RequestRecord]
    measured: list[RequestRecord]
    measure_start_ns: int | None
    measure_end_ns: int | None
    stopped: str | None = None  # why the run stopped before every request finished (a signal, its deadline)
    cancelled: int = 0  # requests in flight when the grace period ended: cancelled and not stored
    stop_rule: str = "requests"  # requests | duration | min_requests
    client: tuple[ClientProcessCheck, ...] = ()  # the self-check of each client process over the measured phase

    def __repr__(self) -> str:
        # Short: asyncio.run formats the finished task (its result included) when it restores the SIGINT handler
        # (signal.getsignal's enum lookup of a partial), and the default repr of every request row was slow
        # at the end of each run (docs/performance.md#result-repr).
        return (f"MeasureResult(warmup={len(self.warmup)} rows, measured={len(self.measured)} rows, "
                f"stopped={self.stopped!r}, stop_rule={self.stop_rule!r})")  # fmt: skip


class _Clock:
    """One (wall clock, perf counter) anchor; the client's worker processes get the parent's, so their wall times
    agree (the perf counter is CLOCK_MONOTONIC, one clock for every process on the host)."""

    def __init__(self, anchor: tuple[int, int] | None = None) -> None:
        self.wall0, self.perf0 = anchor or (time.time_ns(), time.perf_counter_ns())

    def wall(self, perf_ns: int) -> int:
        return self.wall0 + (perf_ns - self.perf0)


class _Clients:
    """One connection per request slot, lent to one request at a time: a kept-alive ``http1.Connection`` (the
    lean client), or, when a test injects an httpx transport, a single-connection httpx client.

    httpcore's pool re-scans every connection (and, for each, every connection again) on each pool
    event, so one shared pool of N connections costs O(N^2) per request: at 64 streams it took most of
    the client's CPU. N one-connection pools cost O(1) each; httpx's per-request and per-chunk machinery still
    cost most of the client's CPU (docs/performance.md), hence ``http1``. Connections are made on demand,
    sharing one SSL context; one per request in flight (at most the concurrency).
    """

    def __init__(self, target: Target, workload: WorkloadConfig, transport: httpx.AsyncBaseTransport | None) -> None:
        self._timeout = httpx.Timeout(workload.request_timeout_s, connect=target.connect_timeout_s)
        self._connect_timeout_s = target.connect_timeout_s
        self._transport = transport
        self.raw = transport is None  # no transport injected: the lean client
        self.key = api_key(target)
        self._headers = _headers(self.key)
        self._ssl = tls_context()  # once per process, not once per client
        self._free: list[httpx.AsyncClient] = []
        self._all: list[httpx.AsyncClient] = []
        self._origin = http1.Origin.of(target.base_url) if self.raw else None
        self._idle: list[http1.Connection] = []
        self._conns: list[http1.Connection] = []
        self._targets: dict[str, bytes] = {}

    def _make(self) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        # trust_env=False: a proxy from the environment must never sit between us and the engine.
        client = httpx.AsyncClient(timeout=self._timeout, limits=limits, trust_env=False, headers=self._headers,
                                   transport=self._transport, verify=self._ssl)  # fmt: skip
        self._all.append(client)
        return client

    @asynccontextmanager
    async def lease(self) -> AsyncIterator[httpx.AsyncClient]:
        client = self._free.pop() if self._free else self._make()
        try:
            yield client
        finally:
            self._free.append(client)

    def take(self) -> http1.Connection:
        """A connection of the lean client (never through a proxy); ``give`` it back after the request."""
        if self._idle:
            return self._idle.pop()
        assert self._origin is not None
        conn = http1.Connection(self._origin, self._headers, self._ssl, self._connect_timeout_s)
        self._conns.append(conn)
        return conn

    def give(self, conn: http1.Connection) -> None:
        self._idle.append(conn)

    def target(self, url: str) -> bytes:
        """The request line's target of ``url`` (one of the run's few URLs, parsed once)."""
        found = self._targets.get(url)
        if found is None:
            found = self._targets[url] = http1.request_target(url)
        return found

    async def aclose(self) -> None:
        for client in self._all:
            await client.aclose()
        if self._conns:  # at once: a TLS close may wait for the server (each at most 1 s)
            await asyncio.gather(*(conn.aclose() for conn in self._conns))


_COUNTER_NAMES = frozenset(f.name for f in fields(ServerCounters))


def _apply(counters: ServerCounters, update: dict[str, Any]) -> None:
    for key, value in update.items():
        if key in _COUNTER_NAMES and value is not None:
            setattr(counters, key, value)


def _finalize(counters: ServerCounters) -> None:
    """Server counters stand in for usage when the server sent none (never chunk counts)."""
    if counters.output_tokens is None and counters.eval_count is not None:
        counters.output_tokens = counters.eval_count
        counters.token_count_source = "server_counters"
    if counters.prompt_tokens is None and counters.prompt_eval_count is not None:
        counters.prompt_tokens = counters.prompt_eval_count + (counters.cached_tokens or 0)


class StreamLimitError(Exception):
    """A response broke a bound of the stream reader (line or chunk size, compression)."""


class LineSplitter:
    """Lines (ended by LF, CRLF or CR, ends removed) of a byte stream fed in pieces, holding at most ``max_bytes``
    of one line: a piece over ``max_bytes``, or a line still without its end past ``max_bytes``, raises
    StreamLimitError (a stream with no newline costs bounded memory, not memory until the timeout)."""

    def __init__(self, max_bytes: int = MAX_LINE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._pending = b""

    def feed(self, chunk: bytes) -> list[str]:
        max_bytes = self.max_bytes
        if len(chunk) > max_bytes:
            raise StreamLimitError(f"a stream chunk of {len(chunk):,} bytes exceeds the {max_bytes:,}-byte limit")
        pieces = (self._pending + chunk if self._pending else chunk).splitlines(keepends=True)
        # the last piece is unfinished unless it ends with LF (a trailing CR may be the first half of CRLF)
        self._pending = pieces.pop() if pieces and not pieces[-1].endswith(b"\n") else b""
        if len(self._pending) > max_bytes:
            raise StreamLimitError(
                f"no line end within {max_bytes:,} bytes of the stream (malformed or hostile server)"
            )
        return [piece.rstrip(b"\r\n").decode("utf-8", "replace") for piece in pieces]

    def end(self) -> list[str]:
        """The last line, if the stream did not end with a line end."""
        pending, self._pending = self._pending, b""
        return [pending.rstrip(b"\r\n").decode("utf-8", "replace")] if pending else []


async def bounded_lines(chunks: AsyncIterator[bytes], max_bytes: int = MAX_LINE_BYTES) -> AsyncIterator[str]:
    """The lines of a byte stream (``LineSplitter``'s rules)."""
    lines = LineSplitter(max_bytes)
    async for chunk in chunks:
        for line in lines.feed(chunk):
            yield line
    for line in lines.end():
        yield line


async def _raw(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body as it arrives, not decoded (a response built with its content, as in tests, is that content)."""
    if response.is_stream_consumed:
        yield response.content
        return
    async for chunk in response.aiter_raw():
        yield chunk


async def _error_body(chunks: AsyncIterator[bytes]) -> str:
    """The start of a non-200 answer's body (at most MAX_ERROR_BODY_BYTES are read), one line."""
    body = b""
    async for chunk in chunks:
        body += chunk
        if len(body) >= MAX_ERROR_BODY_BYTES:
            break
    return " ".join(body[:MAX_ERROR_BODY_BYTES].decode("utf-8", "replace").split())


def _retry_after_s(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); None if absent or invalid."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def retry_delay(status: int | None, retry_after: str | None, retries: int, max_retries: int) -> float | None:
    """Seconds to wait before sending again, or None: only HTTP 429/503 with a usable Retry-After, at most
    ``max_retries`` times, each wait at most MAX_RETRY_AFTER_S."""
    if status not in RETRY_STATUSES or retries >= max_retries:
        return None
    wait = _retry_after_s(retry_after)
    return wait if wait is not None and wait <= MAX_RETRY_AFTER_S else None


def _retry_note(status: int | None, retry_after: str | None, retries: int, max_retries: int) -> str:
    """Why a 429/503 was not (or no longer) retried, for the request's error."""
    if status not in RETRY_STATUSES:
        return ""
    wait = _retry_after_s(retry_after)
    if retries >= max_retries and wait is not None:
        return f" (gave up after {retries} retries)"
    if wait is None:
        return " (no usable Retry-After: not retried)"
    return f" (Retry-After {wait:g} s is over the {MAX_RETRY_AFTER_S:g} s limit: not retried)"


def _compression(headers: Mapping[str, str]) -> str | None:
    """The response's content encoding when it is not identity (tcobench asks for identity), else None."""
    encoding = headers.get("content-encoding", "identity").strip().lower()
    return None if encoding in ("", "identity") else encoding


class _Stream:
    """Accumulates one response: content timestamps, counters, end marker, error."""

    def __init__(self) -> None:
        self.content_ns: list[int] = []
        self.counters = ServerCounters()
        self.done = False
        self.error: str | None = None
        self.status: int | None = None
        self.retry_after: str | None = None
        self.text: list[str] = []  # the answer (multi-turn history; counting when the server counts nothing)

    async def read(self, status: int, headers: Mapping[str, str], body: AsyncIterator[bytes], adapter: Adapter,
                   chat: bool, arrival: Callable[[], int] = time.perf_counter_ns) -> None:  # fmt: skip
        """Read one response (``headers``: a mapping that answers lower-case names) from its raw ``body``.

        ``arrival``: when the bytes ``body`` last yielded reached the host (perf counter, ns): a content event is
        timed by it (the lean client's kernel receive stamp; with httpx, the time it is read)."""
        self.status = status
        if status != 200:
            self.retry_after = headers.get("retry-after")
            self.error = f"HTTP {status}: {(await _error_body(body))[:200]}"
            return
        encoding = _compression(headers)
        if encoding is not None:
            raise StreamLimitError(f"the server compressed the stream (Content-Encoding: {encoding[:40]}) though "
                                   "tcobench asked for identity")  # fmt: skip
        lines = LineSplitter()
        async for chunk in body:
            if self._events(lines.feed(chunk), arrival(), adapter, chat):
                return
        self._end(lines, arrival(), adapter, chat)

    async def read_response(self, response: http1.Response, adapter: Adapter, chat: bool) -> None:
        """Read one response of the lean client: a 200 identity stream is handed over piece by piece inside the
        connection's receive callback (``Response.stream``: no task wakes per chunk), each piece timed by its
        kernel receive stamp; anything else as ``read`` does."""
        if response.status_code != 200 or _compression(response.headers) is not None:
            await self.read(response.status_code, response.headers, response.aiter_raw(), adapter, chat,
                            response.arrival_ns)  # fmt: skip
            return
        self.status = 200
        lines = LineSplitter()
        await response.stream(lambda payload, now: self._events(lines.feed(payload), now, adapter, chat))
        if self.error is None:
            self._end(lines, time.perf_counter_ns(), adapter, chat)

    def _end(self, lines: LineSplitter, now: int, adapter: Adapter, chat: bool) -> None:
        """The stream ended: its last line without a line end, and whether the server marked it complete."""
        if self._events(lines.end(), now, adapter, chat):
            return
        if not self.done and self.counters.finish_reason is None:
            self.error = "stream ended before the server marked it complete"

    def _events(self, lines: list[str], now: int, adapter: Adapter, chat: bool) -> bool:
        """Take the events of lines that arrived at ``now``; True once one of them is an error (reading stops)."""
        for line in lines:
            event = adapter.parse_line(line, chat)
            if event is None:
                continue
            if event.content:
                self.content_ns.append(now)
                self.text.append(event.text)
            _apply(self.counters, event.fields)
            if event.error:
                self.error = event.error
                return True
            self.done = self.done or event.done
        return False


async def _attempt(clients: _Clients, adapter: Adapter, target: Target, url: str, body: dict[str, Any],
                   timeout_s: float) -> tuple[_Stream, int, bool]:  # fmt: skip
    """One send: (what came back, when it was sent, whether the connection was stale and nothing came back).

    With the lean client "sent" is when the request's bytes were written (after connecting, if it had to); with
    an injected httpx transport, when the attempt began."""
    stream = _Stream()
    t0 = time.perf_counter_ns()
    conn: http1.Connection | None = None
    stale = False
    try:
        async with asyncio.timeout(timeout_s):
            if clients.raw:
                conn = clients.take()
                async with conn.post(clients.target(url), _json_bytes(body)) as response:
                    await stream.read_response(response, adapter, target.chat)
            else:
                async with clients.lease() as client, client.stream("POST", url, json=body) as r:
                    await stream.read(r.status_code, r.headers, _raw(r), adapter, target.chat)
    except TimeoutError:
        stream.error = f"timed out after {timeout_s:g} s"
    except StreamLimitError as exc:
        stream.error = f"stream refused: {exc}"
    except (httpx.RemoteProtocolError, http1.RemoteProtocolError) as exc:
        stream.error = f"RemoteProtocolError: {exc or 'connection closed'}"
        if stream.status is None:  # a kept-alive connection the server had closed: nothing was sent back
            stale = True
        else:
            stream.error += " (stream truncated: the connection closed mid-response)"
    except (httpx.HTTPError, http1.HttpError) as exc:
        stream.error = f"{type(exc).__name__}: {exc or 'connection failed'}"
    finally:
        if conn is not None:
            clients.give(conn)
    if conn is not None and conn.sent_ns:
        t0 = conn.sent_ns
    return stream, t0, stale


def _json_bytes(body: dict[str, Any]) -> bytes:
    """A request body as httpx's ``json=`` encodes it."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


@dataclass(frozen=True)
class _Sent:
    """One finished request: its row, and the answer text a later turn carries."""

    record: RequestRecord
    answer: str


async def _send(
    clients: _Clients, adapter: Adapter, target: Target, workload: WorkloadConfig, given: RequestInput
) -> tuple[int, int, int, _Stream, int]:
    """Send one request and read its stream: (first send, start, end) on the perf counter, what arrived, and the
    retries (start is the last attempt's send: a resend is timed from itself)."""
    body = adapter.request_body(target.model, given, workload, target.chat)
    url = target.base_url + adapter.path(target.chat)
    retries, reconnected, first = 0, False, None
    while True:
        stream, t0, stale = await _attempt(clients, adapter, target, url, body, workload.request_timeout_s)
        first = t0 if first is None else first
        if stale and not reconnected:
            # llama.cpp's HTTP server closes a connection after a few requests: send again on a fresh one, timed
            # from the new start.
            reconnected = True
            continue
        wait = retry_delay(stream.status, stream.retry_after, retries, workload.max_retries)
        if wait is None:
            break
        retries += 1
        await asyncio.sleep(wait)
    if stream.error is not None:
        stream.error = _redact(stream.error + _retry_note(stream.status, stream.retry_after, retries,
                                                          workload.max_retries), clients.key)  # fmt: skip
    t_end = time.perf_counter_ns()
    return first, t0, t_end, stream, retries


def _record(
    spec: RequestSpec, given: RequestInput, ctx: RunContext, clock: _Clock, t0: int, t_end: int, stream: _Stream,
    retries: int, deadline: int | None, lateness: int | None = None,
) -> RequestRecord:  # fmt: skip
    c = stream.counters
    _finalize(c)
    times = stream.content_ns
    return RequestRecord(
        run_id=ctx.run_id,
        date=ctx.date,
        host=ctx.host,
        phase=spec.phase,
        request_index=spec.index,
        prompt_index=spec.prompt_index,
        seed=spec.seed,
        conversation=spec.conversation,
        turn=spec.turn,
        prompt_sha256=given.sha256,
        requested_input_tokens=given.requested_input_tokens,
        requested_output_tokens=given.max_tokens,
        in_flight_at_stop=deadline is not None and t0 < deadline < t_end,
        start_ns=clock.wall(t0),
        ttft_ns=times[0] - t0 if times else None,
        e2e_ns=t_end - t0,
        decode_ns=times[-1] - times[0] if len(times) > 1 else None,
        chunks=len(times),
        itl_ns=[b - a for a, b in zip(times, times[1:], strict=False)],
        prompt_tokens=c.prompt_tokens,
        output_tokens=c.output_tokens,
        cached_tokens=c.cached_tokens,
        token_count_source=c.token_count_source,
        finish_reason=c.finish_reason,
        server_load_ns=c.load_ns,
        server_prompt_eval_count=c.prompt_eval_count,
        server_prompt_eval_ns=c.prompt_eval_ns,
        server_eval_count=c.eval_count,
        server_eval_ns=c.eval_ns,
        server_total_ns=c.total_ns,
        counter_note=c.note,
        http_status=stream.status,
        retries=retries,
        send_lateness_ns=lateness,
        client_proc=ctx.client_proc,
        error=stream.error,
    )


async def _count_missing(plan: WorkloadPlan, given: RequestInput, stream: _Stream) -> None:
    """Token counts the server did not give, from the run's tokenizer (off the event loop)."""
    c = stream.counters
    if plan.tokenizer is None or stream.error is not None:
        return
    if c.output_tokens is None and c.eval_count is None:
        c.output_tokens = await asyncio.to_thread(plan.tokenizer.count, "".join(stream.text))
        c.token_count_source = "tokenizer"
    if c.prompt_tokens is None and c.prompt_eval_count is None:
        c.prompt_tokens = await asyncio.to_thread(plan.tokenizer.count, given.text) + plan.overhead
        c.token_count_source = "tokenizer"


class Counter:
    """A count that goes up: requests started, units handed out. ``SharedCounter`` (tasks/load/loadgen.py) is the same
    across the client's worker processes."""

    def __init__(self) -> None:
        self._value = 0

    def take(self) -> int:
        """The value before adding one."""
        value, self._value = self._value, self._value + 1
        return value

    @property
    def value(self) -> int:
        return self._value


class Instant:
    """A time set once: the first measured request's send. ``SharedInstant`` (tasks/load/loadgen.py) is the same across
    the client's worker processes."""

    def __init__(self) -> None:
        self._value: int | None = None

    def settle(self, now: int) -> int:
        """The time: ``now`` if it was not set yet."""
        if self._value is None:
            self._value = now
        return self._value

    @property
    def value(self) -> int | None:
        return self._value


class _Gate:
    """Whether another request may start: a count of requests, or a deadline with a minimum count."""

    def __init__(self, count: int | None, duration_s: float | None, min_requests: int, started: Counter | None = None,
                 first: Instant | None = None) -> None:  # fmt: skip
        self.count, self.min_requests, self.counter = count, min_requests, started or Counter()
        self.duration_ns = int(duration_s * 1e9) if duration_s is not None else None
        # the clock starts when the first request is sent (by any client process; not when the phase is set up):
        # building prompts (tokenizer calls) on a busy machine must not eat into the measured duration
        self.first = first or Instant()
        self._deadline: int | None = None
        self.forced = False  # a request started after the deadline because min_requests was not reached

    @property
    def started(self) -> int:
        return self.counter.value

    @property
    def deadline(self) -> int | None:
        """No request is sent after this (perf counter, ns); None until the first one was sent, or untimed."""
        if self._deadline is None and self.duration_ns is not None:
            first = self.first.value
            if first is not None:
                self._deadline = first + self.duration_ns
        return self._deadline

    def start(self, now: int) -> None:
        """A request is sent at ``now``: the first one starts the clock."""
        if self.duration_ns is not None and self._deadline is None:
            self._deadline = self.first.settle(now) + self.duration_ns

    def admit(self, index: int) -> bool:
        if self.count is not None:
            return index < self.count
        if self.deadline is None or time.perf_counter_ns() < self.deadline:
            return True
        if self.started < self.min_requests:
            self.forced = True
            return True
        return False

    @property
    def rule(self) -> str:
        if self.count is not None:
            return "requests"
        return "min_requests" if self.forced else "duration"


Fire = Callable[[int, int | None], Awaitable[bool]]  # runs unit i (a request, or a conversation's turns), due when


class _Stop:
    """Why this run stops early, if it does: a signal (``tasks.load.shutdown``) or the run's deadline.

    ``bounded`` runs a phase; on a stop the load loops send nothing more, requests in flight get ``grace_s`` to
    finish (less if ``hurry`` is called: a second signal), and the phase is then cancelled; its finished records
    stay where ``fire`` put them.
    """

    def __init__(self, grace_s: float) -> None:
        self.event = asyncio.Event()
        self.hurried = asyncio.Event()
        self.reason: str | None = None
        self.grace_s = grace_s

    def set(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
            self.event.set()

    def hurry(self, reason: str) -> None:
        self.set(reason)
        self.hurried.set()

    @property
    def is_set(self) -> bool:
        return self.event.is_set()

    async def sleep_until(self, due_ns: int, alarm: _Alarm) -> None:
        """Sleep until perf-counter instant ``due_ns``, waking early on a stop: a wait of ``ALARM_MIN_NS`` or more
        on ``alarm`` (to about 0.1 ms), a shorter one on the loop's own timer (stops are checked after it)."""
        left = due_ns - time.perf_counter_ns()
        if left < ALARM_MIN_NS:
            await asyncio.sleep(max(0, left) / 1e9)
            return
        ring = alarm.at(due_ns)
        stop: asyncio.Future[Any] = asyncio.ensure_future(self.event.wait())
        try:
            await asyncio.wait({ring, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            ring.cancel()

    async def bounded(self, phase: Awaitable[None]) -> None:
        """Run ``phase`` to its end, or to a stop plus the grace period, then cancel it."""
        work = asyncio.ensure_future(phase)
        stop = asyncio.ensure_future(self.event.wait())
        hurry = asyncio.ensure_future(self.hurried.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
            if not work.done():
                await asyncio.wait({work, hurry}, timeout=self.grace_s, return_when=asyncio.FIRST_COMPLETED)
            if work.done():
                work.result()
                return
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
        finally:
            stop.cancel()
            hurry.cancel()


class _Alarm:
    """Wakes the event loop at a perf-counter instant, to about 0.1 ms: the open loop's send times.

    asyncio's timers ride epoll, whose timeout Python rounds up to whole milliseconds, so a send timed by
    ``asyncio.sleep`` left 0-1 ms late (docs/performance.md#alarm-thread). A thread that sleeps to the instant (a
    condition wait: a monotonic-clock wait in microseconds) and wakes the loop through its self-pipe
    (``call_soon_threadsafe``) does not round, and costs no CPU while it waits. One instant at a time: the Poisson loop
    waits for one arrival after another."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._cond = threading.Condition()
        self._pending: tuple[int, asyncio.Future[None]] | None = None  # (due, its future): one instant at a time
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="tcobench-alarm", daemon=True)
        self._thread.start()

    def at(self, due_ns: int) -> asyncio.Future[None]:
        """A future that is done at ``due_ns`` (perf counter, ns); it replaces any earlier one."""
        ring: asyncio.Future[None] = self._loop.create_future()
        if due_ns <= time.perf_counter_ns():
            ring.set_result(None)
            return ring
        with self._cond:
            self._pending = (due_ns, ring)
            self._cond.notify()
        return ring

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                if self._pending is None:
                    self._cond.wait()
                    continue
                due, ring = self._pending
                left = due - time.perf_counter_ns()
                if left > 0:
                    self._cond.wait(left / 1e9)
                    continue
                self._pending = None
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
                    self._loop.call_soon_threadsafe(_ring_once, ring)


def _ring_once(ring: asyncio.Future[None]) -> None:
    if not ring.done():  # a stop may have cancelled it
        ring.set_result(None)


@contextlib.contextmanager
def _stop_on_signal_or_deadline(stop: _Stop, deadline_s: float | None) -> Iterator[None]:
    """Wire ``stop`` to stop requests (from any thread) and to the run's deadline, for the duration."""
    loop = asyncio.get_running_loop()

    def on_signal(reason: str, hurry: bool) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(stop.hurry if hurry else stop.set, reason)

    unlisten = shutdown.listen(on_signal)
    timer = loop.call_later(deadline_s, stop.set, f"run deadline of {deadline_s:g} s reached") if deadline_s else None
    try:
        yield
    finally:
        unlisten()
        if timer is not None:
            timer.cancel()


def _units(units: int | None, counter: Counter) -> Iterator[int]:
    """Units of work from ``counter`` (shared by every worker, of every process), up to ``units``."""
    while True:
        unit = counter.take()
        if units is not None and unit >= units:
            return
        yield unit


async def _closed_loop(units: int | None, concurrency: int, fire: Fire, stop: _Stop, counter: Counter) -> None:
    shared = _units(units, counter)

    async def worker() -> None:
        for unit in shared:  # one shared iterator: each unit goes to exactly one worker
            if stop.is_set or not await fire(unit, None):
                return

    await asyncio.gather(*(worker() for _ in range(concurrency if units is None else min(concurrency, units))))


def arrivals(rate: float, seed: int, start_ns: int) -> Iterator[int]:
    """The Poisson schedule: arrival times (perf counter, ns) at exponentially distributed gaps of mean 1/rate."""
    rng = random.Random(seed)
    due = 0.0
    while True:
        due += rng.expovariate(rate)
        yield start_ns + round(due * 1e9)


async def _poisson(units: int | None, cap: int, schedule: Iterator[tuple[int, int]], fire: Fire, gate: _Gate,
                   stop: _Stop) -> None:  # fmt: skip
    """Send unit i at its due time from ``schedule`` ((unit, due) pairs: all of them, or one process's share of
    the one global schedule), with at most ``cap`` in flight."""
    slots = asyncio.Semaphore(cap)
    tasks = []
    alarm = _Alarm(asyncio.get_running_loop())

    async def one(unit: int, due: int) -> None:
        async with slots:
            if not stop.is_set:
                await fire(unit, due)

    try:
        for unit, due in schedule:
            if units is not None and unit >= units:
                break
            await stop.sleep_until(due, alarm)
            if stop.is_set:
                break
            if units is None and not gate.admit(unit):
                break
            tasks.append(asyncio.create_task(one(unit, due)))
    finally:
        alarm.close()
    await asyncio.gather(*tasks)


Send = Callable[[RequestSpec, list[tuple[str, str, int | None]], _Gate, int | None], Awaitable[_Sent | None]]


class _Phase:
    """One phase of a run: its units of work (requests or conversations), the gate, the rows it made, and how
    many requests a stop cut off."""

    def __init__(self, phase: Phase, plan: WorkloadPlan, gate: _Gate, send: Send, on_request: OnRequest | None):
        self.phase, self.plan, self.gate, self._send, self._on_request = phase, plan, gate, send, on_request
        self.records: list[RequestRecord] = []
        self.cancelled = 0  # in flight when the grace period ended

    @property
    def units(self) -> int | None:
        if self.gate.count is None:
            return None
        turns = self.plan.workload.turns
        return -(-self.gate.count // turns)

    async def fire(self, unit: int, due: int | None = None) -> bool:
        """Run unit ``unit`` (scheduled at ``due``, open loop): one request, or each turn of conversation ``unit``;
        False once the gate closed."""
        turns = self.plan.workload.turns
        history: list[tuple[str, str, int | None]] = []
        for turn in range(turns):
            index = unit * turns + turn
            if not self.gate.admit(index):
                return False
            spec = await self._spec(index)
            if turn and turn >= self.plan.turns_of(spec):
                return True
            try:
                sent = await self._send(spec, history, self.gate, None if turn else due)
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
            if sent is None:
                return False  # the deadline passed while its prompt was built: never sent
            self.records.append(sent.record)
            if self._on_request is not None:
                self._on_request(sent.record)
            if sent.record.error is not None:
                return True  # a conversation ends at its first failed turn
            history.append((spec.user, sent.answer, sent.record.output_tokens))
        return True

    async def _spec(self, index: int) -> RequestSpec:
        if self.plan.blocking:  # builds that call a tokenizer stay off the event loop
            return await asyncio.to_thread(self.plan.spec, self.phase, index)
        return self.plan.spec(self.phase, index)


@dataclass(frozen=True)
class Slice:
    """One client process's share of a phase: ``concurrency`` of the slots, units from ``counter`` (closed loop),
    and every ``procs``-th arrival of the global Poisson schedule from ``proc`` on, which starts at ``start_ns``."""

    concurrency: int
    counter: Counter
    proc: int = 0
    procs: int = 1
    start_ns: int | None = None


async def _run_phase(phase: _Phase, mode: LoadMode, rate: float | None, seed: int, stop: _Stop, part: Slice) -> _Phase:
    if mode is LoadMode.poisson and rate is not None:
        start = time.perf_counter_ns() if part.start_ns is None else part.start_ns
        schedule = itertools.islice(enumerate(arrivals(rate, seed, start)), part.proc, None, part.procs)
        load = _poisson(phase.units, part.concurrency, schedule, phase.fire, phase.gate, stop)
    else:
        load = _closed_loop(phase.units, part.concurrency, phase.fire, stop, part.counter)
    await stop.bounded(load)
    phase.records.sort(key=lambda r: r.request_index)
    return phase


class _Turnstile:
    """Lets about ``per_turn`` finished requests do their bookkeeping (the row, the next request's prompt, body and
    write) per event-loop iteration; the others wait for the next iterations, each after the loop polled its sockets.

    Lockstep streams end together: 64 streams at one chunk each 5 ms finish in one iteration, and running their
    completions back to back kept the loop from reading for several chunk gaps, so the first chunks of the next
    requests, arriving meanwhile, merged in the kernel with their successors (one receive-queue entry, the later stamp)
    and their TTFT came out one gap late (docs/performance.md#completion-bookkeeping). A completion that waits here is
    timed already: its end was read before it waited, and its next request is timed from its own send."""

    def __init__(self, per_turn: int) -> None:
        self.per_turn = per_turn
        self._passed = 0  # let through since the last reset
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._reset_due = False

    async def turn(self) -> None:
        if self._passed < self.per_turn and not self._waiting:
            self._passed += 1
            self._schedule()
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        self._schedule()
        await waiter

    def _schedule(self) -> None:
        if not self._reset_due:  # call_soon: runs in the next iteration, after the loop polled its sockets
            self._reset_due = True
            asyncio.get_running_loop().call_soon(self._next)

    def _next(self) -> None:
        self._reset_due, self._passed = False, 0
        while self._waiting and self._passed < self.per_turn:
            waiter = self._waiting.popleft()
            if not waiter.done():  # a waiter cancelled by a stop is skipped
                waiter.set_result(None)
                self._passed += 1
        if self._waiting or self._passed:
            self._schedule()


OUTPUT_PREFIX_CHARS = 64  # compare's parity rule reads this many first characters of each answer


def answer_fingerprint(text: str) -> dict[str, str]:
    """RequestRecord's output_sha256 and output_prefix of one answer text."""
    return {"output_sha256": hashlib.sha256(text.encode()).hexdigest(), "output_prefix": text[:OUTPUT_PREFIX_CHARS]}


def make_send(target: Target, plan: WorkloadPlan, ctx: RunContext, clock: _Clock, clients: _Clients) -> Send:
    """How one request is sent, read and made a row, for a phase's ``fire`` (completions pass a ``_Turnstile``)."""
    adapter, workload = adapter_for(target.protocol), plan.workload
    turnstile = _Turnstile(COMPLETIONS_PER_TURN)

    async def send(
        spec: RequestSpec, history: list[tuple[str, str, int | None]], gate: _Gate, due: int | None
    ) -> _Sent | None:
        given = plan.request_input(spec, history)
        if not gate.admit(spec.index):  # checked again once the prompt is built, just before it is sent
            return None
        gate.counter.take()
        gate.start(time.perf_counter_ns())
        first, t0, t_end, stream, retries = await _send(clients, adapter, target, workload, given)
        await turnstile.turn()
        await _count_missing(plan, given, stream)
        late = first - due if due is not None else None
        record = _record(spec, given, ctx, clock, t0, t_end, stream, retries, gate.deadline, late)
        answer = "".join(stream.text)
        if workload.temperature == 0 and stream.error is None:  # deterministic decoding: the answer is comparable
            record = record.model_copy(update=answer_fingerprint(answer))
        return _Sent(record, answer)

    return send


async def _measure(
    target: Target,
    plan: WorkloadPlan,
    ctx: RunContext,
    concurrency: int,
    on_request: OnRequest | None,
    on_phase: OnPhase | None,
    transport: httpx.AsyncBaseTransport | None,
) -> MeasureResult:
    workload = plan.workload
    clock = _Clock()
    clients = _Clients(target, workload, transport)
    stop = _Stop(shutdown.grace_s())
    timed = workload.duration_s is not None
    probe, checks = ProcessProbe(), []
    send = make_send(target, plan, ctx, clock, clients)
    try:
        with _stop_on_signal_or_deadline(stop, workload.run_deadline_s):
            mark = on_phase or (lambda phase: None)
            mark(Phase.warmup)
            warm = _Phase(Phase.warmup, plan, _Gate(workload.warmup_requests, None, 0), send, on_request)
            warmup = await _run_phase(warm, LoadMode.closed, None, 0, stop, Slice(concurrency, Counter()))
            gate = _Gate(0, None, 0)
            measured = _Phase(Phase.measure, plan, gate, send, on_request)
            if not stop.is_set:
                mark(Phase.measure)
                probe.start()  # first: its gc.collect must not delay the first request past the gate's start
                gate = _Gate(None if timed else workload.requests, workload.duration_s, workload.min_requests)
                measured = _Phase(Phase.measure, plan, gate, send, on_request)
                seed = plan.seed_of(Phase.measure, 0)
                try:
                    part = Slice(concurrency, Counter())
                    measured = await _run_phase(measured, workload.mode, workload.rate, seed, stop, part)
                finally:
                    checks.append(await probe.stop())
    finally:
        await clients.aclose()
    starts = [r.start_ns for r in measured.records]
    ends = [r.start_ns + r.e2e_ns for r in measured.records if r.e2e_ns is not None]
    return MeasureResult(
        warmup=warmup.records,
        measured=measured.records,
        measure_start_ns=min(starts) if starts else None,
        measure_end_ns=max(ends) if ends else None,
        stopped=stop.reason,
        cancelled=warmup.cancelled + measured.cancelled,
        stop_rule=gate.rule if stop.reason is None else "interrupted",
        client=tuple(checks),
    )


def measure(
    target: Target,
    workload: WorkloadConfig,
    ctx: RunContext,
    concurrency: int,
    on_request: OnRequest | None = None,
    on_phase: OnPhase | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    plan: WorkloadPlan | None = None,
) -> MeasureResult:
    """Warm up, then measure; every request (failed ones too) comes back as a RequestRecord.

    ``plan`` says what each request is (default: the workload's prompt list, no tokenizer); ``on_phase`` is told
    when warm-up and measurement start (telemetry marks its samples with it); ``transport`` replaces httpx's
    network transport (tests use httpx.MockTransport).
    """
    from .limits import check_load  # it imports client_procs from here

    check_load(workload.model_copy(update={"concurrency": (concurrency,)}), warn=False)  # descriptors, ports
    plan = (plan or WorkloadPlan(workload)).for_run(concurrency)
    procs = client_procs(workload, concurrency)
    if procs > 1 and transport is None:
        from .loadgen import measure_procs  # the workers import this module: no import at the top

        return measure_procs(target, plan, ctx, concurrency, procs, on_request, on_phase)
    return asyncio.run(_measure(target, plan, ctx, concurrency, on_request, on_phase, transport))


def client_procs(workload: WorkloadConfig, concurrency: int) -> int:
    """The client processes for a run: ``workload.client_procs``, else enough for the load (tasks/load/loadgen.py)."""
    from .loadgen import auto_procs

    if workload.client_procs is not None:
        return min(workload.client_procs, concurrency)
    return auto_procs(concurrency, workload.rate)


async def _probe(target: Target, plan: WorkloadPlan, given: RequestInput) -> int | None:
    clients = _Clients(target, plan.workload, None)
    try:
        adapter = adapter_for(target.protocol)
        _, _, _, stream, _ = await _send(clients, adapter, target, plan.workload, given)
    finally:
        await clients.aclose()
    if stream.error is not None:
        raise EngineError(f"the prompt-length probe request to {target.base_url} failed: {stream.error}")
    _finalize(stream.counters)
    return stream.counters.prompt_tokens


def probe_prompt_tokens(target: Target, plan: WorkloadPlan, given: RequestInput) -> int | None:
    """Send ``given`` once (not stored) and return the prompt tokens the server counted, or None if it says not."""
    return asyncio.run(_probe(target, plan, given))


async def _preflight(target: Target) -> EngineInfo:
    timeout = httpx.Timeout(10.0, connect=target.connect_timeout_s)
    async with httpx.AsyncClient(
        timeout=timeout, trust_env=False, verify=tls_context(), headers=_headers(api_key(target))
    ) as client:
        return await adapter_for(target.protocol).preflight(client, target.base_url, target.model)


def preflight(target: Target) -> EngineInfo:
    """Ask the server who it is and whether it serves the model; EngineError if not."""
    try:
        return asyncio.run(_preflight(target))
    except EngineError:
        raise
    except httpx.HTTPError as exc:  # pragma: no cover - adapters convert these already
        raise EngineError(f"cannot reach {target.base_url}: {exc}") from exc
