"""Fixtures of the tasks unit tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ZERO_ENDPOINT = Path(__file__).resolve().parents[3] / "bench" / "zero_endpoint.py"


@pytest.fixture
def zero_endpoint() -> Iterator[Callable[..., str]]:
    """Start bench/zero_endpoint.py in its own process (no lock shared with the client) with the given options;
    returns its base URL. Every one started is stopped."""
    procs: list[subprocess.Popen[str]] = []

    def start(*options: str) -> str:
        proc = subprocess.Popen([sys.executable, str(ZERO_ENDPOINT), *options], stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout is not None
        return proc.stdout.readline().split()[2]

    yield start
    for proc in procs:
        proc.kill()
        proc.wait(10)
