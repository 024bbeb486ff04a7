"""In fleet mode an engine container's port answers on its own host's loopback only (issue 13: no engine port
reachable from outside its host).

A fleet worker starts its cells' engines on its own host's Docker socket (``refuse_remote_engines`` refuses any
other), through the same launcher as ``tcobench run --image``; so the CPU engine image is started here that way, on
this machine's daemon, and probed:

- from this machine on 127.0.0.1: it answers;
- from this machine on its own non-loopback address (the host end of a veth pair): refused;
- from a network namespace of the test's own, joined to this machine by that veth pair (link-local addresses,
  traffic never leaves the machine; ``test_placement.netns``), standing in for another host: refused.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_placement import Namespace, netns  # noqa: F401  (the fixture, shared with the placement tests)

from tcobench.schemas import BenchmarkConfig, HostSpec
from tcobench.tasks.engine import launch_engine, stop_engine
from tcobench.tasks.fleet import refuse_remote_engines
from tcobench.tasks.inventory import Cell

_PROBE = (
    "import socket, sys\n"
    "try:\n"
    "    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3).close()\n"
    "except OSError as exc:\n"
    "    print(type(exc).__name__)\n"
    "else:\n"
    "    print('connected')\n"
)


def _connect(host: str, port: int, prefix: list[str] | None = None) -> str:
    """'connected', or the name of the error a TCP connect to host:port met (run in ``prefix``'s namespace)."""
    done = subprocess.run([*(prefix or []), sys.executable, "-c", _PROBE, host, str(port)], capture_output=True,
                          text=True, timeout=30, check=True)  # fmt: skip
    return done.stdout.strip()


@pytest.mark.docker
@pytest.mark.engine
def test_a_fleet_engine_container_answers_on_its_hosts_loopback_only(
    netns: Namespace,  # noqa: F811
    cpu_image: dict[str, str],
    docker_host: str,
    model_cache: Path,
    tmp_path: Path,
) -> None:
    config = BenchmarkConfig.model_validate_json(json.dumps({
        "engine": {"kind": "container", "container": {"image": cpu_image["reference"], "docker_host": docker_host}},
        "workload": {"concurrency": [1]},
    }))  # fmt: skip
    host = HostSpec.model_validate_json('{"name": "host-a", "vendor": "cpu", "hardware": "cpu-generic-2c"}')
    refuse_remote_engines([Cell(host, "llama-cpp-cpu", "gemma", "w", config)])  # what a worker checks first
    engine = launch_engine(config, tmp_path / "logs", model_cache, batch_id="fleet-port")
    try:
        url = urlsplit(engine.base_url)
        assert url.hostname == "127.0.0.1" and url.port is not None, engine.base_url
        port = url.port
        listening = subprocess.run(["ss", "-Htln", f"sport = :{port}"], capture_output=True, text=True, check=True)
        addresses = {line.split()[3].rsplit(":", 1)[0] for line in listening.stdout.splitlines() if line.strip()}
        assert addresses == {"127.0.0.1"}, listening.stdout  # bound to loopback, not 0.0.0.0 or [::]
        assert _connect("127.0.0.1", port) == "connected"
        assert _connect(netns.host_ip, port) == "ConnectionRefusedError"  # this host, not through loopback
        assert _connect(netns.host_ip, port, netns.exec()) == "ConnectionRefusedError"  # another host
        with socket.create_server(("0.0.0.0", 0)) as open_port:  # noqa: S104  (the check: this one is reachable)
            assert _connect(netns.host_ip, open_port.getsockname()[1], netns.exec()) == "connected"
    finally:
        stop_engine(config, engine)
