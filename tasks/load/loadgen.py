"""loadgen: the load from N client processes, each with its own event loop and its own slice of the load.

The closed loop splits the concurrency and shares one request counter; Poisson shares one global schedule. One
clock base and one start barrier for all processes; rows stream back to the parent as they finish; stops go
through the parent; each worker runs its own self-check.

Design notes: docs/dev/architecture/load.md#tasks-loadgen.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import queue
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tcobench.errors import MeasurementError
from tcobench.schemas import ClientProcessCheck, LoadMode, Phase, RequestRecord, WorkloadConfig
from tcobench.tasks.host.procs import die_with
from tcobench.tasks.load import shutdown
from tcobench.tasks.load.pacing import (
    Clock,
    Counter,
    Gate,
    Instant,
    OnPhase,
    OnRequest,
    PhaseRun,
    Slice,
    Stop,
    run_phase,
)
from tcobench.tasks.load.record import MeasureResult, RunContext, make_send
from tcobench.tasks.load.selfcheck import ProcessProbe
from tcobench.tasks.load.stream import Clients, Target
from tcobench.tasks.workload.plan import WorkloadPlan

__all__ = [
    "REQUESTS_PER_S_PER_PROC",
    "STREAMS_PER_PROC",
    "Flag",
    "SharedCounter",
    "SharedInstant",
    "auto_procs",
    "client_procs",
    "concurrency_slices",
    "measure_procs",
]

STREAMS_PER_PROC = 128  # streams one process keeps timed well (docs/dev/performance.md: client headroom)
REQUESTS_PER_S_PER_PROC = 400  # new requests per second one process sends on time (same source)
POLL_S = 0.02  # how often a worker looks at the parent's flags
# The queue's feeder thread pickles rows while the loop reads chunks: the loop gets the GIL back within 0.5 ms, not
# Python's default 5 ms.
SWITCH_INTERVAL_S = 0.0005
START_MARGIN_NS = 50_000_000  # the measured phase starts this long after the parent says go: every worker is waiting
READY_TIMEOUT_S = 120.0  # a worker that has not started its loop by then is a failure


def auto_procs(concurrency: int, rate: float | None, cores: int | None = None) -> int:
    """Enough processes for the load (one per STREAMS_PER_PROC streams or REQUESTS_PER_S_PER_PROC arrivals per
    second), at most the host's cores minus one (one is left to the engine or the system), at least one."""
    cores = cores or os.cpu_count() or 1
    need = max(-(-concurrency // STREAMS_PER_PROC), -(-int(rate or 0) // REQUESTS_PER_S_PER_PROC), 1)
    return max(1, min(need, cores - 1, concurrency))


def client_procs(workload: WorkloadConfig, concurrency: int, rate: float | None = None) -> int:
    """The client processes for a run: ``workload.client_procs``, else enough for the load (auto_procs) at ``rate``
    (the plan's arrival rate: a replay's mean), else ``workload.rate``."""
    if workload.client_procs is not None:
        return min(workload.client_procs, concurrency)
    return auto_procs(concurrency, rate if rate is not None else workload.rate)


def concurrency_slices(concurrency: int, procs: int) -> list[int]:
    """``concurrency`` split over ``procs`` as evenly as possible (the first ones get one more)."""
    base, extra = divmod(concurrency, procs)
    return [base + (k < extra) for k in range(procs)]


class SharedCounter(Counter):
    """A Counter in shared memory: the same for every client process."""

    def __init__(self, ctx: Any) -> None:
        self._shared = ctx.Value("q", 0)

    def take(self) -> int:
        with self._shared.get_lock():
            value = int(self._shared.value)
            self._shared.value = value + 1
        return value

    @property
    def value(self) -> int:
        return int(self._shared.value)


class SharedInstant(Instant):
    """An Instant in shared memory: the first measured request's send, whichever process sent it."""

    def __init__(self, ctx: Any) -> None:
        self._shared = ctx.Value("q", 0)  # 0: not set (the perf counter is never 0 once the host is up)

    def settle(self, now: int) -> int:
        with self._shared.get_lock():
            if not self._shared.value:
                self._shared.value = now
            return int(self._shared.value)

    @property
    def value(self) -> int | None:
        return int(self._shared.value) or None


class Flag:
    """A flag in shared memory: set once by the parent, read by the workers."""

    def __init__(self, ctx: Any) -> None:
        self._shared = ctx.Value("b", 0, lock=False)

    def set(self) -> None:
        self._shared.value = 1

    def is_set(self) -> bool:
        return bool(self._shared.value)


@dataclass(frozen=True)
class _Shared:
    """What the parent and every worker hold: flags, counters, the queue of rows and the measured start.

    Flags are shared integers the workers poll (every POLL_S), not multiprocessing Events: an Event's ``set`` waits
    for every process that ever waited on it, and hangs on one that has exited."""

    rows: Any
    go: dict[Phase, Flag]
    stop: Flag
    hurry: Flag
    units: dict[Phase, SharedCounter]
    started: SharedCounter
    first: SharedInstant  # the first measured request's send: a timed run's clock
    start_ns: Any  # perf-counter ns of the measured phase's start; 0: no measured phase (stopped in warm-up)

    @classmethod
    def make(cls, ctx: Any) -> _Shared:
        phases = (Phase.warmup, Phase.measure)
        return cls(
            ctx.Queue(),
            {p: Flag(ctx) for p in phases},
            Flag(ctx),
            Flag(ctx),
            {p: SharedCounter(ctx) for p in phases},
            SharedCounter(ctx),
            SharedInstant(ctx),
            ctx.Value("q", 0),
        )


@dataclass(frozen=True)
class _Job:
    target: Target
    plan: WorkloadPlan
    ctx: RunContext
    concurrency: int  # this worker's slice
    proc: int
    procs: int
    anchor: tuple[int, int]
    grace_s: float
    parent: int  # pid of the parent: the worker dies with it


async def _watch(shared: _Shared, stop: Stop) -> None:
    """Carry the parent's stop and hurry flags into this worker's loop."""
    while not shared.stop.is_set():
        await asyncio.sleep(POLL_S)
    stop.set("stopped by the parent")
    while not shared.hurry.is_set():
        await asyncio.sleep(POLL_S)
    stop.hurry("hurried by the parent")


async def _wait(flag: Flag) -> None:
    while not flag.is_set():
        await asyncio.sleep(POLL_S)


async def _worker_main(job: _Job, shared: _Shared) -> None:
    plan, workload = job.plan, job.plan.workload
    clients = Clients(job.target, workload, None)
    stop = Stop(job.grace_s)
    watch = asyncio.get_running_loop().create_task(_watch(shared, stop))
    send = make_send(job.target, plan, job.ctx, Clock(job.anchor), clients)
    put = shared.rows.put
    try:
        put(("ready", job.proc))
        await _wait(shared.go[Phase.warmup])
        warm = PhaseRun(Phase.warmup, plan, Gate(workload.warmup_requests, None, 0), send, put)
        part = Slice(job.concurrency, shared.units[Phase.warmup], job.proc, job.procs)
        warm = await run_phase(warm, LoadMode.closed, None, 0, stop, part)
        put(("phase", job.proc, Phase.warmup, warm.cancelled, False))
        await _wait(shared.go[Phase.measure])
        start = int(shared.start_ns.value)
        if not start or stop.is_set:
            put(("phase", job.proc, Phase.measure, 0, False))
            return
        count = None if workload.duration_s is not None else plan.measured_requests
        gate = Gate(count, workload.duration_s, workload.min_requests, shared.started, shared.first)
        measured = PhaseRun(Phase.measure, plan, gate, send, put)
        probe = ProcessProbe()
        probe.start()  # before the start: its gc.collect must not delay the first request
        await asyncio.sleep(max(0, start - time.perf_counter_ns()) / 1e9)
        try:
            part = Slice(job.concurrency, shared.units[Phase.measure], job.proc, job.procs, start)
            measured = await run_phase(
                measured, workload.mode, workload.rate, plan.seed_of(Phase.measure, 0), stop, part
            )
        finally:
            put(("check", job.proc, await probe.stop()))
        put(("phase", job.proc, Phase.measure, measured.cancelled, gate.forced))
    finally:
        watch.cancel()
        await clients.aclose()


def _worker(job: _Job, shared: _Shared) -> None:
    """A client worker process: signals are the parent's to handle; it dies with the parent."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    die_with(job.parent)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        asyncio.run(_worker_main(job, shared))
    except BaseException:  # noqa: BLE001 - any failure goes to the parent as text, which raises it
        shared.rows.put(("error", job.proc, traceback.format_exc(limit=8)))
        raise SystemExit(1) from None
    shared.rows.put(("done", job.proc))


@dataclass
class _Collected:
    """What the parent gathered from the workers."""

    records: dict[Phase, list[RequestRecord]] = field(default_factory=lambda: {Phase.warmup: [], Phase.measure: []})
    phases: dict[Phase, set[int]] = field(default_factory=lambda: {Phase.warmup: set(), Phase.measure: set()})
    ready: set[int] = field(default_factory=set)
    done: set[int] = field(default_factory=set)
    checks: dict[int, ClientProcessCheck] = field(default_factory=dict)
    cancelled: int = 0
    forced: bool = False


class _Parent:
    def __init__(self, procs: list[Any], shared: _Shared, on_request: OnRequest | None, deadline_s: float | None):
        self.procs, self.shared, self.on_request = procs, shared, on_request
        self.got = _Collected()
        self.reason: str | None = None
        self.deadline = time.monotonic() + deadline_s if deadline_s else None
        self.deadline_s = deadline_s

    def stop(self, reason: str, hurry: bool = False) -> None:
        if self.reason is None:
            self.reason = reason
        self.shared.stop.set()
        if hurry:
            self.shared.hurry.set()

    def _take(self, message: tuple[Any, ...]) -> None:
        kind, proc = message[0], message[1]
        if isinstance(kind, RequestRecord):  # a row, put by a phase's on_request
            self.got.records[kind.phase].append(kind)
            if self.on_request is not None:
                self.on_request(kind)
        elif kind == "ready":
            self.got.ready.add(proc)
        elif kind == "phase":
            self.got.phases[message[2]].add(proc)
            self.got.cancelled += message[3]
            self.got.forced = self.got.forced or message[4]
        elif kind == "check":
            self.got.checks[proc] = message[2]
        elif kind == "done":
            self.got.done.add(proc)
        elif kind == "error":
            self.stop("a client process failed", hurry=True)
            raise MeasurementError(f"client process {proc} failed: {message[2].strip().splitlines()[-1]}")

    def until(self, ready: Callable[[], bool], timeout_s: float | None = None) -> None:
        """Take messages until ``ready()``; a worker that died without saying done is a failure."""
        limit = time.monotonic() + timeout_s if timeout_s else None
        while not ready():
            if self.deadline is not None and time.monotonic() > self.deadline:
                self.stop(f"run deadline of {self.deadline_s:g} s reached")
            try:
                message = self.shared.rows.get(timeout=0.1)
            except queue.Empty:
                self._check_alive(limit)
                continue
            self._take(message if isinstance(message, tuple) else (message, None))

    def _check_alive(self, limit: float | None) -> None:
        for k, proc in enumerate(self.procs):
            if k not in self.got.done and proc.exitcode is not None:
                with contextlib.suppress(queue.Empty):  # its last words (an error, done) may still be in the queue
                    while True:
                        message = self.shared.rows.get(timeout=0.5)
                        self._take(message if isinstance(message, tuple) else (message, None))
                if k in self.got.done:
                    continue
                self.stop("a client process died", hurry=True)
                raise MeasurementError(f"client process {k} exited with status {proc.exitcode} before it finished")
        if limit is not None and time.monotonic() > limit:
            self.stop("client processes did not start", hurry=True)
            raise MeasurementError(f"client processes did not start within {READY_TIMEOUT_S:g} s")


def _result(got: _Collected, procs: int, reason: str | None, timed: bool) -> MeasureResult:
    measured = sorted(got.records[Phase.measure], key=lambda r: r.request_index)
    warmup = sorted(got.records[Phase.warmup], key=lambda r: r.request_index)
    starts = [r.start_ns for r in measured]
    ends = [r.start_ns + r.e2e_ns for r in measured if r.e2e_ns is not None]
    rule = ("min_requests" if got.forced else "duration") if timed else "requests"
    return MeasureResult(
        warmup=warmup,
        measured=measured,
        measure_start_ns=min(starts) if starts else None,
        measure_end_ns=max(ends) if ends else None,
        stopped=reason,
        cancelled=got.cancelled,
        stop_rule=rule if reason is None else "interrupted",
        client=tuple(got.checks[k] for k in range(procs) if k in got.checks),
    )


def measure_procs(
    target: Target,
    plan: WorkloadPlan,
    ctx: RunContext,
    concurrency: int,
    procs: int,
    on_request: OnRequest | None,
    on_phase: OnPhase | None,
) -> MeasureResult:
    """Warm up and measure from ``procs`` worker processes (see the module doc); the same result as measure()."""
    mp = multiprocessing.get_context("spawn")  # no fork: the parent may hold threads (Prefect, telemetry)
    shared = _Shared.make(mp)
    anchor = (time.time_ns(), time.perf_counter_ns())
    jobs = [
        _Job(
            target,
            plan,
            RunContext(ctx.run_id, ctx.date, ctx.host, k),
            c,
            k,
            procs,
            anchor,
            shutdown.grace_s(),
            os.getpid(),
        )
        for k, c in enumerate(concurrency_slices(concurrency, procs))
    ]
    workers = [mp.Process(target=_worker, args=(job, shared), name=f"tcobench-client-{job.proc}") for job in jobs]
    parent = _Parent(workers, shared, on_request, plan.workload.run_deadline_s)
    unlisten = shutdown.listen(lambda reason, hurry: parent.stop(reason, hurry))
    mark = on_phase or (lambda phase: None)
    try:
        for w in workers:
            w.start()
        parent.until(lambda: len(parent.got.ready) == procs, READY_TIMEOUT_S)
        mark(Phase.warmup)
        shared.go[Phase.warmup].set()
        parent.until(lambda: len(parent.got.phases[Phase.warmup]) == procs)
        if not shared.stop.is_set():
            mark(Phase.measure)
            shared.start_ns.value = time.perf_counter_ns() + START_MARGIN_NS
        shared.go[Phase.measure].set()
        parent.until(lambda: len(parent.got.done) == procs)
    finally:
        unlisten()
        shared.stop.set()
        shared.hurry.set()
        shared.go[Phase.warmup].set()
        shared.go[Phase.measure].set()
        for w in workers:
            w.join(timeout=10)
            if w.is_alive():
                w.kill()
                w.join()
    return _result(parent.got, procs, parent.reason, plan.workload.duration_s is not None)
