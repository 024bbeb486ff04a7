"""selfcheck: is the client itself the limit of a run? Measured on every run, per client process.

Over the measured phase each process records:

Design notes: docs/dev/architecture/load.md#tasks-selfcheck.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import random
import time
from collections.abc import Sequence
from typing import Any

from tcobench.schemas import ClientProcessCheck
from tcobench.tasks.analysis.quantile import quantile

__all__ = [
    "CPU_LIMIT",
    "LAG_INTERVAL_NS",
    "LAG_P99_LIMIT_NS",
    "LAG_RESERVOIR",
    "MIN_LAG_SAMPLES",
    "SEND_LAG_P99_LIMIT_NS",
    "LoopLag",
    "RunQueueWait",
    "ProcessProbe",
    "run_fields",
    "send_lag_verdict",
    "verdict",
]

LAG_INTERVAL_NS = 10_000_000  # a lag sample every 10 ms (its cost: docs/dev/performance.md#lag-sampling)
LAG_P99_LIMIT_NS = 5_000_000  # 5 ms: well above the 0-1 ms floor of epoll's rounding, under a 10 ms token gap
CPU_LIMIT = 0.95  # of one core: the loop had no idle time left
MIN_LAG_SAMPLES = 50  # fewer: the p99 is one sample (one pause), too few to call the loop saturated
LAG_RESERVOIR = 100_000  # samples kept (uniform reservoir past that: over 16 minutes at 10 ms)
# A replay whose sends are later than this at p99 did not keep the trace's times: the bound and its measurement are
# in docs/workloads.md#replay (the lag of a client that keeps time is a fraction of it, even on a loaded machine).
SEND_LAG_P99_LIMIT_NS = 50_000_000


class RunQueueWait:
    """This thread's run-queue wait so far, ns (``/proc/thread-self/schedstat``); always 0 where there is none."""

    def __init__(self) -> None:
        self._fd: int | None = None
        with contextlib.suppress(OSError):
            self._fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)  # bound to the thread that opens it

    def __call__(self) -> int:
        if self._fd is None:
            return 0
        try:
            return int(os.pread(self._fd, 128, 0).split()[1])
        except (OSError, IndexError, ValueError):
            return 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class LoopLag:
    """Samples the running event loop's lag, raw and its own (less run-queue wait), into bounded uniform reservoirs
    (Algorithm R, seeded)."""

    def __init__(self, interval_ns: int = LAG_INTERVAL_NS, reservoir: int = LAG_RESERVOIR) -> None:
        self.interval_ns, self.reservoir = interval_ns, reservoir
        self.samples: list[int] = []
        self.own: list[int] = []
        self.seen = 0
        self._rng = random.Random(0)
        self._task: asyncio.Task[None] | None = None

    def add(self, lag_ns: int, own_ns: int | None = None) -> None:
        self.seen += 1
        own_ns = lag_ns if own_ns is None else own_ns
        if len(self.samples) < self.reservoir:
            self.samples.append(lag_ns)
            self.own.append(own_ns)
            return
        slot = self._rng.randrange(self.seen)
        if slot < self.reservoir:
            self.samples[slot], self.own[slot] = lag_ns, own_ns

    async def _run(self) -> None:
        delay = self.interval_ns / 1e9
        waited = RunQueueWait()
        try:
            while True:
                wait0, due = waited(), time.perf_counter_ns() + self.interval_ns
                await asyncio.sleep(delay)
                lag = max(0, time.perf_counter_ns() - due)
                self.add(lag, max(0, lag - (waited() - wait0)))
        finally:
            waited.close()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


class ProcessProbe:
    """CPU of the loop thread, wall time and loop lag from ``start`` to ``stop`` (both on the running loop's thread)."""

    def __init__(self) -> None:
        self.lag = LoopLag()
        self._cpu0 = self._wall0 = 0

    def start(self) -> None:
        # Objects alive before the measured phase move out of the collector's reach (gc.freeze): a full collection
        # then scans only what the phase allocates, not everything the process holds (a pause of tens of ms in a
        # large process, on the loop that timestamps chunks). No gc.collect() first: garbage frozen with them is
        # collected after ``stop`` unfreezes it, and a full collection of a Prefect host process at every level
        # cost a share of its CPU (docs/dev/performance.md#gc-freeze).
        gc.freeze()
        self._cpu0, self._wall0 = time.thread_time_ns(), time.perf_counter_ns()
        self.lag.start()

    async def stop(self) -> ClientProcessCheck:
        wall, cpu = time.perf_counter_ns() - self._wall0, time.thread_time_ns() - self._cpu0
        gc.unfreeze()
        await self.lag.stop()
        p50, p99, own = (
            _ns(quantile(values, q))
            for values, q in ((self.lag.samples, 0.5), (self.lag.samples, 0.99), (self.lag.own, 0.99))
        )
        return ClientProcessCheck(
            wall_ns=wall, cpu_ns=cpu, lag_p50_ns=p50, lag_p99_ns=p99, own_lag_p99_ns=own, lag_samples=self.lag.seen
        )


def _ns(value: float | None) -> int | None:
    return None if value is None else round(value)


def verdict(checks: Sequence[ClientProcessCheck]) -> tuple[bool, str | None]:
    """(saturated, why): any process with its own loop lag p99 over LAG_P99_LIMIT_NS or CPU use at CPU_LIMIT of a
    core."""
    why = []
    for i, c in enumerate(checks):
        long_enough = c.wall_ns >= MIN_LAG_SAMPLES * LAG_INTERVAL_NS
        if long_enough and c.own_lag_p99_ns is not None and c.own_lag_p99_ns > LAG_P99_LIMIT_NS:
            why.append(
                f"process {i}: event-loop lag p99 {c.own_lag_p99_ns / 1e6:.1f} ms (run-queue wait excluded) > "
                f"{LAG_P99_LIMIT_NS / 1e6:g} ms"
            )
        if c.wall_ns > 0 and c.cpu_ns / c.wall_ns >= CPU_LIMIT:
            why.append(f"process {i}: CPU {c.cpu_ns / c.wall_ns:.0%} of a core >= {CPU_LIMIT:.0%}")
    return bool(why), ("client saturated: " + "; ".join(why)) if why else None


def send_lag_verdict(lags_ns: Sequence[int]) -> str | None:
    """Why a replay lagged (p99 of its send lags, sent - scheduled, over SEND_LAG_P99_LIMIT_NS), or None."""
    p99 = quantile(lags_ns, 0.99)
    if p99 is None or p99 <= SEND_LAG_P99_LIMIT_NS:
        return None
    return (
        f"replay send lag p99 {p99 / 1e6:.1f} ms > {SEND_LAG_P99_LIMIT_NS / 1e6:g} ms (a busy client, or requests "
        "waiting for a slot under the concurrency cap)"
    )


def run_fields(checks: Sequence[ClientProcessCheck], send_lags_ns: Sequence[int] = ()) -> dict[str, Any]:
    """The run row's client_* columns from the per-process checks (all null when nothing was measured); a replay's
    send lags (``send_lags_ns``) over their bound flag the client too (client_saturated, client_check_note)."""
    if not checks:
        return {}
    saturated, why = verdict(checks)
    lagging = send_lag_verdict(send_lags_ns)
    if lagging is not None:
        saturated, why = True, "; ".join(w for w in (why, "client lagging: " + lagging) if w)
    return {
        "client_procs": len(checks),
        "client_wall_ns": [c.wall_ns for c in checks],
        "client_cpu_ns": [c.cpu_ns for c in checks],
        "client_loop_lag_p50_ns": [c.lag_p50_ns or 0 for c in checks],
        "client_loop_lag_p99_ns": [c.lag_p99_ns or 0 for c in checks],
        "client_own_lag_p99_ns": [c.own_lag_p99_ns or 0 for c in checks],
        "client_lag_samples": [c.lag_samples for c in checks],
        "client_saturated": saturated,
        "client_check_note": why,
    }
