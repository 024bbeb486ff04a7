"""The nightly flow over two real Docker daemons on this machine (own sockets and data roots) acting as two hosts.

Host B's daemon is stopped while its first cell runs: host B's cells fail, host A's succeed, and both are
visible in SQL. Real Prefect flow, real llama.cpp containers (host networking, 127.0.0.1 only).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import tcobench
from dockerd import extra_daemon, kill_shims

from tcobench.tasks.host.docker_client import docker_client
from tests.services import require

pytestmark = [pytest.mark.docker, pytest.mark.engine, pytest.mark.prefect]


@pytest.fixture
def second_daemon(
    cpu_image: dict[str, str], docker_host: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A second dockerd (own socket, data root, exec root) holding a copy of the CPU engine image."""
    if shutil.which("dockerd") is None or os.geteuid() != 0:
        require("a second Docker daemon needs dockerd and root")
    with extra_daemon(
        Path(tmp_path_factory.mktemp("dockerd-b", numbered=True)), cpu_image["reference"], docker_host
    ) as daemon:
        yield daemon


def _stop_when_running(sock: str, proc: subprocess.Popen[bytes], root: Path, stopped: list[float]) -> None:
    # one API client for the polls (a `docker ps` process each time cost CPU the night's engines wait for)
    client = docker_client(sock, timeout_s=10)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if client.containers.list(filters={"label": "io.tcobench.managed"}, sparse=True):
                time.sleep(2)  # the engine is up and measuring
                os.killpg(proc.pid, signal.SIGKILL)  # the host goes away: its daemon, its engine, everything
                kill_shims(root)
                stopped.append(time.monotonic())
                return
            time.sleep(0.2)
    finally:
        client.close()


def test_nightly_two_hosts_one_daemon_stopped(
    cli_env: dict[str, str],
    cpu_image: dict[str, str],
    docker_host: str,
    second_daemon: tuple[str, subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    sock_b, proc_b = second_daemon
    inventory = tmp_path / "inventory.toml"
    inventory.write_text(
        f'[[hosts]]\nname = "host-a"\ndocker_host = "{docker_host}"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n'
        f'[[hosts]]\nname = "host-b"\ndocker_host = "{sock_b}"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n',
        "utf-8",
    )
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(
        f'[[engines]]\nname = "llama"\nimage = "{cpu_image["reference"]}"\n[[models]]\nname = "gemma-3-270m-q4_k_m"\n'
        '[[workloads]]\nname = "w1"\nrequests = 6\nwarmup_requests = 1\nmax_tokens = 24\nconcurrency = [1]\n'
        '[[workloads]]\nname = "w2"\nrequests = 2\nwarmup_requests = 1\nmax_tokens = 8\nconcurrency = [1]\n',
        "utf-8",
    )
    stopped: list[float] = []
    root_b = Path(sock_b.removeprefix("unix://")).parent
    killer = threading.Thread(target=_stop_when_running, args=(sock_b, proc_b, root_b, stopped), daemon=True)
    killer.start()
    done = tcobench("nightly", "-i", str(inventory), "-m", str(matrix), env=cli_env, timeout=900)
    killer.join(timeout=5)
    assert stopped, "host-b's engine never started, so its daemon was never stopped"
    assert done.returncode == 3, done.stdout + done.stderr
    failed_line = next(x for x in done.stderr.splitlines() if x.startswith("NightlyError:"))
    assert "host-b/llama/gemma-3-270m-q4_k_m/w1" in failed_line and "host-a" not in failed_line
    rows = json.loads(
        tcobench(
            "query",
            "select host, workload, status, error, batch_id from runs order by host, workload",
            "--format",
            "json",
            env=cli_env,
        ).stdout
    )
    hosts = {(r["host"], r["workload"]): r for r in rows}
    assert {r["status"] for k, r in hosts.items() if k[0] == "host-a"} == {"ok"}
    assert {k[1] for k in hosts if k[0] == "host-a"} == {"w1", "w2"}
    b_rows = [r for r in rows if r["host"] == "host-b"]
    assert b_rows and all(r["status"] == "failed" and r["error"] for r in b_rows)
    assert len({r["batch_id"] for r in rows}) == 1 and rows[0]["batch_id"]  # one night, one batch id
