"""Against the real daemon: leftover containers of a crashed run are removed (and only those), and `doctor`."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import tcobench
from docker.errors import NotFound

from tcobench.tasks.host.docker_client import LABEL_OWNER, remove_leftovers, tcobench_labels

pytestmark = pytest.mark.docker


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_leftovers_of_a_crashed_run_are_removed(docker_api: Any, base_image: str) -> None:
    crashed = tcobench_labels("engine", "crashed-batch", {LABEL_OWNER: f"{socket.gethostname()}:{_dead_pid()}"})
    alive = tcobench_labels("engine", "live-batch")  # owned by this very process
    elsewhere = tcobench_labels("engine", "other-batch", {LABEL_OWNER: "another-machine:1"})
    made = [
        docker_api.containers.create(base_image, ["sleep", "300"], labels=labels, network_mode="none")
        for labels in (crashed, alive, elsewhere)
    ]
    try:
        made[0].start()  # a running leftover is stopped and removed too
        removed = remove_leftovers(docker_api)
        assert removed == [made[0].name]
        remaining = {c.name for c in docker_api.containers.list(all=True)}
        assert made[0].name not in remaining and {made[1].name, made[2].name} <= remaining
    finally:
        for container in made:
            with contextlib.suppress(NotFound):  # the leftover is already gone
                container.remove(force=True)


def test_doctor_against_the_real_daemon(docker_host: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env["COLUMNS"] = "200"
    ok = tcobench("doctor", "--docker-host", docker_host, "--min-free-gb", "1", env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Docker daemon" in ok.stdout and "ok" in ok.stdout and "disk space" in ok.stdout
    short = tcobench("doctor", "--docker-host", docker_host, "--min-free-gb", "100000000", env=env)
    assert short.returncode == 1 and "disk space" in short.stderr
