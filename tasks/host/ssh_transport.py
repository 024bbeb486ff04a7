"""ssh_transport: the Docker API of an ``ssh://[user@]host[:port]`` Docker host, through the system ``ssh`` client.

Each HTTP connection is one ``ssh -T -o BatchMode=yes ... -- HOST docker system dial-stdio`` process (what the docker
CLI runs for ssh:// hosts) holding one end of a socket pair; the HTTP client holds the other, an ordinary socket.
No paramiko. Keys, known hosts and jump hosts come from the user's ssh configuration or ``TCOBENCH_SSH_COMMAND``;
the remote account needs the ``docker`` CLI and the docker group. ssh's stderr becomes the error's reason.

Design notes (and why not the docker SDK's ``use_ssh_client``):
docs/dev/architecture/hosts-and-engines.md#tasks-ssh-transport.
"""

from __future__ import annotations

import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from typing import IO, Any
from urllib.parse import urlsplit

import docker
import requests
from docker.errors import DockerException
from docker.transport.basehttpadapter import BaseHTTPAdapter
from urllib3.connection import HTTPConnection
from urllib3.connectionpool import HTTPConnectionPool

from tcobench.schemas.base import redact_url

__all__ = ["SshAdapter", "ssh_argv", "ssh_docker_client", "ssh_target"]

_REMOTE = "docker system dial-stdio"
_BASE_URL = "http+docker://localhost"  # the docker SDK's form for a socket-like transport: the host part is unused


def ssh_target(url: str) -> tuple[str | None, str, int | None]:
    """(user, host, port) of ``ssh://[user@]host[:port]``; ValueError naming the URL when it is not one."""
    shape = f"Docker host {url} is not of the form ssh://[user@]host[:port]"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValueError(f"{shape} (its port is not a number from 0 to 65535)") from None
    if parts.password:
        raise ValueError(f"Docker host {redact_url(url)} holds a password; ssh:// hosts log in with a key")
    if parts.scheme != "ssh" or not parts.hostname or parts.path not in ("", "/") or parts.query:
        raise ValueError(shape)
    return parts.username or None, parts.hostname, port


def ssh_argv(url: str, ssh_command: str = "ssh", connect_timeout_s: int = 30) -> list[str]:
    """The command line of one connection to the Docker daemon of ``url`` (ValueError for a bad URL or command)."""
    user, host, port = ssh_target(url)
    try:
        command = shlex.split(ssh_command)
    except ValueError as exc:
        raise ValueError(f"TCOBENCH_SSH_COMMAND {ssh_command} is not a command line ({exc})") from None
    if not command:
        raise ValueError("TCOBENCH_SSH_COMMAND is empty; give the ssh client to run, e.g. ssh")
    argv = [*command, "-T", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={max(1, connect_timeout_s)}"]
    if user:
        argv += ["-l", user]
    if port:
        argv += ["-p", str(port)]
    return [*argv, "--", host, _REMOTE]


class _Processes:
    """The ssh processes of one adapter: reaped as they end, the stderr of those that failed kept for messages."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []
        self._failure = ""

    def add(self, proc: subprocess.Popen[bytes], stderr: IO[bytes]) -> None:
        with self._lock:
            self._reap()
            self._live.append((proc, stderr))

    def _reap(self) -> None:
        still = []
        for proc, stderr in self._live:
            if proc.poll() is None:
                still.append((proc, stderr))
            else:
                self._finish(proc, stderr)
        self._live = still

    def _finish(self, proc: subprocess.Popen[bytes], stderr: IO[bytes]) -> None:
        stderr.seek(0)
        text = " ".join(stderr.read().decode("utf-8", "replace").split())
        stderr.close()
        if proc.returncode not in (0, None) and text:
            self._failure = text

    def stop(self, wait_s: float) -> None:
        """Wait up to ``wait_s`` for each process to end by itself (its socket is closed), then end it."""
        with self._lock:
            live, self._live = self._live, []
        for proc, stderr in live:
            try:
                proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self._finish(proc, stderr)

    def failure(self) -> str:
        """What the last failed ssh said on stderr ('' when none failed)."""
        with self._lock:
            self._reap()
            return self._failure


class _SshConnection(HTTPConnection):
    """An HTTP connection whose socket is one end of a socket pair; an ssh process holds the other end."""

    def __init__(self, *args: Any, argv: Sequence[str], processes: _Processes, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._argv = list(argv)
        self._processes = processes

    def connect(self) -> None:
        ours, theirs = socket.socketpair()
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - kept until the process ends (_Processes closes it)
        try:
            proc = subprocess.Popen(
                self._argv,
                stdin=theirs.fileno(),
                stdout=theirs.fileno(),
                stderr=stderr,
                start_new_session=True,
                close_fds=True,
            )
        except OSError:
            ours.close()
            stderr.close()
            raise
        finally:
            theirs.close()
        self._processes.add(proc, stderr)
        ours.settimeout(self.timeout if isinstance(self.timeout, int | float) else None)
        self.sock = ours


class _SshPool(HTTPConnectionPool):
    ConnectionCls = _SshConnection


class SshAdapter(BaseHTTPAdapter):  # type: ignore[misc]
    """A requests adapter whose connections are ssh processes running ``docker system dial-stdio``."""

    def __init__(self, argv: Sequence[str], timeout_s: float, max_pool_size: int = 10) -> None:
        super().__init__()
        self.processes = _Processes()
        self._pool = _SshPool(
            "localhost", timeout=timeout_s, maxsize=max_pool_size, argv=list(argv), processes=self.processes
        )

    def get_connection(self, url: str, proxies: object = None) -> _SshPool:
        return self._pool

    def close(self) -> None:
        super().close()
        self._pool.close()
        self.processes.stop(wait_s=2.0)


def _api_version(adapter: SshAdapter, timeout_s: float) -> str:
    """The daemon's API version (what the SDK's version="auto" asks), over ``adapter``."""
    session = requests.Session()
    session.trust_env = False
    session.mount("http+docker://", adapter)
    answer = session.get(f"{_BASE_URL}/version", timeout=timeout_s)
    answer.raise_for_status()
    return str(answer.json()["ApiVersion"])


def _reason(exc: BaseException, adapter: SshAdapter, timeout_s: float) -> str:
    """Why the daemon did not answer, in words: ssh's own stderr when it said something."""
    said = adapter.processes.failure()
    if said:
        return said
    if isinstance(exc, requests.Timeout):
        return f"no answer within {timeout_s:g} s"
    if isinstance(exc, requests.ConnectionError):
        return "ssh closed the connection without an answer"
    return " ".join(str(exc).split()) or type(exc).__name__


def ssh_docker_client(url: str, timeout_s: int, ssh_command: str = "ssh") -> docker.DockerClient:
    """A docker SDK client of ``url`` over the system ssh whose daemon answered. ValueError for a bad URL or ssh
    command; ConnectionError (ssh's own reason, one line) when the daemon cannot be reached."""
    argv = ssh_argv(url, ssh_command, connect_timeout_s=timeout_s)
    if shutil.which(argv[0]) is None:
        raise ConnectionError(f"no ssh client {argv[0]} on PATH: install openssh-client or set TCOBENCH_SSH_COMMAND")
    adapter = SshAdapter(argv, timeout_s)
    try:
        version = _api_version(adapter, timeout_s)
        # The SDK takes no adapter of ours: it is built for a local socket (version given, so nothing is contacted),
        # then that socket's adapter is replaced by ours under the same prefix and base URL.
        client = docker.DockerClient(base_url="unix:///var/run/docker.sock", version=version, timeout=timeout_s)
        client.api.adapters["http+docker://"].close()
        client.api.mount("http+docker://", adapter)
        client.api.base_url = _BASE_URL
        client.ping()
    except (requests.RequestException, DockerException, KeyError, ValueError) as exc:
        adapter.close()
        raise ConnectionError(_reason(exc, adapter, timeout_s)) from exc
    return client
