"""pacing: when requests go out: the run's clock, the pacings (closed loop, Poisson arrivals, a trace's replay:
``PACINGS``, one per ``LoadMode``), the gate that holds the streams in flight, the phases (warm-up, measured) and
the stop on a signal or deadline."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tcobench.schemas import LoadMode, Phase, RequestRecord
from tcobench.tasks._registry import Registry
from tcobench.tasks.load import shutdown
from tcobench.tasks.load.stream import Sent
from tcobench.tasks.workload.plan import RequestSpec, WorkloadPlan

__all__ = [
    "ALARM_MIN_NS",
    "Clock",
    "Counter",
    "Fire",
    "Gate",
    "Instant",
    "OnPhase",
    "OnRequest",
    "PACINGS",
    "Pacing",
    "PhaseRun",
    "Send",
    "Slice",
    "Stop",
    "arrivals",
    "run_phase",
    "stop_on_signal_or_deadline",
]

# An open-loop wait this long or longer is timed by a thread (``_Alarm``), a shorter one by asyncio's timer: gaps
# that short come at rates where the loop is seldom idle in epoll (so its millisecond rounding seldom applies), and
# a thread waking per arrival would compete with the loop for the GIL (docs/dev/performance.md#alarm-thread).
ALARM_MIN_NS = 1_000_000

OnRequest = Callable[[RequestRecord], None]
OnPhase = Callable[[Phase], None]


class Clock:
    """One (wall clock, perf counter) anchor; the client's worker processes get the parent's, so their wall times
    agree (the perf counter is CLOCK_MONOTONIC, one clock for every process on the host)."""

    def __init__(self, anchor: tuple[int, int] | None = None) -> None:
        self.wall0, self.perf0 = anchor or (time.time_ns(), time.perf_counter_ns())

    def wall(self, perf_ns: int) -> int:
        return self.wall0 + (perf_ns - self.perf0)


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


class Gate:
    """Whether another request may start: a count of requests, or a deadline with a minimum count."""

    def __init__(
        self,
        count: int | None,
        duration_s: float | None,
        min_requests: int,
        started: Counter | None = None,
        first: Instant | None = None,
    ) -> None:
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


class Stop:
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
    ``asyncio.sleep`` left 0-1 ms late (docs/dev/performance.md#alarm-thread). A thread that sleeps to the instant (a
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
def stop_on_signal_or_deadline(stop: Stop, deadline_s: float | None) -> Iterator[None]:
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


async def _closed_loop(units: int | None, concurrency: int, fire: Fire, stop: Stop, counter: Counter) -> None:
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


async def _open_loop(
    units: int | None, cap: int, schedule: Iterator[tuple[int, int]], fire: Fire, gate: Gate, stop: Stop
) -> None:
    """Send unit i at its due time from ``schedule`` ((unit, due) pairs: all of them, or one process's share of
    the one global schedule), with at most ``cap`` in flight (a unit waiting for a slot is sent late: its lateness
    says so)."""
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


Send = Callable[[RequestSpec, list[tuple[str, str, int | None]], Gate, int | None], Awaitable[Sent | None]]


class PhaseRun:
    """One phase of a run: its units of work (requests or conversations), the gate, the rows it made, and how
    many requests a stop cut off."""

    def __init__(self, phase: Phase, plan: WorkloadPlan, gate: Gate, send: Send, on_request: OnRequest | None):
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
    and every ``procs``-th arrival of the global open-loop schedule (Poisson, replay) from ``proc`` on, which
    starts at ``start_ns``."""

    concurrency: int
    counter: Counter
    proc: int = 0
    procs: int = 1
    start_ns: int | None = None


class Pacing:
    """When a phase's units go out: one variant per ``LoadMode``, registered in ``PACINGS``."""

    def load(self, phase: PhaseRun, rate: float | None, seed: int, stop: Stop, part: Slice) -> Awaitable[None]:
        """The coroutine that sends ``part``'s share of ``phase``."""
        raise NotImplementedError


PACINGS: Registry[LoadMode, Pacing] = Registry("pacing")


def _start(part: Slice) -> int:
    return time.perf_counter_ns() if part.start_ns is None else part.start_ns


def _share(schedule: Iterator[tuple[int, int]], part: Slice) -> Iterator[tuple[int, int]]:
    """Process ``part.proc``'s share of the one global schedule: arrivals proc, proc + procs, ..."""
    return itertools.islice(schedule, part.proc, None, part.procs)


@PACINGS.register(LoadMode.closed)
class _Closed(Pacing):
    """A new unit starts when one of ``concurrency`` workers is free."""

    def load(self, phase: PhaseRun, rate: float | None, seed: int, stop: Stop, part: Slice) -> Awaitable[None]:
        return _closed_loop(phase.units, part.concurrency, phase.fire, stop, part.counter)


@PACINGS.register(LoadMode.poisson)
class _Poisson(Pacing):
    """Arrivals at exponentially distributed gaps of mean 1/rate (seeded), at most ``concurrency`` in flight."""

    def load(self, phase: PhaseRun, rate: float | None, seed: int, stop: Stop, part: Slice) -> Awaitable[None]:
        if rate is None:  # the workload schema refuses it; a phase without a rate is a closed loop
            return PACINGS[LoadMode.closed].load(phase, rate, seed, stop, part)
        schedule = _share(enumerate(arrivals(rate, seed, _start(part))), part)
        return _open_loop(phase.units, part.concurrency, schedule, phase.fire, phase.gate, stop)


@PACINGS.register(LoadMode.replay)
class _Replay(Pacing):
    """Measured request i at the replayed trace's offset i (recorded offset x time scale) after the phase's start, at
    most ``concurrency`` in flight."""

    def load(self, phase: PhaseRun, rate: float | None, seed: int, stop: Stop, part: Slice) -> Awaitable[None]:
        start = _start(part)
        schedule = _share(((i, start + at) for i, at in enumerate(phase.plan.offsets_ns)), part)
        return _open_loop(phase.units, part.concurrency, schedule, phase.fire, phase.gate, stop)


async def run_phase(
    phase: PhaseRun, mode: LoadMode, rate: float | None, seed: int, stop: Stop, part: Slice
) -> PhaseRun:
    await stop.bounded(PACINGS[mode].load(phase, rate, seed, stop, part))
    phase.records.sort(key=lambda r: r.request_index)
    return phase
