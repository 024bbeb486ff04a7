"""Helpers shared by the bench scripts: the zero-cost endpoint as a pinned subprocess, load, machine facts.

Percentiles: tcobench.tasks.analysis.quantile (the rule of the SQL views)."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BENCH", "ROOT", "Endpoint", "cpu_seconds", "endpoint", "load_average", "machine", "wait_quiet"]

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


@dataclass(frozen=True)
class Endpoint:
    url: str
    pid: int


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def wait_quiet(limit: float = 1.0, max_wait_s: float = 120.0) -> str:
    """Wait (up to max_wait_s) until the 1-minute load average is under ``limit``; return the load seen."""
    deadline = time.monotonic() + max_wait_s
    while time.monotonic() < deadline and float(load_average().split()[0]) > limit:
        time.sleep(5)
    return load_average()


def machine() -> str:
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        ),
        platform.processor(),
    )
    mem = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1)) // 2**20  # type: ignore[union-attr]
    return f"{os.cpu_count()} cores ({cpu}), {mem} GiB, Python {platform.python_version()}"


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def endpoint(ttft_ms: float, itl_ms: float, tokens: int, cpu: int | None = 1, *extra: str) -> Iterator[Endpoint]:
    """Run bench/zero_endpoint.py as a subprocess (pinned to ``cpu`` with taskset); yield its URL."""
    cmd = [
        sys.executable,
        str(BENCH / "zero_endpoint.py"),
        "--ttft-ms",
        str(ttft_ms),
        "--itl-ms",
        str(itl_ms),
        "--tokens",
        str(tokens),
        *extra,
    ]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu), *cmd]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"(http://\S+) pid (\d+)", line)
        if match is None:
            raise RuntimeError(f"zero endpoint did not start: {line!r}")
        yield Endpoint(match.group(1), int(match.group(2)))
    finally:
        proc.terminate()
        proc.wait(10)
