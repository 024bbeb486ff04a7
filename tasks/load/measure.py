"""measure: send warm-up and measured requests to an engine and time every streamed chunk.

Timing (all integers, ns): a phase takes one (wall clock, perf counter) anchor; every instant is on the perf
counter, converted to wall time through that anchor, so durations are exact differences of a monotonic clock. A
line's instant is when its last bytes reached the host: with the lean client (``tasks.load.http1``, every streaming
request) the kernel's receive stamp of the read that brought them, so a busy event loop does not stretch TTFT or
the gaps unless it falls so far behind that two chunks of one stream arrive before it reads the first (the
kernel merges them into one receive-queue entry with the later stamp, as the self-check's loop lag shows). A 200
stream is decoded, split into lines and parsed inside the connection's receive callback (``Response.stream``): no
task wakes per chunk. With an injected httpx transport, the perf counter read when the chunk is parsed.

Design notes: docs/dev/architecture/load.md#tasks-measure.
"""

from __future__ import annotations

import asyncio

import httpx

from tcobench.schemas import LoadMode, Phase, WorkloadConfig
from tcobench.tasks.load import shutdown
from tcobench.tasks.load.limits import check_load
from tcobench.tasks.load.loadgen import client_procs, measure_procs
from tcobench.tasks.load.pacing import (
    ALARM_MIN_NS,
    Clock,
    Counter,
    Gate,
    Instant,
    OnPhase,
    OnRequest,
    PhaseRun,
    Slice,
    Stop,
    arrivals,
    run_phase,
    stop_on_signal_or_deadline,
)
from tcobench.tasks.load.record import (
    COMPLETIONS_PER_TURN,
    OUTPUT_PREFIX_CHARS,
    MeasureResult,
    RunContext,
    answer_fingerprint,
    make_send,
)
from tcobench.tasks.load.selfcheck import ProcessProbe
from tcobench.tasks.load.stream import (
    MAX_ERROR_BODY_BYTES,
    MAX_LINE_BYTES,
    MAX_RETRY_AFTER_S,
    Clients,
    LineSplitter,
    StreamLimitError,
    Target,
    api_key,
    bounded_lines,
    preflight,
    probe_prompt_tokens,
    retry_delay,
)
from tcobench.tasks.workload.plan import WorkloadPlan

__all__ = [
    "ALARM_MIN_NS",
    "COMPLETIONS_PER_TURN",
    "Counter",
    "Instant",
    "LineSplitter",
    "MAX_ERROR_BODY_BYTES",
    "MAX_LINE_BYTES",
    "MAX_RETRY_AFTER_S",
    "MeasureResult",
    "OUTPUT_PREFIX_CHARS",
    "OnPhase",
    "OnRequest",
    "RunContext",
    "Slice",
    "StreamLimitError",
    "Target",
    "answer_fingerprint",
    "api_key",
    "arrivals",
    "bounded_lines",
    "client_procs",
    "make_send",
    "measure",
    "preflight",
    "probe_prompt_tokens",
    "retry_delay",
]


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
    clock = Clock()
    clients = Clients(target, workload, transport)
    stop = Stop(shutdown.grace_s())
    timed = workload.duration_s is not None
    probe, checks = ProcessProbe(), []
    send = make_send(target, plan, ctx, clock, clients)
    try:
        with stop_on_signal_or_deadline(stop, workload.run_deadline_s):
            mark = on_phase or (lambda phase: None)
            mark(Phase.warmup)
            warm = PhaseRun(Phase.warmup, plan, Gate(workload.warmup_requests, None, 0), send, on_request)
            warmup = await run_phase(warm, LoadMode.closed, None, 0, stop, Slice(concurrency, Counter()))
            gate = Gate(0, None, 0)
            measured = PhaseRun(Phase.measure, plan, gate, send, on_request)
            if not stop.is_set:
                mark(Phase.measure)
                probe.start()  # first: its gc.collect must not delay the first request past the gate's start
                gate = Gate(None if timed else plan.measured_requests, workload.duration_s, workload.min_requests)
                measured = PhaseRun(Phase.measure, plan, gate, send, on_request)
                seed = plan.seed_of(Phase.measure, 0)
                try:
                    part = Slice(concurrency, Counter())
                    measured = await run_phase(measured, workload.mode, workload.rate, seed, stop, part)
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
    check_load(workload.model_copy(update={"concurrency": (concurrency,)}), warn=False)  # descriptors, ports
    plan = (plan or WorkloadPlan(workload)).for_run(concurrency)
    procs = client_procs(workload, concurrency, plan.arrival_rate)
    if procs > 1 and transport is None:
        return measure_procs(target, plan, ctx, concurrency, procs, on_request, on_phase)
    return asyncio.run(_measure(target, plan, ctx, concurrency, on_request, on_phase, transport))
