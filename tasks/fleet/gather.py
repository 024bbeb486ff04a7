"""dispatch_and_gather: one run per host on that host's work queue, all at once, then wait for them with deadlines.

Every host is judged on its own clock (``judge``), so one bad host never holds the others:

    waiting for a worker   state SCHEDULED for pickup_timeout_s      -> cancelled: "host offline"
    running                no worker heartbeat for lost_after_s      -> crashed:   "host lost"
    running                longer than host_budget_s                 -> cancelling: "over budget", then after
                                                                        cancel_grace_s given up (crashed)
    ended                  COMPLETED / FAILED / CRASHED / CANCELLED  -> completed, or the state's message

Design notes: docs/dev/architecture/flows-and-fleet.md#tasks-fleet-gather.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tcobench.schemas import FleetSettings

__all__ = ["FINAL_STATES", "HostOutcome", "HostTrack", "Observation", "dispatch_and_gather", "judge", "worker_name"]

FINAL_STATES = frozenset({"COMPLETED", "FAILED", "CRASHED", "CANCELLED"})
Log = Callable[[str], None]


def worker_name(queue: str) -> str:
    """Name of the Prefect worker ``tcobench worker`` starts for a queue (its heartbeats are looked up by it)."""
    return f"tcobench-{queue}"


@dataclass(frozen=True)
class HostOutcome:
    """How a host's run ended: status completed | offline | lost | over-budget | crashed | failed | cancelled |
    unreachable | not-dispatched; ``reason`` says why (None when completed)."""

    host: str
    status: str
    reason: str | None
    flow_run_id: str | None


@dataclass(frozen=True)
class Observation:
    """What the API said about a host's run and its worker in one poll."""

    state: str | None  # StateType name (SCHEDULED, RUNNING, ...), None if the run could not be read
    message: str | None
    worker: str  # the worker as messages describe it
    heartbeat: str | None  # the worker's last heartbeat time as the server reports it; None: no such worker
    heartbeat_interval_s: float = 30.0  # the worker's own heartbeat interval (Prefect's default 30 s)


@dataclass
class HostTrack:
    """One host's run as the gather loop follows it (monotonic seconds)."""

    host: str
    flow_run_id: str | None
    dispatched: float
    budget_s: float | None = None  # this host's own budget (HostSpec.budget_s), else the fleet's
    picked: float | None = None
    stopping_since: float | None = None
    verdict: tuple[str, str] | None = None  # (status, reason) decided here, kept until the run is final
    heartbeat: str | None = None
    heartbeat_seen: float | None = None
    after_outage: bool = False  # the API was down: the worker may be backing off until its next heartbeat
    last_state: str | None = None
    outcome: HostOutcome | None = field(default=None)

    def budget(self, fleet: FleetSettings) -> float:
        return self.budget_s or fleet.host_budget_s

    def deadline(self, fleet: FleetSettings) -> float:
        """The latest moment this host can still need: pickup + budget + grace + a lost worker's silence."""
        return self.dispatched + fleet.pickup_timeout_s + self.budget(fleet) + fleet.cancel_grace_s + fleet.lost_after_s


Action = tuple[str, str | None, str | None]  # (wait | done | cancel | stop | crash, status, reason)


def _ended(obs: Observation) -> tuple[str, str | None]:
    message = " ".join((obs.message or "no message").split())
    return {
        "COMPLETED": ("completed", None),
        "FAILED": ("failed", f"its run failed: {message}"),
        "CRASHED": ("crashed", f"its run crashed: {message}"),
        "CANCELLED": ("cancelled", f"its run was cancelled: {message}"),
    }[obs.state or ""]


def judge(track: HostTrack, obs: Observation, now: float, fleet: FleetSettings) -> Action:
    """What to do about one host's run given what was just read (pure apart from updating ``track``)."""
    if obs.heartbeat != track.heartbeat or track.heartbeat_seen is None:
        if track.heartbeat_seen is not None:
            track.after_outage = False  # a fresh heartbeat: the worker is back to its rhythm
        track.heartbeat, track.heartbeat_seen = obs.heartbeat, now
    track.last_state = obs.state or track.last_state
    if obs.state in FINAL_STATES:  # a run that completed after all is reported as completed
        status, reason = track.verdict if track.verdict and obs.state != "COMPLETED" else _ended(obs)
        return "done", status, reason
    if track.stopping_since is not None:
        if now - track.stopping_since > fleet.cancel_grace_s and track.verdict is not None:
            status, reason = track.verdict
            return "crash", status, f"{reason}; it did not stop within {fleet.cancel_grace_s:g} s and was given up"
        return "wait", None, None
    if obs.state in (None, "SCHEDULED"):
        if now - track.dispatched > fleet.pickup_timeout_s:
            return (
                "cancel",
                "offline",
                (f"host offline: no worker picked up its run within {fleet.pickup_timeout_s:g} s ({obs.worker})"),
            )
        return "wait", None, None
    track.picked = track.picked or now
    silent = now - max(track.heartbeat_seen, track.picked)
    allowed = fleet.lost_after_s + (16 * obs.heartbeat_interval_s if track.after_outage else 0.0)
    if obs.heartbeat is not None and silent > allowed:
        return (
            "crash",
            "lost",
            (
                f"host lost: its worker sent no heartbeat for {silent:.0f} s while its run was "
                f"{(obs.state or 'running').lower()} ({obs.worker})"
            ),
        )
    if now - track.picked > track.budget(fleet):
        return "stop", "over-budget", f"over budget: its run took more than {track.budget(fleet):g} s and was cancelled"
    return "wait", None, None


def _describe_worker(worker: Any | None, name: str) -> str:
    if worker is None:
        return f"no worker named {name} has connected to this work pool"
    status = getattr(getattr(worker, "status", None), "value", None) or str(getattr(worker, "status", "unknown"))
    last = worker.last_heartbeat_time
    seen = last.strftime("%Y-%m-%d %H:%M:%S UTC") if last is not None else "never"
    return f"worker {name} is {str(status).lower()}, last heartbeat {seen}"


def _run_states(ids: list[str], runs: list[Any], running: int) -> dict[str, tuple[str | None, str | None]]:
    """(state type, message) of each of ``ids`` that is known: those of ``runs`` (flow runs read in full); and when
    ``running`` (how many of the others are RUNNING) is all of the others, RUNNING for each of them."""
    known = {str(r.id): (r.state.type.value, r.state.message) if r.state is not None else (None, None) for r in runs}
    rest = [i for i in ids if i not in known]
    if running and running == len(rest):
        known.update((i, ("RUNNING", None)) for i in rest)
    return known


class _Api:
    """The few Prefect API calls the gather loop makes (sync client; import deferred: tasks load without it)."""

    def __init__(self, pool: str) -> None:
        from prefect.client.orchestration import get_client

        self.pool = pool
        self.client = get_client(sync_client=True)
        self.client.__enter__()

    def close(self) -> None:
        self.client.__exit__(None, None, None)

    def states(self, ids: list[str]) -> dict[str, tuple[str | None, str | None]]:
        """(state type, message) of each run that could be read: the runs not RUNNING in full, the RUNNING ones
        only counted (their message is never judged). A night's runs are RUNNING nearly all the time, and each
        carries its host's cells as parameters: reading every run at every poll cost the Prefect server more than
        reading so (docs/dev/performance.md#run-state-reads). When the two reads do not add up (a run
        changed state between them, or is gone), every run is read in full."""
        from prefect.client.schemas.filters import (
            FlowRunFilter,
            FlowRunFilterId,
            FlowRunFilterState,
            FlowRunFilterStateType,
        )
        from prefect.client.schemas.objects import StateType

        def runs(**state: list[StateType]) -> FlowRunFilter:
            by_state = FlowRunFilterState(type=FlowRunFilterStateType(**state)) if state else None
            return FlowRunFilter(id=FlowRunFilterId(any_=ids), state=by_state)

        others = self.client.read_flow_runs(flow_run_filter=runs(not_any_=[StateType.RUNNING]))
        running = self.client.count_flow_runs(flow_run_filter=runs(any_=[StateType.RUNNING]))
        if running + len(others) != len(ids):
            others, running = self.client.read_flow_runs(flow_run_filter=runs()), 0
        return _run_states(ids, others, running)

    def observe(self, tracks: list[HostTrack]) -> dict[str, Observation]:
        states = self.states([t.flow_run_id for t in tracks if t.flow_run_id])
        workers = {w.name: w for w in self.client.read_workers_for_work_pool(self.pool)}
        seen: dict[str, Observation] = {}
        for track in tracks:
            state, message = states.get(track.flow_run_id or "", (None, None))
            worker = workers.get(worker_name(track.host))
            beat = worker.last_heartbeat_time if worker is not None else None
            seen[track.host] = Observation(
                state=state,
                message=message,
                worker=_describe_worker(worker, worker_name(track.host)),
                heartbeat=beat.isoformat() if beat is not None else None,
                heartbeat_interval_s=float(getattr(worker, "heartbeat_interval_seconds", None) or 30),
            )
        return seen

    def set_state(self, flow_run_id: str, action: str, reason: str) -> None:
        from uuid import UUID

        from prefect.states import Cancelled, Cancelling, Crashed

        make = {"cancel": Cancelled, "stop": Cancelling, "crash": Crashed}[action]
        self.client.set_flow_run_state(UUID(flow_run_id), make(message=f"tcobench nightly: {reason}"), force=True)


def _dispatch(
    deployment: str, params: Mapping[str, dict[str, Any]], batch_id: str, log: Log, budgets: Mapping[str, float]
) -> list[HostTrack]:
    from prefect.deployments import run_deployment

    tracks = []
    for host, parameters in params.items():
        now = time.monotonic()
        try:
            run: Any = run_deployment(
                deployment,
                parameters=parameters,
                work_queue_name=host,
                timeout=0,
                flow_run_name=f"{host}-{batch_id[:8]}",
                tags=["tcobench", f"batch-{batch_id[:8]}"],
                idempotency_key=f"tcobench-{batch_id}-{host}",
            )
        except Exception as exc:  # the API refused or is down: this host is reported, the others go on
            track = HostTrack(host, None, now, budgets.get(host))
            reason = f"not dispatched: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
            track.outcome = HostOutcome(host, "not-dispatched", reason, None)
            log(f"{host}: {reason}")
        else:
            track = HostTrack(host, str(run.id), now, budgets.get(host))
            log(f"{host}: run {run.id} queued on work queue {host!r}")
        tracks.append(track)
    return tracks


def _apply(api: _Api, track: HostTrack, action: Action, now: float, log: Log) -> None:
    kind, status, reason = action
    if kind == "wait":
        return
    assert status is not None
    if kind in ("cancel", "stop", "crash") and track.flow_run_id:
        try:
            api.set_state(track.flow_run_id, kind, reason or status)
        except Exception as exc:  # reported in the outcome; the state stays as the server has it
            reason = f"{reason}; setting its state failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    if kind == "stop":
        track.stopping_since, track.verdict = now, (status, reason or status)
        log(f"{track.host}: {reason}; cancelling its run")
        return
    track.outcome = HostOutcome(track.host, status, reason, track.flow_run_id)
    log(f"{track.host}: {status}" + (f" ({reason})" if reason else ""))


def _give_up(track: HostTrack, down_since: float, now: float) -> None:
    reason = (
        f"unreachable: the Prefect API did not answer for the last {now - down_since:.0f} s, past this host's "
        f"deadline; its run was last seen {(track.last_state or 'not yet read').lower()}"
    )
    track.outcome = HostOutcome(track.host, "unreachable", reason, track.flow_run_id)


def dispatch_and_gather(
    deployment: str,
    params: Mapping[str, dict[str, Any]],
    fleet: FleetSettings,
    batch_id: str,
    log: Log = lambda message: None,
    budgets: Mapping[str, float] | None = None,
) -> dict[str, HostOutcome]:
    """Start one run of ``deployment`` per host (``params``: host -> parameters) on the host's queue; every
    host's outcome once each has ended or been judged. ``budgets``: hosts with a budget of their own."""
    tracks = _dispatch(deployment, params, batch_id, log, budgets or {})
    api = _Api(fleet.work_pool)
    down_since: float | None = None
    try:
        while any(t.outcome is None for t in tracks):
            time.sleep(fleet.poll_s)
            asked = time.monotonic()
            pending = [t for t in tracks if t.outcome is None]
            try:
                seen = api.observe(pending)
            except Exception as exc:  # API down (a server restart): keep every deadline, judge when it is back
                now = time.monotonic()
                if down_since is None:
                    down_since = asked
                    log(f"Prefect API unreachable ({type(exc).__name__}); waiting for it")
                for track in pending:
                    if now > track.deadline(fleet):
                        _give_up(track, down_since, now)
                continue
            now = time.monotonic()
            if down_since is None and now - asked > max(10.0, 3 * fleet.poll_s):  # hung in the client's retries
                down_since = asked
            if down_since is not None:
                log(f"Prefect API back after {now - down_since:.0f} s")
                for track in pending:
                    track.heartbeat_seen, track.after_outage = now, True  # no heartbeat could arrive meanwhile
                down_since = None
            for track in pending:
                _apply(api, track, judge(track, seen[track.host], now, fleet), now, log)
    finally:
        api.close()
    return {t.host: t.outcome for t in tracks if t.outcome is not None}
