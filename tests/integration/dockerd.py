"""An extra Docker daemon for the tests that need a second "host" (own socket, data root, exec root, no bridge, no
iptables), holding a copy of an image from the main daemon; stopped with its containers, shims and mounts."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

__all__ = ["docker", "extra_daemon", "kill_shims"]


def docker(host: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", "-H", host, *args], capture_output=True, text=True, check=False)


def kill_shims(root: Path) -> None:
    """Container shims of the daemon under ``root`` (they outlive a killed dockerd) and their containers."""
    for proc_dir in Path("/proc").iterdir():
        if not proc_dir.name.isdigit():
            continue
        try:
            cmdline = (proc_dir / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            children = (proc_dir / "task" / proc_dir.name / "children").read_text().split()
        except OSError:
            continue
        if "containerd-shim" in cmdline and str(root) in cmdline:
            for pid in [*children, proc_dir.name]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)


@contextlib.contextmanager
def extra_daemon(
    root: Path, image: str, from_host: str, listen: Sequence[str] = (), prefix: Sequence[str] = ()
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """dockerd on ``unix://ROOT/docker.sock`` (plus ``listen`` addresses), run under ``prefix`` (e.g. `ip netns
    exec NS`), with ``image`` copied from the daemon at ``from_host``; yields (its socket URL, its process)."""
    sock = f"unix://{root}/docker.sock"
    hosts = [arg for address in (sock, *listen) for arg in ("-H", address)]
    log = (root / "dockerd.log").open("wb")
    proc = subprocess.Popen(
        [
            *prefix,
            "dockerd",
            "--bridge=none",
            "--iptables=false",
            "--ip6tables=false",
            *hosts,
            "--data-root",
            str(root / "data"),
            "--exec-root",
            str(root / "exec"),
            "--pidfile",
            str(root / "docker.pid"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        for _ in range(240):  # a tcp listener without TLS makes dockerd wait about 15 s first
            if docker(sock, "version").returncode == 0:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"extra dockerd did not start: {(root / 'dockerd.log').read_text()[-2000:]}")
        save = subprocess.Popen(["docker", "-H", from_host, "save", image], stdout=subprocess.PIPE)
        loaded = subprocess.run(
            ["docker", "-H", sock, "load"], stdin=save.stdout, capture_output=True, text=True, check=False
        )
        save.wait()
        assert loaded.returncode == 0, loaded.stderr
        yield sock, proc
    finally:
        if proc.poll() is None:
            ids = docker(sock, "ps", "-aq").stdout.split()
            if ids:
                docker(sock, "rm", "-f", *ids)
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)
        log.close()
        kill_shims(root)
        for line in reversed(Path("/proc/mounts").read_text().splitlines()):
            mount = line.split()[1]
            if mount.startswith(str(root)):
                subprocess.run(["umount", "-l", mount], check=False)
        shutil.rmtree(root, ignore_errors=True)
