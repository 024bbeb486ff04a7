"""tcobench worker's rules around Prefect's worker: its command, environment, refusals; a run dies with its worker."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.tasks.fleet import (
    WORKER_HOST_ENV,
    WorkerSpec,
    check_worker_host,
    run_worker,
    worker_command,
    worker_environment,
)


def test_command_serves_one_queue_of_a_process_pool_under_a_known_name() -> None:
    cmd = worker_command(WorkerSpec(queue="gpu-nv-01", pool="fleet", limit=1))
    assert cmd[:5] == [sys.executable, "-m", "prefect", "worker", "start"]
    assert cmd[5:] == [
        "--pool",
        "fleet",
        "--work-queue",
        "gpu-nv-01",
        "--name",
        "tcobench-gpu-nv-01",
        "--type",
        "process",
        "--limit",
        "1",
    ]


def test_environment_names_the_host_and_keeps_what_the_user_set() -> None:
    env = worker_environment(
        WorkerSpec(queue="gpu-nv-01", heartbeat_s=5, poll_s=1.5),
        {"PREFECT_CLIENT_MAX_RETRIES": "3", "AWS_SECRET_ACCESS_KEY": "kept"},
    )
    assert env[WORKER_HOST_ENV] == "gpu-nv-01" and env["TCOBENCH_HOST_NAME"] == "gpu-nv-01"
    assert env["PREFECT_CLIENT_MAX_RETRIES"] == "3"  # the user's setting wins over our default of 8
    assert env["PREFECT_WORKER_HEARTBEAT_SECONDS"] == "5" and env["PREFECT_WORKER_QUERY_SECONDS"] == "1.5"
    assert env["AWS_SECRET_ACCESS_KEY"] == "kept"  # secrets reach the runs through this environment only
    control = worker_environment(WorkerSpec(queue="control"), {})
    assert WORKER_HOST_ENV not in control and control["PREFECT_CLIENT_MAX_RETRIES"] == "8"
    assert control["PREFECT_CLIENT_RETRY_EXTRA_CODES"] == "500"  # the server's answer while its database is away
    assert (
        worker_environment(WorkerSpec(queue="a"), {"PREFECT_CLIENT_RETRY_EXTRA_CODES": ""})[
            "PREFECT_CLIENT_RETRY_EXTRA_CODES"
        ]
        == ""
    )


def test_a_run_refuses_a_host_that_is_not_its_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKER_HOST_ENV, "host-a")
    check_worker_host("host-a")
    with pytest.raises(ConfigError, match="this run is for host 'host-b' but the worker that picked it up serves"):
        check_worker_host("host-b")


def test_worker_refuses_root_and_a_missing_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(ConfigError, match="running as root; run it as an unprivileged user"):
        run_worker(WorkerSpec(queue="host-a"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with pytest.raises(ConfigError, match="needs the fleet's Prefect server: set PREFECT_API_URL"):
        run_worker(WorkerSpec(queue="host-a", allow_root=True))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_run_dies_with_its_worker() -> None:
    """A real kernel check: the grandchild set die_with_parent; SIGKILL its parent and it is gone."""
    grandchild = textwrap.dedent("""
        import time
        from tcobench.tasks.fleet import die_with_parent
        die_with_parent()
        print("armed", flush=True)
        time.sleep(60)
    """)
    parent = textwrap.dedent(f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", {grandchild!r}], stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "armed"
        print(child.pid, flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    pid = int(proc.stdout.readline())
    proc.kill()
    proc.wait(10)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":  # exited, not yet reaped by init
                break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        pytest.fail("the run outlived its worker")
