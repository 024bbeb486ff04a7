"""The ssh command line of an ssh:// Docker host, and the refusal of what is not one (the real sshd path:
tests/integration/test_docker_ssh.py)."""

from __future__ import annotations

import pytest

from tcobench.errors import ConfigError
from tcobench.settings import Settings
from tcobench.tasks.host import docker_client as dc
from tcobench.tasks.host.ssh_transport import ssh_argv, ssh_target

_OPTIONS = ["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=30"]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ssh://gpu-1", ["ssh", *_OPTIONS, "--", "gpu-1", "docker system dial-stdio"]),
        ("ssh://bench@gpu-1", ["ssh", *_OPTIONS, "-l", "bench", "--", "gpu-1", "docker system dial-stdio"]),
        (
            "ssh://bench@10.1.2.3:2222/",
            ["ssh", *_OPTIONS, "-l", "bench", "-p", "2222", "--", "10.1.2.3", "docker system dial-stdio"],
        ),
        ("ssh://[::1]:22", ["ssh", *_OPTIONS, "-p", "22", "--", "::1", "docker system dial-stdio"]),
    ],
)
def test_ssh_argv(url: str, expected: list[str]) -> None:
    assert ssh_argv(url) == expected


def test_ssh_command_is_split_like_a_shell_line_and_batch_mode_always_added() -> None:
    argv = ssh_argv("ssh://bench@gpu-1", "ssh -F '/etc/tcobench/ssh config'", connect_timeout_s=5)
    assert argv[:3] == ["ssh", "-F", "/etc/tcobench/ssh config"]
    assert "BatchMode=yes" in argv and "ConnectTimeout=5" in argv and argv[-2:] == ["gpu-1", "docker system dial-stdio"]
    with pytest.raises(ValueError, match="TCOBENCH_SSH_COMMAND is empty"):
        ssh_argv("ssh://gpu-1", "  ")
    with pytest.raises(ValueError, match="TCOBENCH_SSH_COMMAND ssh -F 'x is not a command line"):
        ssh_argv("ssh://gpu-1", "ssh -F 'x")


@pytest.mark.parametrize("url", ["ssh://", "ssh://bench@", "ssh://gpu-1/docker", "tcp://x"])
def test_what_is_not_an_ssh_host_is_refused_naming_it(url: str) -> None:
    with pytest.raises(ValueError) as info:
        ssh_target(url)
    assert url in str(info.value) and "ssh://[user@]host[:port]" in str(info.value)


def test_a_password_in_the_url_is_refused_without_showing_it() -> None:
    with pytest.raises(ValueError) as info:
        ssh_target("ssh://bench:hunter2@gpu-1")
    assert "hunter2" not in str(info.value) and "log in with a key" in str(info.value)


def test_a_bad_ssh_host_is_the_callers_one_line_error() -> None:
    with pytest.raises(ConfigError) as info:
        dc.docker_client("ssh://bench@gpu-1:notaport", ConfigError)
    assert "ssh://bench@gpu-1:notaport" in str(info.value) and "\n" not in str(info.value)


def test_docker_host_in_the_environment_takes_the_ssh_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "ssh://bench@gpu-1")
    monkeypatch.setenv("TCOBENCH_SSH_COMMAND", "/nonexistent/ssh")
    with pytest.raises(ConfigError) as info:
        dc.docker_client(None, ConfigError, timeout_s=2)
    message = str(info.value)
    assert "ssh://bench@gpu-1" in message and "no ssh client /nonexistent/ssh" in message
    assert "paramiko" not in message


def test_ssh_command_setting_defaults_to_ssh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TCOBENCH_SSH_COMMAND", raising=False)
    assert Settings().ssh_command == "ssh"
