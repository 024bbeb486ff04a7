"""measure: send warm-up and measured requests to an engine and time every streamed chunk.

Timing (all integers, ns): a phase takes one (wall clock, perf counter) anchor; every instant is
the perf counter read when a line arrived, converted to wall time through that anchor, so
durations are exact differences of a monotonic clock.

- TTFT      = first content-bearing chunk - request sent
- ITL       = gaps between consecutive content-bearing chunks
- decode    = last content chunk - first content chunk
- e2e       = end of the response stream - request sent

Load: ``closed`` keeps ``concurrency`` requests in flight; ``poisson`` sends at exponentially
distributed gaps (mean 1/rate, seeded) with at most ``concurrency`` in flight. Warm-up requests
run first at the same concurrency and are stored with phase=warmup.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields
from typing import Any

import httpx

from tcobench.errors import EngineError
from tcobench.schemas import LoadMode, Phase, Protocol, RequestRecord, WorkloadConfig

from .protocols import Adapter, EngineInfo, ServerCounters, adapter_for

__all__ = ["MeasureResult", "OnPhase", "OnRequest", "RunContext", "Target", "measure", "preflight"]

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


@dataclass(frozen=True)
class RunContext:
    """Keys every request row of a run carries."""

    run_id: str
    date: str
    host: str


@dataclass(frozen=True)
class MeasureResult:
    warmup: list[RequestRecord]
    measured: list[RequestRecord]
    measure_start_ns: int | None
    measure_end_ns: int | None


@dataclass(frozen=True)
class _Spec:
    phase: Phase
    index: int
    prompt_index: int
    seed: int


class _Clock:
    def __init__(self) -> None:
        self.wall0 = time.time_ns()
        self.perf0 = time.perf_counter_ns()

    def wall(self, perf_ns: int) -> int:
        return self.wall0 + (perf_ns - self.perf0)


class _Clients:
    """One single-connection httpx client per request slot, lent to one request at a time.

    httpcore's pool re-scans every connection (and, for each, every connection again) on each pool
    event, so one shared pool of N connections costs O(N^2) per request: at 64 streams it took most of
    the client's CPU. N one-connection pools cost O(1) each. Clients are made on demand, sharing one
    SSL context; one per request in flight (at most the concurrency).
    """

    def __init__(self, target: Target, workload: WorkloadConfig, transport: httpx.AsyncBaseTransport | None) -> None:
        self._timeout = httpx.Timeout(workload.request_timeout_s, connect=target.connect_timeout_s)
        self._transport = transport
        self._ssl = httpx.create_ssl_context(trust_env=False)  # once, not once per client
        self._free: list[httpx.AsyncClient] = []
        self._all: list[httpx.AsyncClient] = []

    def _make(self) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        # trust_env=False: a proxy from the environment must never sit between us and the engine.
        client = httpx.AsyncClient(timeout=self._timeout, limits=limits, trust_env=False,
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

    async def aclose(self) -> None:
        for client in self._all:
            await client.aclose()


def _apply(counters: ServerCounters, update: dict[str, Any]) -> None:
    names = {f.name for f in fields(ServerCounters)}
    for key, value in update.items():
        if key in names and value is not None:
            setattr(counters, key, value)


def _finalize(counters: ServerCounters) -> None:
    """Server counters stand in for usage when the server sent none (never chunk counts)."""
    if counters.output_tokens is None and counters.eval_count is not None:
        counters.output_tokens = counters.eval_count
        counters.token_count_source = "server_counters"
    if counters.prompt_tokens is None and counters.prompt_eval_count is not None:
        counters.prompt_tokens = counters.prompt_eval_count + (counters.cached_tokens or 0)


class _Stream:
    """Accumulates one response: content timestamps, counters, end marker, error."""

    def __init__(self) -> None:
        self.content_ns: list[int] = []
        self.counters = ServerCounters()
        self.done = False
        self.error: str | None = None
        self.status: int | None = None

    async def read(self, response: httpx.Response, adapter: Adapter, chat: bool) -> None:
        self.status = response.status_code
        if response.status_code != 200:
            body = (await response.aread()).decode("utf-8", "replace").strip()
            self.error = f"HTTP {response.status_code}: {body[:200]}"
            return
        async for line in response.aiter_lines():
            now = time.perf_counter_ns()
            event = adapter.parse_line(line, chat)
            if event is None:
                continue
            if event.content:
                self.content_ns.append(now)
            _apply(self.counters, event.fields)
            if event.error:
                self.error = event.error
                return
            self.done = self.done or event.done
        if not self.done and self.counters.finish_reason is None:
            self.error = "stream ended before the server marked it complete"


async def _send(
    clients: _Clients,
    adapter: Adapter,
    target: Target,
    workload: WorkloadConfig,
    spec: _Spec,
    ctx: RunContext,
    clock: _Clock,
) -> RequestRecord:
    prompt = workload.prompts[spec.prompt_index]
    body = adapter.request_body(target.model, prompt, workload, spec.seed, target.chat)
    url = target.base_url + adapter.path(target.chat)
    for attempt in (1, 2):
        stream = _Stream()
        t0 = time.perf_counter_ns()
        try:
            async with (
                asyncio.timeout(workload.request_timeout_s),
                clients.lease() as client,
                client.stream("POST", url, json=body) as response,
            ):
                await stream.read(response, adapter, target.chat)
        except TimeoutError:
            stream.error = f"timed out after {workload.request_timeout_s:g} s"
        except httpx.RemoteProtocolError as exc:
            if stream.status is None and attempt == 1:
                # A pooled keep-alive connection the server had already closed (llama.cpp's HTTP server
                # closes after a few requests per connection): nothing was sent back, so send it again on a
                # fresh connection, timed from the new start.
                continue
            stream.error = f"RemoteProtocolError: {exc or 'connection closed'}"
            if stream.status is not None:
                stream.error += " (stream truncated: the connection closed mid-response)"
        except httpx.HTTPError as exc:
            stream.error = f"{type(exc).__name__}: {exc or 'connection failed'}"
        break
    t_end = time.perf_counter_ns()
    return _record(spec, ctx, clock, t0, t_end, stream)


def _record(spec: _Spec, ctx: RunContext, clock: _Clock, t0: int, t_end: int, stream: _Stream) -> RequestRecord:
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
        error=stream.error,
    )


Fire = Callable[[_Spec], Awaitable[None]]


async def _closed_loop(specs: Sequence[_Spec], concurrency: int, fire: Fire) -> None:
    queue = iter(specs)

    async def worker() -> None:
        for spec in queue:  # one shared iterator: each spec goes to exactly one worker
            await fire(spec)

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(specs)))))


async def _poisson(specs: Sequence[_Spec], rate: float, cap: int, seed: int, fire: Fire) -> None:
    rng = random.Random(seed)
    loop = asyncio.get_running_loop()
    slots = asyncio.Semaphore(cap)
    due = loop.time()
    tasks = []

    async def one(spec: _Spec) -> None:
        async with slots:
            await fire(spec)

    for spec in specs:
        due += rng.expovariate(rate)
        await asyncio.sleep(max(0.0, due - loop.time()))
        tasks.append(asyncio.create_task(one(spec)))
    await asyncio.gather(*tasks)


def _specs(phase: Phase, count: int, workload: WorkloadConfig, seed_offset: int) -> list[_Spec]:
    n = len(workload.prompts)
    return [_Spec(phase, i, i % n, workload.seed + seed_offset + i) for i in range(count)]


async def _run_phase(
    specs: list[_Spec],
    mode: LoadMode,
    concurrency: int,
    rate: float | None,
    send: Callable[[_Spec], Awaitable[RequestRecord]],
    on_request: OnRequest | None,
) -> list[RequestRecord]:
    records: list[RequestRecord] = []

    async def fire(spec: _Spec) -> None:
        record = await send(spec)
        records.append(record)
        if on_request is not None:
            on_request(record)

    if mode is LoadMode.poisson and rate is not None:
        await _poisson(specs, rate, concurrency, specs[0].seed if specs else 0, fire)
    else:
        await _closed_loop(specs, concurrency, fire)
    return sorted(records, key=lambda r: r.request_index)


async def _measure(
    target: Target,
    workload: WorkloadConfig,
    ctx: RunContext,
    concurrency: int,
    on_request: OnRequest | None,
    on_phase: OnPhase | None,
    transport: httpx.AsyncBaseTransport | None,
) -> MeasureResult:
    adapter = adapter_for(target.protocol)
    clock = _Clock()
    clients = _Clients(target, workload, transport)
    try:

        async def send(spec: _Spec) -> RequestRecord:
            return await _send(clients, adapter, target, workload, spec, ctx, clock)

        mark = on_phase or (lambda phase: None)
        warm_specs = _specs(Phase.warmup, workload.warmup_requests, workload, seed_offset=1_000_000)
        mark(Phase.warmup)
        warmup = await _run_phase(warm_specs, LoadMode.closed, concurrency, None, send, on_request)
        specs = _specs(Phase.measure, workload.requests, workload, seed_offset=0)
        mark(Phase.measure)
        measured = await _run_phase(specs, workload.mode, concurrency, workload.rate, send, on_request)
    finally:
        await clients.aclose()
    starts = [r.start_ns for r in measured]
    ends = [r.start_ns + r.e2e_ns for r in measured if r.e2e_ns is not None]
    return MeasureResult(
        warmup=warmup,
        measured=measured,
        measure_start_ns=min(starts) if starts else None,
        measure_end_ns=max(ends) if ends else None,
    )


def measure(
    target: Target,
    workload: WorkloadConfig,
    ctx: RunContext,
    concurrency: int,
    on_request: OnRequest | None = None,
    on_phase: OnPhase | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> MeasureResult:
    """Warm up, then measure; every request (failed ones too) comes back as a RequestRecord.

    ``on_phase`` is told when warm-up and measurement start (telemetry marks its samples with it);
    ``transport`` replaces httpx's network transport (tests use httpx.MockTransport).
    """
    return asyncio.run(_measure(target, workload, ctx, concurrency, on_request, on_phase, transport))


async def _preflight(target: Target) -> EngineInfo:
    timeout = httpx.Timeout(10.0, connect=target.connect_timeout_s)
    async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
        return await adapter_for(target.protocol).preflight(client, target.base_url, target.model)


def preflight(target: Target) -> EngineInfo:
    """Ask the server who it is and whether it serves the model; EngineError if not."""
    try:
        return asyncio.run(_preflight(target))
    except EngineError:
        raise
    except httpx.HTTPError as exc:  # pragma: no cover - adapters convert these already
        raise EngineError(f"cannot reach {target.base_url}: {exc}") from exc
