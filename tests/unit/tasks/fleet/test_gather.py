"""judge: the per-host deadlines of the nightly's gather loop, on a simulated clock (the decisions are pure; the
loop itself runs against a real Prefect server in tests/integration/test_fleet.py); _run_states: the runs' states
from the lean read (runs not RUNNING in full, the RUNNING ones counted)."""

from __future__ import annotations

from types import SimpleNamespace

from tcobench.schemas import FleetSettings
from tcobench.tasks.fleet import HostTrack, Observation, gather, judge

FLEET = FleetSettings(pickup_timeout_s=60, host_budget_s=600, cancel_grace_s=30, lost_after_s=90)
WORKER = "worker tcobench-host-b is online, last heartbeat 2026-12-01 02:00:00 UTC"


def seen(state: str | None, beat: str | None = "t0", message: str | None = None) -> Observation:
    return Observation(state=state, message=message, worker=WORKER, heartbeat=beat)


def test_a_run_nobody_picks_up_is_host_offline_after_the_pickup_timeout() -> None:
    track = HostTrack("host-b", "run-1", dispatched=0.0)
    assert judge(track, seen("SCHEDULED"), 59.0, FLEET) == ("wait", None, None)
    action, status, reason = judge(track, seen("SCHEDULED"), 61.0, FLEET)
    assert (action, status) == ("cancel", "offline")
    assert reason == f"host offline: no worker picked up its run within 60 s ({WORKER})"


def test_a_running_host_whose_worker_goes_silent_is_lost() -> None:
    track = HostTrack("host-b", "run-1", dispatched=0.0)
    assert judge(track, seen("RUNNING", "t1"), 10.0, FLEET)[0] == "wait"
    assert judge(track, seen("RUNNING", "t2"), 50.0, FLEET)[0] == "wait"  # a new heartbeat: alive
    assert judge(track, seen("RUNNING", "t2"), 139.0, FLEET)[0] == "wait"
    action, status, reason = judge(track, seen("RUNNING", "t2"), 141.0, FLEET)
    assert (action, status) == ("crash", "lost") and reason is not None
    assert reason.startswith("host lost: its worker sent no heartbeat for 91 s while its run was running")


def test_a_host_without_a_known_worker_is_held_to_its_budget_only() -> None:
    track = HostTrack("host-b", "run-1", dispatched=0.0)
    assert judge(track, seen("RUNNING", None), 5.0, FLEET)[0] == "wait"
    assert judge(track, seen("RUNNING", None), 500.0, FLEET)[0] == "wait"  # no heartbeat to judge by


def test_over_budget_is_cancelled_then_given_up_after_the_grace() -> None:
    track = HostTrack("host-b", "run-1", dispatched=0.0)
    judge(track, seen("PENDING", "t1"), 5.0, FLEET)
    beats = iter(f"t{i}" for i in range(10_000))
    for now in range(10, 605, 10):  # heartbeats keep coming: alive, but slow
        assert judge(track, seen("RUNNING", next(beats)), float(now), FLEET)[0] == "wait"
    action, status, reason = judge(track, seen("RUNNING", next(beats)), 606.0, FLEET)
    assert (action, status, reason) == (
        "stop",
        "over-budget",
        "over budget: its run took more than 600 s and was cancelled",
    )
    assert status is not None and reason is not None
    track.stopping_since, track.verdict = 606.0, (status, reason)
    assert judge(track, seen("CANCELLING", next(beats)), 630.0, FLEET)[0] == "wait"
    action, status, reason = judge(track, seen("CANCELLING", next(beats)), 637.0, FLEET)
    assert (action, status) == ("crash", "over-budget") and reason is not None and "did not stop within 30 s" in reason


def test_final_states_end_the_host_with_their_message() -> None:
    def ends(state: str, message: str) -> tuple[str, str | None, str | None]:
        return judge(HostTrack("h", "r", 0.0), seen(state, message=message), 1.0, FLEET)

    assert ends("COMPLETED", "All states completed.") == ("done", "completed", None)
    assert ends("CRASHED", "Execution was aborted by a termination signal.") == (
        "done",
        "crashed",
        "its run crashed: Execution was aborted by a termination signal.",
    )
    assert ends("FAILED", "ConfigError: x") == ("done", "failed", "its run failed: ConfigError: x")
    cancelled = HostTrack("h", "r", 0.0, verdict=("over-budget", "over budget: ..."), stopping_since=0.5)
    assert judge(cancelled, seen("CANCELLED"), 2.0, FLEET) == ("done", "over-budget", "over budget: ...")
    finished_anyway = HostTrack("h", "r", 0.0, verdict=("over-budget", "over budget: ..."), stopping_since=0.5)
    assert judge(finished_anyway, seen("COMPLETED"), 2.0, FLEET) == ("done", "completed", None)


def test_after_an_api_outage_a_worker_gets_its_backoff_before_it_is_lost() -> None:
    track = HostTrack("host-b", "run-1", dispatched=0.0)
    slow = Observation(state="RUNNING", message=None, worker=WORKER, heartbeat="t1", heartbeat_interval_s=5)
    judge(track, slow, 10.0, FLEET)
    track.heartbeat_seen, track.after_outage = 100.0, True  # what the loop does when the API comes back
    assert judge(track, slow, 100.0 + 90 + 16 * 5 - 1, FLEET)[0] == "wait"  # Prefect's worker may still back off
    assert judge(track, slow, 100.0 + 90 + 16 * 5 + 1, FLEET)[1] == "lost"
    fresh = HostTrack("host-b", "run-1", dispatched=0.0, heartbeat="t1", heartbeat_seen=100.0, after_outage=True)
    judge(fresh, Observation("RUNNING", None, WORKER, "t2", 5), 120.0, FLEET)  # its first heartbeat since
    assert (
        not fresh.after_outage
        and judge(fresh, Observation("RUNNING", None, WORKER, "t2", 5), 211.0, FLEET)[1] == "lost"
    )


def test_a_host_with_a_budget_of_its_own_is_held_to_it() -> None:
    track = HostTrack("host-d", "run-1", dispatched=0.0, budget_s=20)
    judge(track, seen("RUNNING", "t1"), 1.0, FLEET)
    assert judge(track, seen("RUNNING", "t2"), 20.0, FLEET)[0] == "wait"
    assert judge(track, seen("RUNNING", "t3"), 22.0, FLEET)[:2] == ("stop", "over-budget")
    assert track.deadline(FLEET) == 0.0 + 60 + 20 + 30 + 90


def _run(run_id: str, state: str | None, message: str | None = None) -> SimpleNamespace:
    """A flow run as Prefect's client reads it: its id and state (type, message)."""
    return SimpleNamespace(
        id=run_id,
        state=SimpleNamespace(type=SimpleNamespace(value=state), message=message) if state is not None else None,
    )


def test_runs_only_counted_as_running_are_running_and_the_ones_read_keep_their_state() -> None:
    ids = ["r1", "r2", "r3"]
    read = [_run("r2", "COMPLETED", "All states completed.")]
    assert gather._run_states(ids, read, running=2) == {
        "r1": ("RUNNING", None),
        "r2": ("COMPLETED", "All states completed."),
        "r3": ("RUNNING", None),
    }


def test_runs_that_the_count_does_not_cover_stay_unknown() -> None:
    # a full read (no count): what it did not return stays unknown, as a run that could not be read
    assert gather._run_states(["r1", "r2"], [_run("r1", "RUNNING")], running=0) == {"r1": ("RUNNING", None)}
    # a count that does not cover every run left: none is guessed
    assert gather._run_states(["r1", "r2", "r3"], [], running=2) == {}
    assert gather._run_states(["r1"], [_run("r1", None)], running=0) == {"r1": (None, None)}
