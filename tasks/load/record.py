"""record: what a run keeps: its context, each request's RequestRecord, the answer fingerprint, and the send
function that sends, reads and records one request (turns of a conversation included)."""

from __future__ import annotations

import asyncio
import collections
import hashlib
import time
from dataclasses import dataclass

from tcobench.schemas import ClientProcessCheck, RequestRecord
from tcobench.tasks.load.pacing import Clock, Gate, Send
from tcobench.tasks.load.protocols import adapter_for
from tcobench.tasks.load.stream import Clients, Sent, Stream, Target, finalize_counters, send_request
from tcobench.tasks.workload.plan import RequestInput, RequestSpec, WorkloadPlan

__all__ = [
    "COMPLETIONS_PER_TURN",
    "MeasureResult",
    "OUTPUT_PREFIX_CHARS",
    "RunContext",
    "answer_fingerprint",
    "make_send",
]

# Finished requests whose bookkeeping runs per event-loop iteration (``_Turnstile``): the loop reads its sockets within
# a few completions' time however many streams end together (docs/dev/performance.md#completion-bookkeeping).
COMPLETIONS_PER_TURN = 4


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
        # at the end of each run (docs/dev/performance.md#result-repr).
        return (
            f"MeasureResult(warmup={len(self.warmup)} rows, measured={len(self.measured)} rows, "
            f"stopped={self.stopped!r}, stop_rule={self.stop_rule!r})"
        )


def _record(
    spec: RequestSpec,
    given: RequestInput,
    ctx: RunContext,
    clock: Clock,
    t0: int,
    t_end: int,
    stream: Stream,
    retries: int,
    deadline: int | None,
    sent: tuple[int, int] | None = None,
) -> RequestRecord:
    """The row of one request; ``sent``: (due, first send) on the perf counter, for an open loop's request."""
    c = stream.counters
    finalize_counters(c)
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
        send_lateness_ns=sent[1] - sent[0] if sent is not None else None,
        scheduled_ns=clock.wall(sent[0]) if sent is not None else None,
        sent_ns=clock.wall(sent[1]) if sent is not None else None,
        client_proc=ctx.client_proc,
        error=stream.error,
    )


async def _count_missing(plan: WorkloadPlan, given: RequestInput, stream: Stream) -> None:
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


class _Turnstile:
    """Lets about ``per_turn`` finished requests do their bookkeeping (the row, the next request's prompt, body and
    write) per event-loop iteration; the others wait for the next iterations, each after the loop polled its sockets.

    Lockstep streams end together: 64 streams at one chunk each 5 ms finish in one iteration, and running their
    completions back to back kept the loop from reading for several chunk gaps, so the first chunks of the next
    requests, arriving meanwhile, merged in the kernel with their successors (one receive-queue entry, the later stamp)
    and their TTFT came out one gap late (docs/dev/performance.md#completion-bookkeeping). A completion that waits here
    is timed already: its end was read before it waited, and its next request is timed from its own send."""

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


def make_send(target: Target, plan: WorkloadPlan, ctx: RunContext, clock: Clock, clients: Clients) -> Send:
    """How one request is sent, read and made a row, for a phase's ``fire`` (completions pass a ``_Turnstile``)."""
    adapter, workload = adapter_for(target.protocol), plan.workload
    turnstile = _Turnstile(COMPLETIONS_PER_TURN)

    async def send(
        spec: RequestSpec, history: list[tuple[str, str, int | None]], gate: Gate, due: int | None
    ) -> Sent | None:
        given = plan.request_input(spec, history)
        if not gate.admit(spec.index):  # checked again once the prompt is built, just before it is sent
            return None
        gate.counter.take()
        gate.start(time.perf_counter_ns())
        first, t0, t_end, stream, retries = await send_request(clients, adapter, target, workload, given)
        await turnstile.turn()
        await _count_missing(plan, given, stream)
        sent = (due, first) if due is not None else None
        record = _record(spec, given, ctx, clock, t0, t_end, stream, retries, gate.deadline, sent)
        answer = "".join(stream.text)
        if workload.temperature == 0 and stream.error is None:  # deterministic decoding: the answer is comparable
            record = record.model_copy(update=answer_fingerprint(answer))
        return Sent(record, answer)

    return send
