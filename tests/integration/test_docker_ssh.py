"""``ssh://`` Docker hosts through the system ``ssh``: a real sshd (tests/integration/sshd.py) in front of the
tests' Docker daemon, reached by tcobench's own client code (the function the nightly and `run --image` use, and
`tcobench doctor`), with no paramiko installed. Unreachable hosts are reported with ssh's own reason, at once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import tcobench
from sshd import SshServer, ssh_server

from tcobench.errors import EngineError, ImageError
from tcobench.tasks.host.docker_client import docker_client, run_to_completion

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def sshd(docker_host: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    with ssh_server(tmp_path_factory.mktemp("sshd"), docker_host) as server:
        yield server


def _ssh_children() -> list[str]:
    """ssh processes that are children of this test process (a connection left open would be one)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            comm = stat.read_text().split("(", 1)[1].rsplit(")", 1)[0]
        except (OSError, IndexError):
            continue
        if comm == "ssh" and int(fields[1]) == os.getpid():
            found.append(stat.parent.name)
    return found


def test_a_container_runs_on_an_ssh_docker_host(
    sshd: SshServer, docker_api: Any, base_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TCOBENCH_SSH_COMMAND", sshd.ssh_command)
    client = docker_client(sshd.url, EngineError, timeout_s=30)
    try:
        assert client.version()["ApiVersion"] == docker_api.version()["ApiVersion"]
        code, output = run_to_completion(client, base_image, ["echo", "over ssh"], network_mode="none")
        assert (code, output.strip()) == (0, "over ssh"), sshd.log()
        local = sorted(c.id for c in docker_api.containers.list(all=True))
        assert sorted(c.id for c in client.containers.list(all=True)) == local
    finally:
        client.close()
    assert _ssh_children() == [], "an ssh connection outlived the client"


def test_doctor_reaches_an_ssh_docker_host(sshd: SshServer) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(COLUMNS="200", TCOBENCH_SSH_COMMAND=sshd.ssh_command)
    done = tcobench("doctor", "--docker-host", sshd.url, "--min-free-gb", "1", env=env)
    assert done.returncode == 0, done.stdout + done.stderr + sshd.log()
    assert "Docker daemon" in done.stdout and "paramiko" not in done.stdout + done.stderr


def test_an_unknown_host_key_fails_at_once_with_ssh_reason(
    sshd: SshServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty_known_hosts").write_text("")
    stranger = f"{sshd.ssh_command} -o UserKnownHostsFile={tmp_path / 'empty_known_hosts'}"
    monkeypatch.setenv("TCOBENCH_SSH_COMMAND", stranger)
    with pytest.raises(ImageError) as info:
        docker_client(sshd.url, ImageError, timeout_s=30)
    message = str(info.value)
    assert sshd.url in message and "Host key verification failed" in message and "\n" not in message


def test_a_closed_port_is_reported_with_ssh_reason(sshd: SshServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.services import free_ports

    monkeypatch.setenv("TCOBENCH_SSH_COMMAND", sshd.ssh_command)
    (port,) = free_ports(1)
    url = f"ssh://nobody@127.0.0.1:{port}"
    with pytest.raises(EngineError) as info:
        docker_client(url, EngineError, timeout_s=30)
    message = str(info.value)
    assert url in message and "Connection refused" in message and "\n" not in message
