"""`tcobench serve` registers the nightly deployment with its cron schedule on a real `prefect server start`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.prefect

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    home = tmp_path_factory.mktemp("prefect-server")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_HOME=str(home), PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_LOGGING_LEVEL="WARNING")
    log = (home / "server.log").open("wb")
    proc = subprocess.Popen(
        [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    api = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert proc.poll() is None, (home / "server.log").read_text()[-2000:]
            try:
                if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        else:
            pytest.fail(f"prefect server not healthy after 180 s: {(home / 'server.log').read_text()[-2000:]}")
        yield api, {**env, "PREFECT_API_URL": api}
    finally:
        _stop(proc)
        log.close()


def test_serve_registers_cron_deployment(prefect_server: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    api, env = prefect_server
    args = [
        "serve",
        "-i",
        str(EXAMPLES / "inventory.toml"),
        "-m",
        str(EXAMPLES / "matrix-nvidia.toml"),
        "-m",
        str(EXAMPLES / "matrix-amd.toml"),
        "--cron",
        "30 3 * * *",
        "--name",
        "t-nightly",
        "--store",
        str(tmp_path / "store"),
    ]
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [str(BIN / "tcobench"), *args], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        found = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and found is None:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            rows = httpx.post(
                f"{api}/deployments/filter", json={"deployments": {"name": {"any_": ["t-nightly"]}}}, timeout=10
            ).json()
            found = rows[0] if rows else None
            time.sleep(1)
        assert found is not None, (tmp_path / "serve.log").read_text()[-3000:]
        crons = [s["schedule"].get("cron") for s in found["schedules"]]
        assert crons == ["30 3 * * *"]
        assert found["entrypoint"] == "tcobench.flows.nightly.nightly"  # a module path, not a file
        assert found["parameters"]["inventory"] == str(EXAMPLES / "inventory.toml")
        flow = httpx.get(f"{api}/flows/{found['flow_id']}", timeout=10).json()
        assert flow["name"] == "nightly"
    finally:
        _stop(proc)
        log.close()


def test_serve_without_a_server_says_so(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    done = subprocess.run(
        [
            str(BIN / "tcobench"),
            "serve",
            "-i",
            str(EXAMPLES / "inventory.toml"),
            "-m",
            str(EXAMPLES / "matrix-nvidia.toml"),
            "-m",
            str(EXAMPLES / "matrix-amd.toml"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().startswith("ConfigError: tcobench serve needs a Prefect server")
