"""A served shape beyond the shape tolerance is a partial result (issue 41, item 5): `tcobench run` stores the run,
prints its MISMATCH, then exits 4 with one RunError line naming the `--shape-tolerance` that accepts it; with that
tolerance it exits 0. The server is the zero-cost endpoint (bench/zero_endpoint.py, its own process) serving 8
tokens whatever was asked (--fixed-tokens)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.harness import error_lines, fault_env, tcobench
from tests.services import free_ports
from tests.store_helpers import store_rows

ROOT = Path(__file__).resolve().parents[2]
RUN = ("--model", "zero", "--output-tokens", "32", "--requests", "3", "--warmup", "0", "--concurrency", "1")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    (port,) = free_ports(1)
    zero = [sys.executable, str(ROOT / "bench" / "zero_endpoint.py"), "--port", str(port), "--tokens", "8"]
    proc = subprocess.Popen([*zero, "--fixed-tokens"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and "http://" in proc.stdout.readline()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_shape_beyond_the_tolerance_exits_4_unless_the_tolerance_allows_it(tmp_path: Path, endpoint: str) -> None:
    env = fault_env(tmp_path)
    done = tcobench("run", "--endpoint", endpoint, *RUN, "--no-prefect", env=env)
    assert done.returncode == 4, done.stderr[-3000:]
    assert "MISMATCH: output tokens asked 32, served 8 (-75%)" in done.stdout
    (line,) = error_lines(done.stderr)
    assert line.startswith("RunError: run ") and "served another shape than asked: output tokens asked 32" in line
    assert line.endswith("over the shape tolerance 0.10 (--shape-tolerance 0.75 accepts it)"), line
    assert [r["status"] for r in store_rows(tmp_path / "store", "SELECT status FROM runs")] == ["ok"]  # stored
    allowed = tcobench("run", "--endpoint", endpoint, *RUN, "--no-prefect", "--shape-tolerance", "0.75", env=env)
    assert allowed.returncode == 0, allowed.stderr[-3000:]
    assert "MISMATCH" not in allowed.stdout and not error_lines(allowed.stderr)
