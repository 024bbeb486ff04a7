"""A real OpenSSH server on 127.0.0.1 in front of the tests' Docker daemon, for ``ssh://`` Docker hosts.

Debian's ``openssh-server`` (.ci/run installs it): ``/usr/sbin/sshd -D -e`` on a free port with its own
``sshd_config``, host key, authorized key and log in a temporary folder; key login only, for the user running the
tests. ``SetEnv DOCKER_HOST=...`` gives every session the daemon the tests use, so the remote
``docker system dial-stdio`` reaches it. The client side is an ``ssh_config`` of its own (the generated key, a
known_hosts file holding the server's key, strict host key checking), passed as ``ssh -F FILE`` through
``TCOBENCH_SSH_COMMAND``: nothing under ``~/.ssh`` is read or written.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.services import free_ports, require

__all__ = ["SshServer", "ssh_server"]

_SSHD = "/usr/sbin/sshd"  # sshd re-executes itself: it must be started by its absolute path


@dataclass(frozen=True)
class SshServer:
    """``url``: the ssh:// Docker host; ``ssh_command``: the client command that trusts this server and has the key."""

    url: str
    ssh_command: str
    folder: Path
    port: int

    def log(self) -> str:
        path = self.folder / "sshd.log"
        return path.read_text("utf-8", "replace")[-2000:] if path.exists() else ""


def _keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "tcobench-test", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path.with_suffix(".pub").read_text().strip()


def _config(folder: Path, port: int, user: str, docker_host: str) -> Path:
    server = folder / "sshd_config"
    server.write_text(
        f"ListenAddress 127.0.0.1:{port}\n"
        f"HostKey {folder / 'host_ed25519'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\n"
        "PidFile none\n"
        "PubkeyAuthentication yes\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\n"
        "UsePAM no\n"
        # the temporary folder lies under /tmp, which StrictModes would refuse (world-writable)
        "StrictModes no\n"
        f"AllowUsers {user}\n"
        f"SetEnv DOCKER_HOST={docker_host}\n"
        "LogLevel VERBOSE\n"
    )
    return server


def _client_config(folder: Path, server_key: str, port: int) -> Path:
    (folder / "known_hosts").write_text(f"[127.0.0.1]:{port} {' '.join(server_key.split()[:2])}\n")
    client = folder / "ssh_config"
    client.write_text(
        "Host *\n"
        f"  IdentityFile {folder / 'id_ed25519'}\n"
        "  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {folder / 'known_hosts'}\n"
        "  GlobalKnownHostsFile /dev/null\n"
        "  StrictHostKeyChecking yes\n"
        "  LogLevel ERROR\n"
    )
    return client


def _wait_for_login(server: SshServer, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(100):
        if proc.poll() is not None:
            break
        done = subprocess.run(
            [*shlex.split(server.ssh_command), "-o", "BatchMode=yes", "-p", str(server.port), "127.0.0.1", "true"],
            capture_output=True,
            check=False,
        )
        if done.returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError(f"sshd on 127.0.0.1:{server.port} did not let the test key in: {server.log()}")


@contextlib.contextmanager
def ssh_server(folder: Path, docker_host: str) -> Iterator[SshServer]:
    """sshd on 127.0.0.1 (a free port) whose sessions reach ``docker_host``; stopped on exit."""
    if not Path(_SSHD).exists() or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        require(f"no {_SSHD}, ssh or ssh-keygen (Debian's openssh-server and openssh-client; .ci/run installs them)")
    folder.mkdir(parents=True, exist_ok=True)
    user = getpass.getuser()
    server_key = _keygen(folder / "host_ed25519")
    (folder / "authorized_keys").write_text(_keygen(folder / "id_ed25519") + "\n")
    (port,) = free_ports(1)
    config = _config(folder, port, user, docker_host)
    client = _client_config(folder, server_key, port)
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation folder (Debian makes it)
    checked = subprocess.run([_SSHD, "-t", "-f", str(config)], capture_output=True, text=True, check=False)
    if checked.returncode != 0:
        raise RuntimeError(f"sshd -t refused {config}: {checked.stderr.strip()}")
    log = (folder / "sshd.log").open("wb")
    proc = subprocess.Popen(
        [_SSHD, "-D", "-e", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    server = SshServer(f"ssh://{user}@127.0.0.1:{port}", f"ssh -F {client}", folder, port)
    try:
        _wait_for_login(server, proc)
        yield server
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        log.close()
