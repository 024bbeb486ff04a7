"""docker_client: connect to a Docker host (local socket, ``tcp://`` with TLS, ``ssh://``), or say why not.

Everything that talks to Docker takes the client as an argument (so tests inject a client of their
own); this module is the one place that creates one. Labels shared by every container tcobench
starts live here too, with the leftover sweep that removes containers of crashed earlier runs.

    unix:///var/run/docker.sock   the local daemon (also the default: DOCKER_HOST or the standard socket)
    tcp://host:2376               TLS with the client certificate in DOCKER_CERT_PATH (ca.pem, cert.pem,
                                  key.pem); DOCKER_TLS_VERIFY=0 turns verification of the daemon off
    ssh://user@host[:port]        the system ``ssh`` client (key login, a known_hosts entry, the docker CLI on the
                                  host: ssh_transport.py), also as DOCKER_HOST
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import docker
from docker.errors import APIError, DockerException, NotFound
from docker.models.containers import Container
from docker.tls import TLSConfig

from tcobench.errors import EngineError, TcobenchError
from tcobench.settings import Settings, docker_host, docker_tls
from tcobench.tasks.host.ssh_transport import ssh_docker_client

__all__ = [
    "LABEL_BATCH",
    "LABEL_MANAGED",
    "LABEL_OWNER",
    "LABEL_PURPOSE",
    "describe_host",
    "docker_client",
    "engine_address",
    "is_local",
    "owner_label",
    "remove_container",
    "remove_leftovers",
    "run_to_completion",
    "tcobench_labels",
]

LABEL_MANAGED = "io.tcobench.managed"  # "true" on every container tcobench starts
LABEL_BATCH = "io.tcobench.batch-id"  # the batch id shared by the runs the container served
LABEL_OWNER = "io.tcobench.owner"  # "<client host>:<pid>" of the tcobench process that started it
LABEL_PURPOSE = "io.tcobench.purpose"  # engine or smoke-test

_DEFAULT_TIMEOUT_S = 60


def describe_host(host: str | None) -> str:
    """The Docker host as users name it in messages."""
    return host or docker_host() or "the local Docker socket"


def is_local(host: str | None) -> bool:
    """True when containers on that host share this machine's files, devices and loopback network."""
    url = host or docker_host() or "unix://"
    if url.startswith(("unix://", "npipe://")):
        return True
    hostname = urlsplit(url).hostname or ""
    return hostname in ("localhost", "127.0.0.1", "::1")


def engine_address(host: str | None) -> tuple[str, str]:
    """(address the engine binds to, address tcobench connects to) for a host-networked container."""
    if is_local(host):
        return "127.0.0.1", "127.0.0.1"
    hostname = urlsplit(host or docker_host() or "").hostname or "127.0.0.1"
    return "0.0.0.0", hostname


def _tls_config() -> TLSConfig | bool:
    cert_path, verify = docker_tls()
    if not cert_path:
        return False
    folder = Path(cert_path)
    return TLSConfig(
        client_cert=(str(folder / "cert.pem"), str(folder / "key.pem")),
        ca_cert=str(folder / "ca.pem") if verify else None,
        verify=verify,
    )


def _ssh_client(url: str, error: type[TcobenchError], timeout_s: int) -> docker.DockerClient:
    """A client of an ssh:// host whose daemon answered; ``error`` with ssh's own reason otherwise."""
    try:
        return ssh_docker_client(url, timeout_s, Settings().ssh_command)
    except ValueError as exc:
        raise error(str(exc)) from exc
    except ConnectionError as exc:
        raise error(
            f"Docker daemon at {url} is not reachable through ssh ({exc}); `ssh {url} docker version` must answer "
            "without a prompt (key login, known_hosts, docker group)"
        ) from exc


def docker_client(
    host: str | None = None,
    error: type[TcobenchError] = EngineError,
    timeout_s: int = _DEFAULT_TIMEOUT_S,
) -> docker.DockerClient:
    """A client whose daemon answered a ping; ``error`` (one line, naming the host) otherwise."""
    where = describe_host(host)
    url = host or docker_host() or ""
    if url.startswith("ssh://"):
        return _ssh_client(url, error, timeout_s)
    try:
        if host is None:
            client = docker.from_env(timeout=timeout_s)
        elif host.startswith("tcp://"):
            client = docker.DockerClient(base_url=host, tls=_tls_config(), timeout=timeout_s)
        else:
            client = docker.DockerClient(base_url=host, timeout=timeout_s)
        client.ping()
    except (DockerException, OSError) as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise error(
            f"Docker daemon at {where} is not reachable ({detail}); is dockerd running and may this user "
            "use its socket (docker group)?"
        ) from exc
    return client


def owner_label() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def tcobench_labels(
    purpose: str, batch_id: str | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Labels of a container tcobench starts: managed, owner, purpose, batch id."""
    labels = {LABEL_MANAGED: "true", LABEL_OWNER: owner_label(), LABEL_PURPOSE: purpose}
    if batch_id:
        labels[LABEL_BATCH] = batch_id
    labels.update(extra or {})
    return labels


def _owner_gone(owner: str) -> bool:
    """The owner label names a process on this machine that no longer runs."""
    hostname, _, pid = owner.rpartition(":")
    if hostname != socket.gethostname() or not pid.isdigit():
        return False  # another machine's run (or a label we did not write): not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, run by someone else
    return False


def remove_container(container: Container, timeout_s: int = 10) -> None:
    """Stop (SIGTERM, then SIGKILL after ``timeout_s``) and remove; quiet if it is already gone."""
    try:
        container.stop(timeout=timeout_s)
    except NotFound:
        return
    except APIError:
        pass  # not running: removal below still applies
    with contextlib.suppress(NotFound):
        container.remove(force=True)


def remove_leftovers(client: docker.DockerClient) -> list[str]:
    """Remove containers tcobench started from this machine whose process is gone (a crashed earlier run)."""
    removed = []
    for container in client.containers.list(all=True, filters={"label": f"{LABEL_MANAGED}=true"}):
        if _owner_gone(container.labels.get(LABEL_OWNER, "")):
            remove_container(container, timeout_s=0)
            removed.append(container.name)
    return removed


def run_to_completion(
    client: docker.DockerClient,
    image: str,
    command: list[str],
    timeout_s: float = 120.0,
    entrypoint: list[str] | None = None,
    **create_kwargs: object,
) -> tuple[int, str]:
    """Run a short-lived, labelled container to its end: (exit code, its output); always removed."""
    container = client.containers.create(
        image,
        command=command,
        entrypoint=entrypoint,
        labels=tcobench_labels("smoke-test"),
        detach=True,
        **create_kwargs,
    )
    try:
        container.start()
        try:
            status = container.wait(timeout=timeout_s)
        except (DockerException, OSError) as exc:  # the wait timed out (requests raises ReadTimeout)
            return -1, f"did not finish within {timeout_s:g} s ({type(exc).__name__})"
        output = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
        return int(status.get("StatusCode", -1)), output
    finally:
        remove_container(container, timeout_s=0)
