"""Process hygiene (tasks.host.procs) with real processes: own sessions, the death signal, the watchdog, reclaiming
leftovers only by proof (pid file, start time, command line). Every process here is started by the test and
checked by its pid; nothing is looked up by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcobench.tasks.host import procs
from tcobench.tasks.host.procs import ProcessId

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process hygiene reads /proc (Linux)")


def gone(pid: int, timeout_s: float = 60.0) -> bool:
    """True once ``pid`` no longer runs (a zombie counts as gone), waiting at most ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ProcessId.of(pid) is None:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A process of our own to be reclaimed (own session, so only a deliberate signal ends it)."""
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _helper(code: str, tmp_path: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """A Python process running ``code`` that prints pids, one per line, then waits to be killed."""
    helper = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert helper.stdout is not None
    pids = [int(helper.stdout.readline()) for _ in range(code.count("print("))]
    return helper, pids


def test_process_identity_is_pid_start_time_and_command_line(sleeper: subprocess.Popen[bytes]) -> None:
    me = ProcessId.of(sleeper.pid, settle_s=10.0)  # just started: its command line may not be set up yet
    assert me is not None and me.alive() and me.cmdline == ("sleep", "300")
    assert not ProcessId(me.pid, me.start + 1, me.cmdline).alive()  # another process with a reused pid
    assert not ProcessId(me.pid, me.start, ("sleep", "301")).alive()
    sleeper.kill()
    sleeper.wait()
    assert ProcessId.of(sleeper.pid) is None and not me.alive()


def test_spawned_children_lead_their_own_group_and_die_with_their_parent(tmp_path: Path) -> None:
    helper, (child,) = _helper(
        """
        import sys, time
        from tcobench.tasks.host import procs
        proc = procs.spawn(["sleep", "300"], "sleeper")
        print(proc.pid, flush=True)
        time.sleep(300)
        """,
        tmp_path,
    )
    try:
        assert os.getpgid(child) == child and os.getsid(child) == child  # the terminal's Ctrl-C does not reach it
        helper.kill()  # SIGKILL: no Python code of the parent runs
        assert gone(child), "the death signal did not end the child"
    finally:
        helper.kill()
        helper.wait()


def test_the_watchdog_ends_guarded_processes_when_tcobench_is_killed(tmp_path: Path) -> None:
    helper, (watched, watchdog) = _helper(
        """
        import subprocess, sys, threading, time
        from pathlib import Path
        from tcobench.tasks.host import procs
        guard, _ = procs.open_guard(Path(sys.argv[1]))
        box = []
        # started from another thread and without our options: only the watchdog can end it
        t = threading.Thread(target=lambda: box.append(subprocess.Popen(["sleep", "300"], start_new_session=True)))
        t.start(); t.join()
        guard.add("sleeper", box[0].pid)
        print(box[0].pid, flush=True)
        print(guard._watchdog.pid, flush=True)
        time.sleep(300)
        """,
        tmp_path,
    )
    try:
        record = json.loads(next((tmp_path / "procs").glob("*.json")).read_text())
        assert [c["pid"] for c in record["children"]] == [watched] and record["owner"]["pid"] == helper.pid
        helper.kill()
        assert gone(watched), "the watchdog did not end the guarded process"
        assert gone(watchdog)
    finally:
        helper.kill()
        helper.wait()


def test_stop_process_ends_the_whole_group() -> None:
    proc = procs.spawn(["sh", "-c", "sleep 300 & echo $!; wait"], "shell", stdout=subprocess.PIPE)
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    procs.stop_process(proc)
    proc.stdout.close()
    assert proc.returncode is not None and gone(grandchild)


def _pid_file(state: Path, owner: ProcessId, child: ProcessId, boot: str | None = None) -> Path:
    path = state / "procs" / f"x-{owner.pid}-{owner.start}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "boot_id": boot or Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
        "owner": owner.record(),
        "children": [{"what": "llama-server", **child.record()}],
    }
    path.write_text(json.dumps(record))
    return path


def _dead_owner() -> ProcessId:
    return ProcessId(999_999_999, 1, ("tcobench", "run"))  # no such pid: a crashed tcobench


def test_leftovers_of_a_dead_run_are_reclaimed_by_proof(tmp_path: Path, sleeper: subprocess.Popen[bytes]) -> None:
    child = ProcessId.of(sleeper.pid, settle_s=10.0)  # just started: its command line may not be set up yet
    assert child is not None
    path = _pid_file(tmp_path, _dead_owner(), child)
    reclaimed = procs.reclaim_leftovers(tmp_path)
    assert reclaimed == [f"llama-server sleep (pid {sleeper.pid}) of tcobench pid 999999999"]
    assert sleeper.wait(timeout=60) is not None and not path.exists()


@pytest.mark.parametrize("case", ["other command line", "other start time", "owner alive", "other boot"])
def test_nothing_is_killed_without_proof(tmp_path: Path, sleeper: subprocess.Popen[bytes], case: str) -> None:
    child = ProcessId.of(sleeper.pid, settle_s=10.0)  # just started: its command line may not be set up yet
    assert child is not None
    owner = _dead_owner()
    if case == "other command line":  # the pid was reused by another program
        child = ProcessId(child.pid, child.start, ("llama-server", "--port", "1"))
    elif case == "other start time":
        child = ProcessId(child.pid, child.start - 1, child.cmdline)
    elif case == "owner alive":
        live = ProcessId.of(os.getpid())
        assert live is not None
        owner = live
    path = _pid_file(tmp_path, owner, child, boot="another-boot" if case == "other boot" else None)
    assert procs.reclaim_leftovers(tmp_path, timeout_s=0.5) == []
    assert sleeper.poll() is None
    assert path.exists() == (case == "owner alive")  # a live run's file stays; others cannot prove anything now


def test_an_unreadable_pid_file_is_dropped(tmp_path: Path) -> None:
    bad = tmp_path / "procs" / "broken.json"
    bad.parent.mkdir()
    bad.write_text("{not json")
    assert procs.reclaim_leftovers(tmp_path) == [] and not bad.exists()


def test_the_pid_file_lists_what_is_guarded_and_goes_when_closed(tmp_path: Path) -> None:
    guard, _ = procs.open_guard(tmp_path)
    try:
        proc = procs.spawn(["sleep", "300"], "sleeper")
        names = [c["what"] for c in json.loads(guard.path.read_text())["children"]]
        assert names == ["sleeper"]
        procs.stop_process(proc)
        assert json.loads(guard.path.read_text())["children"] == []
        other = procs.spawn(["sleep", "300"], "left running")
    finally:
        guard.close()
    assert not guard.path.exists() and gone(other.pid)  # close ends what is still guarded
    other.wait()
    assert procs.current_guard() is None


def test_an_unwritable_state_folder_costs_the_pid_file_only(tmp_path: Path) -> None:
    state = tmp_path / "a-file"
    state.write_text("not a folder")
    guard, reclaimed = procs.open_guard(state)
    try:
        assert reclaimed == [] and guard.warning is not None and "cannot keep a pid file" in guard.warning
        proc = procs.spawn(["sleep", "300"], "sleeper")
        assert guard._watchdog is not None and guard._watchdog.poll() is None  # still guarded by the watchdog
        procs.stop_process(proc)
    finally:
        guard.close()


def test_a_pid_file_of_tcobench_before_0_3_still_proves_its_processes(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    """It kept whole command lines: they are hashed when read, and the file goes (with the line in it)."""
    child = ProcessId.of(sleeper.pid, settle_s=10.0)
    assert child is not None
    path = tmp_path / "procs" / "old.json"
    path.parent.mkdir()
    old = {"pid": child.pid, "start": child.start, "cmdline": list(child.cmdline)}
    owner = {"pid": 999_999_999, "start": 1, "cmdline": ["tcobench", "run"]}
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    path.write_text(json.dumps({"boot_id": boot, "owner": owner, "children": [{"what": "llama-server", **old}]}))
    assert procs.reclaim_leftovers(tmp_path) == [f"llama-server sleep (pid {sleeper.pid}) of tcobench pid 999999999"]
    assert not path.exists()


def test_the_pid_file_keeps_hashes_not_command_lines_private_to_its_owner(tmp_path: Path) -> None:
    secret = "sk-procs-test-5e1d"
    guard, _ = procs.open_guard(tmp_path / "state")
    try:
        proc = procs.spawn(["sh", "-c", "sleep 300", "--api-key", secret], "engine")
        text = guard.path.read_text()
        record = json.loads(text)
        assert secret not in text and "sleep" not in text and "cmdline" not in text
        assert set(record["children"][0]) == {"what", "pid", "start", "cmd_sha256"}
        assert guard.path.stat().st_mode & 0o777 == 0o600
        assert guard.path.parent.stat().st_mode & 0o777 == 0o700
        procs.stop_process(proc)
    finally:
        guard.close()
