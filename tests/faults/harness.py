"""Running `tcobench` as a user does, for the fault tests: a real subprocess, its processes watched by pid, and
what it left in the store, the state folder and its output.

Process checks never go by name: ``descendants`` walks /proc's parent links down from the `tcobench` pid while
it runs, and ``still_running`` checks those pids (with their start times) afterwards.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tcobench.tasks.host.procs import ProcessId

__all__ = [
    "SIGNAL_EXIT",
    "Hog",
    "Run",
    "cpu_hog",
    "descendants",
    "error_lines",
    "fault_env",
    "model_cache",
    "one_error_line",
    "files_with",
    "start",
    "still_running",
    "tcobench",
    "wait_for",
]

_ERROR_LINE = re.compile(r"^(?:[A-Z]\w*Error|Interrupted): ")


def _exe() -> str:
    exe = Path(sys.executable).parent / "tcobench"  # the console script of the venv running the tests
    return str(exe if exe.exists() else shutil.which("tcobench") or "tcobench")


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the bundled model is assembled (TCOBENCH_MODEL_CACHE when set, shared by the session)."""
    return Path(os.environ.get("TCOBENCH_MODEL_CACHE") or tmp_path_factory.mktemp("models"))


def fault_env(tmp_path: Path, model_cache: Path | None = None, **extra: str) -> dict[str, str]:
    """A fresh store, state folder and Prefect home per test; nothing of the user's TCOBENCH_/PREFECT_ settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(
        TCOBENCH_STORE=str(tmp_path / "store"),
        TCOBENCH_STATE_DIR=str(tmp_path / "state"),
        PREFECT_HOME=str(tmp_path / "prefect"),
        COLUMNS="200",
        **({"TCOBENCH_MODEL_CACHE": str(model_cache)} if model_cache else {}),
        **extra,
    )
    return env


def tcobench(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run `tcobench ARGS` to its end; output captured as text."""
    return subprocess.run([_exe(), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


@dataclass
class Run:
    """A `tcobench` started in the background, its output going to files."""

    proc: subprocess.Popen[bytes]
    out: Path
    err: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def signal(self, signum: int) -> None:
        os.kill(self.proc.pid, signum)

    def signal_group(self, signum: int) -> None:
        """Signal its whole process group, as a terminal's Ctrl-C does (started with ``own_group``)."""
        os.killpg(self.proc.pid, signum)

    def finish(self, timeout: float = 300) -> tuple[int, str, str]:
        """(exit status, stdout, stderr) once it ends; killed if it does not within ``timeout``."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        return code, self.out.read_text("utf-8", "replace"), self.err.read_text("utf-8", "replace")


@contextmanager
def start(tmp_path: Path, *args: str, env: dict[str, str], own_group: bool = False) -> Iterator[Run]:
    """`tcobench ARGS` in the background for the ``with`` block; killed at its end if still running.

    ``own_group``: in a process group of its own, like a shell's foreground job, for ``Run.signal_group``."""
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen(
            [_exe(), *args],
            env=env,
            stdout=o,
            stderr=e,
            stdin=subprocess.DEVNULL,
            process_group=0 if own_group else None,
        )
    try:
        yield Run(proc, out, err)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@dataclass
class Hog:
    """Spinning Python processes (``cpu_hog``), at the default priority, each in a session of its own (a signal to a
    test's process group misses them)."""

    processes: list[subprocess.Popen[bytes]]

    def add(self, count: int) -> None:
        for _ in range(count):
            self.processes.append(
                subprocess.Popen(
                    [sys.executable, "-c", "while True: pass"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )

    def remove(self, count: int) -> None:
        """Stop the last ``count`` processes."""
        for _ in range(min(count, len(self.processes))):
            process = self.processes.pop()
            process.kill()
            process.wait()


@contextmanager
def cpu_hog(count: int) -> Iterator[Hog]:
    """``count`` spinning processes for the ``with`` block (``Hog.add`` starts more); all killed at its end, whatever
    happens."""
    hog = Hog([])
    try:
        hog.add(count)
        yield hog
    finally:
        for process in hog.processes:
            process.kill()
        for process in hog.processes:
            process.wait()


def descendants(pid: int) -> list[ProcessId]:
    """Every process below ``pid`` now (children, their children...), as provable identities."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        identity = ProcessId.of(child)
        if identity is not None:
            found.append(identity)
        todo.extend(children.get(child, []))
    return found


def still_running(processes: list[ProcessId], timeout_s: float = 30.0) -> list[ProcessId]:
    """Those of ``processes`` (same pid, start time and command line) still running after up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    alive = [p for p in processes if p.alive()]
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if p.alive()]
    return alive


def wait_for(condition: Callable[[], Any], timeout_s: float, what: str, interval_s: float = 0.2) -> Any:
    """Poll until ``condition()`` is truthy and return it; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval_s)
    pytest.fail(f"timed out after {timeout_s:g} s waiting for {what}")


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if _ERROR_LINE.match(line)]


def one_error_line(stderr: str) -> str:
    """The single `Kind: message` line of a failed command (progress bars and start-up notes aside)."""
    lines = error_lines(stderr)
    assert len(lines) == 1, stderr[-4000:]
    return lines[0]


def files_with(roots: list[Path], needle: str) -> list[Path]:
    """Every file under ``roots`` whose bytes contain ``needle`` (binary files too: Parquet, SQLite)."""
    data = needle.encode()
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file() and data in p.read_bytes()]


SIGNAL_EXIT: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
