"""Docker host addressing, the one-line unreachable error, and who owns a leftover container."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from tcobench.errors import EngineError, ImageError
from tcobench.tasks.host import docker_client as dc


@pytest.mark.parametrize(
    ("host", "local", "address"),
    [
        ("unix:///var/run/docker.sock", True, ("127.0.0.1", "127.0.0.1")),
        ("tcp://127.0.0.1:2375", True, ("127.0.0.1", "127.0.0.1")),
        ("tcp://gpu-box.example:2376", False, ("0.0.0.0", "gpu-box.example")),
        ("ssh://bench@gpu-box.example", False, ("0.0.0.0", "gpu-box.example")),
    ],
)
def test_local_or_remote(host: str, local: bool, address: tuple[str, str]) -> None:
    assert dc.is_local(host) is local
    assert dc.engine_address(host) == address


def test_default_host_follows_docker_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    assert dc.is_local(None) and dc.describe_host(None) == "the local Docker socket"
    monkeypatch.setenv("DOCKER_HOST", "tcp://far.example:2376")
    assert not dc.is_local(None) and dc.describe_host(None) == "tcp://far.example:2376"


def test_unreachable_daemon_is_one_line_naming_the_host(tmp_path: object) -> None:
    host = "unix:///nonexistent/tcobench-test.sock"
    with pytest.raises(ImageError) as info:
        dc.docker_client(host, ImageError, timeout_s=2)
    message = str(info.value)
    assert host in message and "not reachable" in message and "\n" not in message
    with pytest.raises(EngineError):
        dc.docker_client(host, timeout_s=2)


def test_labels_carry_owner_and_batch() -> None:
    labels = dc.tcobench_labels("engine", "batch123", {"x": "y"})
    assert labels[dc.LABEL_MANAGED] == "true" and labels[dc.LABEL_BATCH] == "batch123" and labels["x"] == "y"
    assert labels[dc.LABEL_OWNER] == f"{socket.gethostname()}:{os.getpid()}"


def test_owner_gone_only_for_dead_processes_of_this_machine() -> None:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(done.stdout)
    here = socket.gethostname()
    assert dc._owner_gone(f"{here}:{dead_pid}")
    assert not dc._owner_gone(f"{here}:{os.getpid()}")  # this very process
    assert not dc._owner_gone(f"other-machine:{dead_pid}")  # another machine's run: not ours to judge
    assert not dc._owner_gone("")
