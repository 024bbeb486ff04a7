"""Honest concurrency: what a run can reach, what it reached, and what this process can open.

Two bounds, and what tcobench does about each (README, failure table):

Design notes: docs/dev/architecture/load.md#tasks-load-limits.
"""

from __future__ import annotations

import logging
import resource
from collections.abc import Iterable
from pathlib import Path

from tcobench.errors import ConfigError
from tcobench.schemas import LoadMode, RequestRecord, WorkloadConfig
from tcobench.tasks.load.loadgen import client_procs

__all__ = ["FD_HEADROOM", "check_load", "plan_bound", "port_range", "reached"]

log = logging.getLogger("tcobench.load")

# Descriptors a client process needs besides its streams: interpreter, logs, pipes, the store, DuckDB, telemetry.
FD_HEADROOM = 256
_PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def plan_bound(workload: WorkloadConfig) -> int | None:
    """The most requests a run of this workload can have in flight at once; None when the plan sets no bound."""
    if workload.mode is not LoadMode.closed or workload.duration_s is not None:
        return None
    turns = workload.turns
    return max(-(-workload.requests // turns), -(-workload.warmup_requests // turns))


def port_range() -> int | None:
    """How many local ports the kernel hands out for outgoing connections (None where it does not say)."""
    try:
        low, high = (int(x) for x in _PORT_RANGE.read_text().split())
    except (OSError, ValueError):
        return None
    return high - low + 1


def _descriptors(need: int) -> str | None:
    """Raise the soft RLIMIT_NOFILE to ``need`` when the hard limit allows; why not otherwise."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or need <= soft:
        return None
    if hard != resource.RLIM_INFINITY and need > hard:
        return (
            f"{need} file descriptors per client process, over this process's limit of {hard} (RLIMIT_NOFILE, "
            "`ulimit -Hn`)"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))  # children (client processes) inherit it
    return None


def check_load(workload: WorkloadConfig, warn: bool = True) -> None:
    """Refuse a concurrency level this process cannot open (ConfigError, one line naming the limit); warn once, on
    one line, about the levels the plan cannot reach (they are lowered: see the module doc)."""
    bound = plan_bound(workload)
    ports = port_range()
    over = []
    for level in workload.concurrency:
        streams = level if bound is None else min(level, bound)
        procs = max(1, client_procs(workload, streams))
        why = _descriptors(-(-streams // procs) + FD_HEADROOM)
        if why is None and ports is not None and streams > ports:
            why = (
                f"{streams} connections to one engine address, over the {ports} local ports the kernel hands "
                f"out (net.ipv4.ip_local_port_range)"
            )
        if why is not None:
            raise ConfigError(f"workload.concurrency {level} cannot be opened here: {why}; lower the concurrency")
        if bound is not None and level > bound:
            over.append(level)
    if warn and over and bound is not None:
        levels = ", ".join(str(level) for level in over)
        verb, which = ("exceeds", "the run goes on") if len(over) == 1 else ("exceed", "those runs go on")
        log.warning(
            f"workload.concurrency {levels} {verb} what the plan can reach: {bound} in flight at most "
            f"(requests {workload.requests}, warm-up {workload.warmup_requests}, turns "
            f"{workload.turns}); {which} at {bound} and store{'s' if len(over) == 1 else ''} concurrency_reached"
        )


def reached(records: Iterable[RequestRecord]) -> int:
    """The most requests in flight at once: a sweep over their [sent, ended) intervals (an end before a start at
    the same instant)."""
    events: list[tuple[int, int]] = []
    for r in records:
        events.append((r.start_ns, 1))
        events.append((r.start_ns + (r.e2e_ns or 0), -1))
    events.sort()
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most
