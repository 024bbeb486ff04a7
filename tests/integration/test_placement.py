"""Client placement on real interfaces: a network namespace of the test's own, joined to this machine by a veth pair
with link-local addresses (169.254.x.y/30; traffic never leaves the machine), stands in for "another host".

- an endpoint inside the namespace is across a network: `network`, with the round trip measured;
- an endpoint on this machine's end of the pair is this host, but not loopback: `same-host-container`;
- a Docker daemon inside the namespace, reached over tcp:// (the remote-Docker mode), runs the engine container on
  that "host": its run rows say `network` with the round trip.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import tcobench
from dockerd import extra_daemon

from tcobench.tasks.engine.model import bundled_model
from tests.services import free_ports, require

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Namespace:
    name: str
    host_ip: str  # this machine's end of the veth pair
    ns_ip: str  # the namespace's end

    def exec(self, *cmd: str) -> list[str]:
        # nsenter joins the network namespace only: `ip netns exec` also remounts /sys, which hides the cgroup
        # mounts beneath it, and dockerd then fails ("Devices cgroup isn't mounted", seen in CI)
        return ["nsenter", f"--net=/run/netns/{self.name}", *cmd]


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr}"


@pytest.fixture(scope="module")
def netns() -> Iterator[Namespace]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        require("a network namespace needs root and iproute2's `ip`")
    tag = secrets.token_hex(3)
    name, host_if, ns_if = f"tcb-{tag}", f"tcbh{tag}", f"tcbn{tag}"
    block = 4 * secrets.randbelow(64)  # a random /30 of 169.254.<n>.0/24: concurrent runs do not collide
    third = 100 + secrets.randbelow(100)
    ns = Namespace(name, f"169.254.{third}.{block + 1}", f"169.254.{third}.{block + 2}")
    _ip("netns", "add", name)
    try:
        _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        _ip("link", "set", ns_if, "netns", name)
        _ip("addr", "add", f"{ns.host_ip}/30", "dev", host_if)
        _ip("link", "set", host_if, "up")
        _ip("netns", "exec", name, "ip", "addr", "add", f"{ns.ns_ip}/30", "dev", ns_if)
        _ip("netns", "exec", name, "ip", "link", "set", ns_if, "up")
        _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)  # takes the veth pair with it


def _endpoint(cmd_prefix: list[str], host: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            *cmd_prefix,
            sys.executable,
            str(ROOT / "bench" / "zero_endpoint.py"),
            "--host",
            host,
            "--ttft-ms",
            "2",
            "--itl-ms",
            "1",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    match = re.search(r"(http://\S+) pid", proc.stdout.readline())
    assert match, "zero endpoint did not start"
    return proc, match.group(1)


def _rows(env: dict[str, str]) -> list[dict[str, Any]]:
    done = tcobench(
        "query", "select engine_url, client_placement, rtt_p50_ns, status from runs", "--format", "json", env=env
    )
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


@pytest.mark.parametrize("where", ["namespace", "host end", "loopback"])
def test_endpoint_placement_and_round_trip(netns: Namespace, cli_env: dict[str, str], where: str) -> None:
    prefix, address, placement = {
        "namespace": (netns.exec(), netns.ns_ip, "network"),
        "host end": ([], netns.host_ip, "same-host-container"),
        "loopback": ([], "127.0.0.1", "loopback"),
    }[where]
    proc, url = _endpoint(prefix, address)
    try:
        done = tcobench(
            "run",
            "--endpoint",
            url,
            "--protocol",
            "openai",
            "--model",
            "zero",
            "--requests",
            "3",
            "--warmup",
            "1",
            "--concurrency",
            "1",
            "--max-tokens",
            "4",
            "--no-prefect",
            env=cli_env,
            timeout=300,
        )
    finally:
        proc.terminate()
        proc.wait(10)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (row,) = _rows(cli_env)
    assert row["engine_url"] == url and row["client_placement"] == placement and row["status"] == "ok"
    if placement == "loopback":
        assert row["rtt_p50_ns"] is None
    else:
        assert 0 < row["rtt_p50_ns"] < 1_000_000_000  # a measured round trip, well under a second on a veth


@pytest.fixture
def remote_daemon(
    netns: Namespace, cpu_image: dict[str, str], docker_host: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A Docker daemon inside the namespace on tcp://NS_IP:PORT, holding a copy of the CPU engine image."""
    if shutil.which("dockerd") is None:
        require("the remote-Docker placement test needs dockerd")
    (port,) = free_ports(1)
    url = f"tcp://{netns.ns_ip}:{port}"
    with extra_daemon(
        Path(tmp_path_factory.mktemp("dockerd-remote", numbered=True)),
        cpu_image["reference"],
        docker_host,
        listen=[url],
        prefix=netns.exec(),
    ):
        yield url


@pytest.mark.docker
@pytest.mark.engine
def test_remote_docker_run_is_network_with_its_round_trip(
    remote_daemon: str, cpu_image: dict[str, str], cli_env: dict[str, str], model_cache: Path
) -> None:
    # a remote Docker host needs the model's path on that host; this "remote" daemon shares this machine's disk
    model, _ = bundled_model(model_cache)
    done = tcobench(
        "run",
        "--docker-host",
        remote_daemon,
        "--image",
        cpu_image["reference"],
        "--model-path",
        str(model),
        "--requests",
        "2",
        "--warmup",
        "1",
        "--concurrency",
        "1",
        "--max-tokens",
        "4",
        "--no-prefect",
        "--telemetry",
        "none",
        env=cli_env,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (row,) = _rows(cli_env)
    host = remote_daemon.removeprefix("tcp://").rsplit(":", 1)[0]
    assert row["engine_url"].startswith(f"http://{host}:") and row["status"] == "ok"
    assert row["client_placement"] == "network" and 0 < row["rtt_p50_ns"] < 1_000_000_000
