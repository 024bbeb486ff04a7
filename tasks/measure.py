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
run first at the same concurrency and are stored with phase=warmup. What request i is comes from the
``WorkloadPlan`` (a pure function of seed and index); a conversation (turns > 1) is one unit of work whose
turns go one after another, each carrying the earlier answers.

Stop rules: ``requests`` (the count was sent), ``duration`` (``duration_s`` from the first measured request
sent; no request is sent after it, requests in flight then are finished and flagged ``in_flight_at_stop``), ``min_requests`` (the
duration passed before ``min_requests`` were sent, so the run went on until they were).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields
from typing import Any

import httpx

from tcobench.errors import EngineError
from tcobench.schemas import LoadMode, Phase, Protocol, RequestRecord, WorkloadConfig

from .protocols import Adapter, EngineInfo, ServerCounters, adapter_for
from .workload.plan import RequestInput, RequestSpec, WorkloadPlan

__all__ = [
    "MeasureResult",
    "OnPhase",
    "OnRequest",
    "RunContext",
    "Target",
    "measure",
    "preflight",
    "probe_prompt_tokens",
]

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
    stop_rule: str = "requests"  # requests | duration | min_requests


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
        self.text: list[str] = []  # the answer (multi-turn history; counting when the server counts nothing)
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
                self.text.append(event.text)
            _apply(self.counters, event.fields)
            if event.error:
                self.error = event.error
                return
            self.done = self.done or event.done
        if not self.done and self.counters.finish_reason is None:
            self.error = "stream ended before the server marked it complete"


@dataclass(frozen=True)
class _Sent:
    """One finished request: its row, and the answer text a later turn carries."""

    record: RequestRecord
    answer: str


async def _send(
    clients: _Clients, adapter: Adapter, target: Target, workload: WorkloadConfig, given: RequestInput
) -> tuple[int, int, _Stream]:
    """Send one request and read its stream: (start, end) on the perf counter, and what arrived."""
    body = adapter.request_body(target.model, given, workload, target.chat)
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
    return t0, t_end, stream


def _record(
    spec: RequestSpec, given: RequestInput, ctx: RunContext, clock: _Clock, t0: int, t_end: int, stream: _Stream,
    deadline: int | None,
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


class _Gate:
    """Whether another request may start: a count of requests, or a deadline with a minimum count."""

    def __init__(self, count: int | None, duration_s: float | None, min_requests: int) -> None:
        self.count, self.min_requests, self.started = count, min_requests, 0
        self.duration_ns = int(duration_s * 1e9) if duration_s is not None else None
        # the clock starts when the first request is sent (not when the phase is set up): building prompts
        # (tokenizer calls) on a busy machine must not eat into the measured duration
        self.deadline: int | None = None
        self.forced = False  # a request started after the deadline because min_requests was not reached

    def start(self, now: int) -> None:
        if self.duration_ns is not None and self.deadline is None:
            self.deadline = now + self.duration_ns

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


Fire = Callable[[int], Awaitable[bool]]  # runs one unit of work (a request, or a conversation's turns)


async def _closed_loop(units: int | None, concurrency: int, fire: Fire) -> None:
    counter = iter(range(units)) if units is not None else itertools.count()

    async def worker() -> None:
        for unit in counter:  # one shared iterator: each unit goes to exactly one worker
            if not await fire(unit):
                return

    await asyncio.gather(*(worker() for _ in range(concurrency if units is None else min(concurrency, units))))


async def _poisson(units: int | None, rate: float, cap: int, seed: int, fire: Fire, gate: _Gate) -> None:
    rng = random.Random(seed)
    loop = asyncio.get_running_loop()
    slots = asyncio.Semaphore(cap)
    due = loop.time()
    tasks = []

    async def one(unit: int) -> None:
        async with slots:
            await fire(unit)

    unit = 0
    while units is None or unit < units:
        due += rng.expovariate(rate)
        await asyncio.sleep(max(0.0, due - loop.time()))
        if units is None and not gate.admit(unit):
            break
        tasks.append(asyncio.create_task(one(unit)))
        unit += 1
    await asyncio.gather(*tasks)


class _Phase:
    """One phase of a run: its units of work (requests or conversations), the gate, and the rows it made."""

    def __init__(self, phase: Phase, plan: WorkloadPlan, gate: _Gate, send: Any, on_request: OnRequest | None):
        self.phase, self.plan, self.gate, self._send, self._on_request = phase, plan, gate, send, on_request
        self.records: list[RequestRecord] = []

    @property
    def units(self) -> int | None:
        if self.gate.count is None:
            return None
        turns = self.plan.workload.turns
        return -(-self.gate.count // turns)

    async def fire(self, unit: int) -> bool:
        """Run unit ``unit``: one request, or each turn of conversation ``unit``; False once the gate closed."""
        turns = self.plan.workload.turns
        history: list[tuple[str, str, int | None]] = []
        for turn in range(turns):
            index = unit * turns + turn
            if not self.gate.admit(index):
                return False
            spec = await self._spec(index)
            if turn and turn >= self.plan.turns_of(spec):
                return True
            sent = await self._send(spec, history, self.gate)
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


async def _run_phase(
    phase: _Phase, mode: LoadMode, concurrency: int, rate: float | None, seed: int
) -> list[RequestRecord]:
    if mode is LoadMode.poisson and rate is not None:
        await _poisson(phase.units, rate, concurrency, seed, phase.fire, phase.gate)
    else:
        await _closed_loop(phase.units, concurrency, phase.fire)
    return sorted(phase.records, key=lambda r: r.request_index)


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
    adapter = adapter_for(target.protocol)
    clock = _Clock()
    clients = _Clients(target, workload, transport)
    try:

        async def send(spec: RequestSpec, history: list[tuple[str, str, int | None]], gate: _Gate) -> _Sent | None:
            given = plan.request_input(spec, history)
            if not gate.admit(spec.index):  # checked again once the prompt is built, just before it is sent
                return None
            gate.started += 1
            gate.start(time.perf_counter_ns())
            t0, t_end, stream = await _send(clients, adapter, target, workload, given)
            await _count_missing(plan, given, stream)
            return _Sent(_record(spec, given, ctx, clock, t0, t_end, stream, gate.deadline), "".join(stream.text))

        mark = on_phase or (lambda phase: None)
        mark(Phase.warmup)
        warm = _Phase(Phase.warmup, plan, _Gate(workload.warmup_requests, None, 0), send, on_request)
        warmup = await _run_phase(warm, LoadMode.closed, concurrency, None, 0)
        mark(Phase.measure)
        timed = workload.duration_s is not None
        gate = _Gate(None if timed else workload.requests, workload.duration_s, workload.min_requests)
        phase = _Phase(Phase.measure, plan, gate, send, on_request)
        measured = await _run_phase(phase, workload.mode, concurrency, workload.rate, plan.seed_of(Phase.measure, 0))
    finally:
        await clients.aclose()
    starts = [r.start_ns for r in measured]
    ends = [r.start_ns + r.e2e_ns for r in measured if r.e2e_ns is not None]
    return MeasureResult(
        warmup=warmup,
        measured=measured,
        measure_start_ns=min(starts) if starts else None,
        measure_end_ns=max(ends) if ends else None,
        stop_rule=gate.rule,
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
    plan = (plan or WorkloadPlan(workload)).for_run(concurrency)
    return asyncio.run(_measure(target, plan, ctx, concurrency, on_request, on_phase, transport))


async def _probe(target: Target, plan: WorkloadPlan, given: RequestInput) -> int | None:
    clients = _Clients(target, plan.workload, None)
    try:
        adapter = adapter_for(target.protocol)
        _, _, stream = await _send(clients, adapter, target, plan.workload, given)
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
