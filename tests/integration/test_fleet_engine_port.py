"""In fleet mode an engine container's port answers on its own host's loopback only (issue 13: no engine port
reachable from outside its host).

The cell goes the way a worker's does, without Prefect: a fleet inventory and a matrix with an image engine are
planned (``load_plan``), handed over as the host run's parameters (``host_parameters``), read back on the host
(``cells_from_parameters``), checked (``refuse_remote_engines``: only this host's Docker socket, here the worker's
``DOCKER_HOST``), and started by ``launch_engine``, the task ``fleet-host`` runs through ``benchmark``. The image is
the llama.cpp CPU image (``cpu_image``), on this machine's daemon. Then:

- the engine's listening socket (host networking: the container's own process) is bound to 127.0.0.1 only, and
  the container was told so (its ``--host``);
- from this machine on 127.0.0.1: it answers;
- from this machine on its own non-loopback address (the host end of a veth pair): refused;
- from a network namespace of the test's own, joined to this machine by that veth pair (link-local addresses,
  traffic never leaves the machine; ``test_placement.netns``), standing in for another host: refused, while a
  port of this machine bound to every address is reachable from it (so "refused" is the engine's binding, not a
  namespace that reaches nothing).
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from test_placement import Namespace, netns  # noqa: F401  (the fixture, shared with the placement tests)

from tcobench.tasks.engine import launch_engine, stop_engine
from tcobench.tasks.fleet import cells_from_parameters, host_parameters, refuse_remote_engines
from tcobench.tasks.inventory import Cell, load_plan
from tcobench.tasks.prices import load_prices

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
    done = subprocess.run(
        [*(prefix or []), sys.executable, "-c", _PROBE, host, str(port)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.strip()


def _listeners(port: int) -> list[tuple[str, set[int]]]:
    """(local address, pids of its owners) of every TCP socket listening on ``port`` on this machine."""
    done = subprocess.run(["ss", "-Htlnp", f"sport = :{port}"], capture_output=True, text=True, check=True)
    return [
        (line.split()[3].rsplit(":", 1)[0], {int(p) for p in re.findall(r"pid=(\d+)", line)})
        for line in done.stdout.splitlines()
        if line.strip()
    ]


def _pids(container: Any) -> set[int]:
    """The container's processes, as this machine's pids (``docker top``)."""
    top = container.top()
    column = top["Titles"].index("PID")
    return {int(row[column]) for row in top["Processes"]}


def _fleet_cell(tmp_path: Path, image: str) -> Cell:
    """The one cell of a fleet night, as a worker's ``fleet-host`` run gets it back from its parameters."""
    inventory, matrix = tmp_path / "inventory.toml", tmp_path / "matrix.toml"
    hosts = '[[hosts]]\nname = "host-a"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n'
    inventory.write_text(f'[fleet]\nwork_pool = "tcobench-port-test"\n{hosts}', "utf-8")
    workload = '[[workloads]]\nname = "w"\nrequests = 1\nmax_tokens = 2\nconcurrency = [1]\n'
    matrix.write_text(
        f'[[engines]]\nname = "llama"\nimage = "{image}"\n[[models]]\nname = "gemma-3-270m-q4_k_m"\n{workload}', "utf-8"
    )
    prices = load_prices(None)
    plan = load_plan(inventory, [matrix], prices)
    assert plan.inventory.fleet is not None  # a fleet night
    (host,) = plan.inventory.hosts
    params = host_parameters(host, plan.cells_of("host-a"), "fleet-port", prices, str(tmp_path / "store"), 1, 0.0)
    cells = cells_from_parameters(params["host"], params["cells"])
    refuse_remote_engines(cells)  # what the worker's run checks first
    (cell,) = cells
    return cell


@pytest.mark.docker
@pytest.mark.engine
def test_a_fleet_engine_container_answers_on_its_hosts_loopback_only(
    netns: Namespace,  # noqa: F811
    cpu_image: dict[str, str],
    docker_host: str,
    model_cache: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", docker_host)  # the worker's own daemon, as its environment names it
    cell = _fleet_cell(tmp_path, cpu_image["reference"])
    config = cell.config
    assert config.engine.container is not None and config.engine.container.docker_host is None  # the worker's own
    engine = launch_engine(config, tmp_path / "logs", model_cache, batch_id="fleet-port")
    try:
        url = urlsplit(engine.base_url)
        assert url.hostname == "127.0.0.1" and url.port is not None, engine.base_url
        port = url.port
        container = engine.handle.container
        container.reload()
        assert container.attrs["HostConfig"]["NetworkMode"] == "host"  # its sockets are this machine's
        args = container.attrs["Args"]
        assert args[args.index("--host") + 1] == "127.0.0.1", args  # the container was told to bind loopback
        listeners = _listeners(port)
        assert [address for address, _ in listeners] == ["127.0.0.1"], listeners  # not 0.0.0.0, [::] or an IP
        assert listeners[0][1] and listeners[0][1] <= _pids(container), listeners  # ... and it is the container's
        assert _connect("127.0.0.1", port) == "connected"
        assert _connect(netns.host_ip, port) == "ConnectionRefusedError"  # this host, not through loopback
        assert _connect(netns.host_ip, port, netns.exec()) == "ConnectionRefusedError"  # another host
        with socket.create_server(("0.0.0.0", 0)) as open_port:  # noqa: S104  (the check: this one is reachable)
            assert _connect(netns.host_ip, open_port.getsockname()[1], netns.exec()) == "connected"
    finally:
        stop_engine(config, engine)
