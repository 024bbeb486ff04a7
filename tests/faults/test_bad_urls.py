"""Bad URLs are configuration errors (issue 33, item 7): a port outside 1-65535, a port that is not a number or an
unknown scheme is one line naming the value, exit 1, before anything starts; and a command that fails before
measuring leaves no store behind (the store is created by its first commit, tasks/store/store.check_store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.harness import error_lines, fault_env, tcobench
from tests.services import free_ports

CASES = [
    (
        ("run", "--endpoint", "http://127.0.0.1:70000", "--model", "m"),
        "ConfigError: command line: engine.url: 'http://127.0.0.1:70000': port 70000 is outside 1-65535",
    ),
    (
        ("run", "--endpoint", "http://127.0.0.1:abc", "--model", "m"),
        "ConfigError: command line: engine.url: 'http://127.0.0.1:abc': port 'abc' is not a number (1-65535)",
    ),
    (
        ("run", "--endpoint", "gopher://127.0.0.1:8080", "--model", "m"),
        "ConfigError: command line: engine.url: must start with http://, https://, got 'gopher://127.0.0.1:8080'",
    ),
    (
        ("run", "--image", "llama-cpp-cpu", "--docker-host", "tcp://127.0.0.1:99999"),
        "ConfigError: command line: engine.container.docker_host: 'tcp://127.0.0.1:99999': port 99999 is outside "
        "1-65535",
    ),
    (
        ("query", "select 1", "--store", "postgresql://127.0.0.1:70000/db?data=s3://b/p"),
        "StoreError: store 'postgresql://127.0.0.1:70000/db': port 70000 is outside 1-65535",
    ),
]


@pytest.mark.parametrize(("args", "line"), CASES, ids=["port-70000", "port-abc", "scheme", "docker-host", "store"])
def test_a_bad_url_is_one_line_and_creates_nothing(tmp_path: Path, args: tuple[str, ...], line: str) -> None:
    done = tcobench(*args, "--no-prefect" if args[0] == "run" else "--format=csv", env=fault_env(tmp_path))
    assert done.returncode == 1, done.stderr[-3000:]
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and error_lines(done.stderr) == lines, done.stderr
    assert lines[0] == line
    assert not (tmp_path / "store").exists() and not (tmp_path / "state").exists()


def test_a_run_that_fails_before_measuring_creates_no_store(tmp_path: Path) -> None:
    (port,) = free_ports(1)  # nothing listens there
    done = tcobench(
        "run", "--endpoint", f"http://127.0.0.1:{port}", "--model", "m", "--no-prefect", env=fault_env(tmp_path)
    )
    assert done.returncode == 1, done.stderr[-3000:]
    assert error_lines(done.stderr)[0].startswith("EngineError: "), done.stderr
    assert not (tmp_path / "store").exists()
