"""stream: one request on the wire: the target, the HTTP clients, the streamed answer read line by line with
its bounds, retries on 429/503, and the engine's preflight and prompt-token probe."""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields
from typing import Any

import httpx
from pydantic import SecretStr

from tcobench.errors import EngineError
from tcobench.schemas import Protocol, RequestRecord, WorkloadConfig
from tcobench.tasks.load import http1
from tcobench.tasks.load.protocols import Adapter, EngineInfo, ServerCounters, adapter_for
from tcobench.tasks.tls import tls_context
from tcobench.tasks.workload.plan import RequestInput, WorkloadPlan

__all__ = [
    "Clients",
    "LineSplitter",
    "MAX_ERROR_BODY_BYTES",
    "MAX_LINE_BYTES",
    "MAX_RETRY_AFTER_S",
    "RETRY_STATUSES",
    "Sent",
    "Stream",
    "StreamLimitError",
    "Target",
    "api_key",
    "bounded_lines",
    "finalize_counters",
    "preflight",
    "probe_prompt_tokens",
    "retry_delay",
    "send_request",
]


MAX_LINE_BYTES = 1 << 20  # 1 MiB: a streamed line (one SSE data line or NDJSON object) or network chunk
MAX_ERROR_BODY_BYTES = 4096  # what is read of a non-200 answer's body
MAX_RETRY_AFTER_S = 60.0  # a longer Retry-After is not waited for: the request fails naming it
RETRY_STATUSES = (429, 503)


@dataclass(frozen=True)
class Target:
    """Where requests go."""

    base_url: str
    protocol: Protocol
    model: str
    chat: bool = False
    connect_timeout_s: float = 5.0
    api_key: SecretStr | None = None  # the Bearer token (tasks.engine.endpoint.api_key_of): masked, never stored


def api_key(target: Target) -> str | None:
    """The API key of ``target``, to send as the Bearer token."""
    return target.api_key.get_secret_value() if target.api_key is not None else None


def _headers(key: str | None) -> dict[str, str]:
    headers = {"Accept-Encoding": "identity"}  # compressed streams could expand without bound
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


def _redact(text: str | None, key: str | None) -> str | None:
    """An error text with the API key masked (a server may echo the header it was sent)."""
    return text.replace(key, "***") if text and key else text


class Clients:
    """One connection per request slot, lent to one request at a time: a kept-alive ``http1.Connection`` (the
    lean client), or, when a test injects an httpx transport, a single-connection httpx client.

    httpcore's pool re-scans every connection (and, for each, every connection again) on each pool
    event, so one shared pool of N connections costs O(N^2) per request: at 64 streams it took most of
    the client's CPU. N one-connection pools cost O(1) each; httpx's per-request and per-chunk machinery still
    cost most of the client's CPU (docs/dev/performance.md), hence ``http1``. Connections are made on demand,
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
        client = httpx.AsyncClient(
            timeout=self._timeout,
            limits=limits,
            trust_env=False,
            headers=self._headers,
            transport=self._transport,
            verify=self._ssl,
        )
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


def finalize_counters(counters: ServerCounters) -> None:
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


class Stream:
    """Accumulates one response: content timestamps, counters, end marker, error."""

    def __init__(self) -> None:
        self.content_ns: list[int] = []
        self.counters = ServerCounters()
        self.done = False
        self.error: str | None = None
        self.status: int | None = None
        self.retry_after: str | None = None
        self.text: list[str] = []  # the answer (multi-turn history; counting when the server counts nothing)

    async def read(
        self,
        status: int,
        headers: Mapping[str, str],
        body: AsyncIterator[bytes],
        adapter: Adapter,
        chat: bool,
        arrival: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
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
            raise StreamLimitError(
                f"the server compressed the stream (Content-Encoding: {encoding[:40]}) though "
                "tcobench asked for identity"
            )
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
            await self.read(
                response.status_code, response.headers, response.aiter_raw(), adapter, chat, response.arrival_ns
            )
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


async def _attempt(
    clients: Clients, adapter: Adapter, target: Target, url: str, body: dict[str, Any], timeout_s: float
) -> tuple[Stream, int, bool]:
    """One send: (what came back, when it was sent, whether the connection was stale and nothing came back).

    With the lean client "sent" is when the request's bytes were written (after connecting, if it had to); with
    an injected httpx transport, when the attempt began."""
    stream = Stream()
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
class Sent:
    """One finished request: its row, and the answer text a later turn carries."""

    record: RequestRecord
    answer: str


async def send_request(
    clients: Clients, adapter: Adapter, target: Target, workload: WorkloadConfig, given: RequestInput
) -> tuple[int, int, int, Stream, int]:
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
        stream.error = _redact(
            stream.error + _retry_note(stream.status, stream.retry_after, retries, workload.max_retries), clients.key
        )
    t_end = time.perf_counter_ns()
    return first, t0, t_end, stream, retries


async def _probe(target: Target, plan: WorkloadPlan, given: RequestInput) -> int | None:
    clients = Clients(target, plan.workload, None)
    try:
        adapter = adapter_for(target.protocol)
        _, _, _, stream, _ = await send_request(clients, adapter, target, plan.workload, given)
    finally:
        await clients.aclose()
    if stream.error is not None:
        raise EngineError(f"the prompt-length probe request to {target.base_url} failed: {stream.error}")
    finalize_counters(stream.counters)
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
