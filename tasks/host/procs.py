"""Process hygiene: what tcobench starts dies with it, and leftovers of a crashed run are reclaimed, by proof.

Three layers, so no engine or API server outlives the ``tcobench`` that started it:

Design notes: docs/dev/architecture/hosts-and-engines.md#tasks-procs.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

__all__ = [
    "STOP_WAIT_S",
    "Guard",
    "ProcessId",
    "current_guard",
    "die_with",
    "die_with_parent",
    "open_guard",
    "reclaim_leftovers",
    "spawn",
    "spawn_options",
    "stop_process",
]

_PR_SET_PDEATHSIG = 1
STOP_WAIT_S = 10.0

# The watchdog: reads "+ PID START" / "- PID" lines; at end of input (tcobench is gone) ends what is still guarded.
_WATCHDOG = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
guarded = {}
for line in sys.stdin:
    parts = line.split()
    if len(parts) == 3 and parts[0] == "+":
        guarded[int(parts[1])] = parts[2]
    elif len(parts) == 2 and parts[0] == "-":
        guarded.pop(int(parts[1]), None)
def same(pid, start):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19] == start
    except (OSError, IndexError):
        return False
for sig in (signal.SIGTERM, signal.SIGKILL):
    live = [pid for pid, start in guarded.items() if same(pid, start)]
    for pid in live:
        try:
            os.killpg(pid, sig) if os.getpgid(pid) == pid else os.kill(pid, sig)
        except OSError:
            pass
    deadline = time.monotonic() + 5
    while live and time.monotonic() < deadline:
        time.sleep(0.05)
        live = [pid for pid in live if same(pid, guarded[pid])]
"""


@dataclass(frozen=True)
class ProcessId:
    """A process as it can be proven again later: pid, start time (clock ticks after boot), command line."""

    pid: int
    start: int
    cmdline: tuple[str, ...]

    @classmethod
    def of(cls, pid: int, settle_s: float = 0.0) -> ProcessId | None:
        """The process with this pid now, or None if there is none (or it is a zombie).

        ``settle_s``: for a process just started, wait up to this long for its command line. Popen returns once
        exec has closed the child's close-on-exec pipe, a moment before the kernel sets up the new command line:
        read in between, /proc/PID/cmdline is empty (seen in CI under load)."""
        deadline = time.monotonic() + settle_s
        while True:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                return None
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] == "Z":
                return None
            if raw or time.monotonic() >= deadline:
                return cls(pid, int(fields[19]), tuple(x.decode("utf-8", "replace") for x in raw.split(b"\0") if x))
            time.sleep(0.002)

    def alive(self) -> bool:
        """True only when the same process (pid, start time and command line) is still running."""
        return ProcessId.of(self.pid) == self

    @property
    def digest(self) -> str:
        """SHA-256 of the command line (arguments NUL-separated): proves the process again, reveals nothing."""
        return _digest(self.cmdline)

    def record(self) -> dict[str, Any]:
        """What a pid file keeps of this process: pid, start time, the command line's hash."""
        return {"pid": self.pid, "start": self.start, "cmd_sha256": self.digest}

    def describe(self) -> str:
        return f"{Path(self.cmdline[0]).name if self.cmdline else '?'} (pid {self.pid})"


def _digest(cmdline: Sequence[str]) -> str:
    return hashlib.sha256("\0".join(cmdline).encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class _Recorded:
    """A process as a pid file recorded it (pid, start time, command-line hash)."""

    pid: int
    start: int
    cmd_sha256: str

    @classmethod
    def of(cls, record: dict[str, Any]) -> _Recorded:
        digest = record.get("cmd_sha256")
        if digest is None:  # a pid file of tcobench < 0.3 kept the command line itself
            digest = _digest(tuple(record["cmdline"]))
        return cls(int(record["pid"]), int(record["start"]), str(digest))

    def live(self) -> ProcessId | None:
        """The running process, when it is the one recorded (same pid, start time and command-line hash)."""
        now = ProcessId.of(self.pid)
        return now if now is not None and now.start == self.start and now.digest == self.cmd_sha256 else None


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def _libc_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()  # looked up before any fork: the child only calls it


def die_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A ``preexec_fn`` making the child receive ``sig`` when this process dies (Linux), or None elsewhere."""
    if _PRCTL is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        die_with(parent, sig)

    return preexec


def die_with(parent: int, sig: int = signal.SIGKILL) -> None:
    """In a running child of ``parent``: receive ``sig`` when it dies (Linux; nothing elsewhere); exit at once if
    it already has (it died before the death signal was armed)."""
    if _PRCTL is None:
        return
    _PRCTL(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def spawn_options() -> dict[str, Any]:
    """Popen options for a child that must die with tcobench: own session; death signal from the main thread."""
    options: dict[str, Any] = {"start_new_session": True}
    preexec = die_with_parent() if threading.current_thread() is threading.main_thread() else None
    if preexec is not None:
        options["preexec_fn"] = preexec
    return options


def spawn(
    cmd: Sequence[str], what: str, stdout: IO[bytes] | int | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start ``cmd`` so that it dies with tcobench (see module doc) and guard it; stdin is /dev/null; ``env``
    replaces the environment when given."""
    proc = subprocess.Popen(
        list(cmd),
        stdout=stdout,
        stderr=subprocess.STDOUT if stdout is not None else None,
        stdin=subprocess.DEVNULL,
        env=env,
        **spawn_options(),
    )
    guard = current_guard()
    if guard is not None:
        guard.add(what, proc.pid)
    return proc


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)  # the child leads its own group: whatever it started goes too
        else:
            os.kill(pid, sig)


def stop_process(proc: subprocess.Popen[bytes], timeout_s: float = STOP_WAIT_S) -> None:
    """SIGTERM to the child's process group, SIGKILL after ``timeout_s``; never raises for one that is gone."""
    if proc.poll() is None:
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait(timeout=timeout_s)
    guard = current_guard()
    if guard is not None:
        guard.remove(proc.pid)


def _end(process: ProcessId, timeout_s: float) -> bool:
    """End a proven process (its group when it leads one): SIGTERM, then SIGKILL; True when it is gone."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not process.alive():
            return True
        _signal_group(process.pid, sig)
        deadline = time.monotonic() + timeout_s
        while process.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
    return not process.alive()


def _pid_files(state_dir: Path) -> list[Path]:
    folder = state_dir / "procs"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _forget(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def reclaim_leftovers(state_dir: Path, timeout_s: float = 5.0) -> list[str]:
    """End what crashed tcobench processes left behind (proven by pid file, start time and command line).

    A pid file is skipped while its owner runs; one of another boot, or unreadable, is removed (nothing in it can
    be proven any more). Returns a description of each process ended.
    """
    boot, reclaimed = _boot_id(), []
    for path in _pid_files(state_dir):
        try:
            record = json.loads(path.read_text("utf-8"))
            owner = _Recorded.of(record["owner"])
            children = [(str(c["what"]), _Recorded.of(c)) for c in record["children"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            _forget(path)
            continue
        if record.get("boot_id") == boot and owner.live() is not None:
            continue  # a live tcobench: its children are its own business
        for what, recorded in children if record.get("boot_id") == boot else []:
            child = recorded.live()
            if child is not None and _end(child, timeout_s):
                reclaimed.append(f"{what} {child.describe()} of tcobench pid {owner.pid}")
        _forget(path)
    return reclaimed


def _private_folder(folder: Path) -> None:
    """``folder`` (and missing parents) made, mode 0700: only its owner may list or read what is in it."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.stat().st_mode & 0o077:
        folder.chmod(0o700)


class Guard:
    """This tcobench's pid file and watchdog: the processes it must not leave behind."""

    def __init__(self, state_dir: Path) -> None:
        me = ProcessId.of(os.getpid())
        self.enabled = me is not None  # False where there is no /proc: children still get their own session
        self.owner = me or ProcessId(os.getpid(), 0, ())
        self.path = state_dir / "procs" / f"{_boot_id()[:8]}-{self.owner.pid}-{self.owner.start}.json"
        self.warning: str | None = None
        self._children: dict[int, tuple[str, ProcessId]] = {}
        self._borrowed: set[int] = set()  # guarded, but stopped by whoever started them (Prefect's server)
        self._lock = threading.Lock()
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._pipe: IO[bytes] | None = None

    def start_watchdog(self) -> None:
        if not self.enabled:
            return
        read_end, write_end = os.pipe()  # not inheritable (PEP 446): only we hold the write end
        try:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WATCHDOG], stdin=read_end, start_new_session=True, close_fds=True
            )
        finally:
            os.close(read_end)
        self._pipe = os.fdopen(write_end, "wb", buffering=0)

    def _tell(self, line: str) -> None:
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                self._pipe.write(line.encode() + b"\n")

    def _save(self) -> None:
        if not self.enabled or self.warning is not None:
            return
        record = {
            "boot_id": _boot_id(),
            "owner": self.owner.record(),
            "children": [{"what": what, **proc.record()} for what, proc in self._children.values()],
        }
        tmp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex}.tmp")
        try:
            _private_folder(self.path.parent)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(record))
            tmp.replace(self.path)
        except OSError as exc:  # the watchdog and the death signal still work; only a later reclaim cannot
            _forget(tmp)
            self.warning = (
                f"cannot keep a pid file in {self.path.parent} ({exc.strerror or exc}): should this run "
                "crash with its watchdog, a later run cannot reclaim what it started; set TCOBENCH_STATE_DIR"
            )

    def add(self, what: str, pid: int, borrowed: bool = False) -> None:
        """Guard a running process (pid file and watchdog); a ``borrowed`` one is left running by ``close``."""
        proc = ProcessId.of(pid, settle_s=2.0)  # usually just started (see ProcessId.of)
        if proc is None:
            return
        with self._lock:
            self._children[pid] = (what, proc)
            if borrowed:
                self._borrowed.add(pid)
            self._save()
            self._tell(f"+ {pid} {proc.start}")

    def remove(self, pid: int) -> None:
        """Stop guarding a process that was stopped the ordinary way."""
        with self._lock:
            if self._children.pop(pid, None) is not None:
                self._save()
                self._tell(f"- {pid}")

    def close(self) -> None:
        """End what is still guarded (borrowed processes aside), remove the pid file, let the watchdog go."""
        if self in _CURRENT:
            _CURRENT.remove(self)
        for pid, (_, proc) in list(self._children.items()):
            if pid not in self._borrowed:
                _end(proc, 5.0)
            self._tell(f"- {pid}")  # the watchdog ends at the pipe's end whatever it still guards
        self._children.clear()
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                self._pipe.close()
            self._pipe = None
        if self._watchdog is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._watchdog.wait(timeout=10)
            self._watchdog = None


_CURRENT: list[Guard] = []


def current_guard() -> Guard | None:
    return _CURRENT[-1] if _CURRENT else None


def open_guard(state_dir: Path) -> tuple[Guard, list[str]]:
    """Reclaim leftovers of crashed runs, then guard this process's children; (the guard, what was reclaimed).

    Close it when the command ends; it closes itself at the latest when the process exits normally (atexit).
    """
    import atexit

    reclaimed = reclaim_leftovers(state_dir)
    guard = Guard(state_dir)
    guard._save()
    guard.start_watchdog()
    _CURRENT.append(guard)
    atexit.register(guard.close)
    return guard, reclaimed
