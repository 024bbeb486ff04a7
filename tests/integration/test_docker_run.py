"""`tcobench run --docker-host URL --image NAME`: the engine runs as a container (host network, 127.0.0.1 only).

One command, two concurrency levels: the first run finishes normally (its rows carry the image digest and the
container settings); during the second, the test kills the engine container. The second run must be stored as
failed with its finished requests kept, the error must name the container and its exit code, the container log
must be saved beside the runs, and no container with the batch's label may remain.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
from cli_helpers import one_line_error

from tcobench.tasks.host.docker_client import LABEL_BATCH
from tests.store_helpers import table_rows

pytestmark = [pytest.mark.docker, pytest.mark.engine]

REQUESTS = 30
MAX_TOKENS = 16


def _rows(store: Path, table: str) -> list[dict[str, Any]]:
    return table_rows(store, table)


def _tokens_predicted(port: int) -> float:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5, trust_env=False).text
    match = re.search(r"^llamacpp:tokens_predicted_total\s+([0-9.e+]+)", text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def _kill_during_second_run(store: Path, docker_api: Any, done: threading.Event, killed: dict[str, Any]) -> None:
    """Wait for the first run's row, then kill the container once the second run has finished a few requests."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not done.is_set():
        try:
            runs = _rows(store, "runs")
        except duckdb.Error:  # the run holds the catalog while it commits; read again
            runs = []
        if runs:
            break
        time.sleep(0.2)
    else:
        return
    batch = runs[0]["batch_id"]
    (container,) = docker_api.containers.list(filters={"label": f"{LABEL_BATCH}={batch}"})
    port = int(container.attrs["Config"]["Cmd"][container.attrs["Config"]["Cmd"].index("--port") + 1])
    start = _tokens_predicted(port)
    until = time.monotonic() + 120
    while time.monotonic() < until and _tokens_predicted(port) < start + 3 * MAX_TOKENS:
        time.sleep(0.1)  # warm-up plus two measured requests of the second run, at least
    container.kill()
    killed.update(batch=batch, name=container.name)


def test_containerised_run_and_engine_killed_mid_run(
    cpu_image: dict[str, str], docker_host: str, docker_api: Any, model_cache: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(TCOBENCH_STORE=str(store), TCOBENCH_MODEL_CACHE=str(model_cache), COLUMNS="200")
    exe = Path(sys.executable).parent / "tcobench"
    cmd = [
        str(exe),
        "run",
        "--no-prefect",
        "--image",
        cpu_image["reference"],
        "--docker-host",
        docker_host,
        "--concurrency",
        "1",
        "--concurrency",
        "2",
        "--requests",
        str(REQUESTS),
        "--max-tokens",
        str(MAX_TOKENS),
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done, killed = threading.Event(), dict[str, Any]()
    killer = threading.Thread(target=_kill_during_second_run, args=(store, docker_api, done, killed))
    killer.start()
    try:
        stdout, stderr = proc.communicate(timeout=900)
    finally:
        done.set()
        killer.join(timeout=30)
        if proc.poll() is None:
            proc.kill()
    assert killed, f"the engine was never killed; stderr: {stderr[-3000:]}"

    # The command fails with one line naming the container and its exit code: exit 3, the engine died mid-run.
    assert proc.returncode == 3, stderr[-3000:]
    error = one_line_error(stderr)
    assert error.startswith(f"EngineError: engine container {killed['name']}"), error
    assert "exited with code 137" in error

    runs = sorted(_rows(store, "runs"), key=lambda r: r["concurrency"])
    assert [(r["concurrency"], r["status"]) for r in runs] == [(1, "ok"), (2, "failed")]
    for run in runs:
        assert run["engine_kind"] == "container" and run["engine_name"] == "llama.cpp"
        assert run["image"] == cpu_image["reference"] and run["image_digest"] == cpu_image["image_id"]
        assert run["model_digest"] == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
        settings = json.loads(run["container_settings"])
        assert settings["network_mode"] == "host" and settings["container"] == killed["name"]
        assert settings["privileged"] is False and settings["user"] == "10001:10001"
        assert settings["labels"][LABEL_BATCH] == killed["batch"] == run["batch_id"]
        assert json.loads(run["engine_settings"])["parallel"] == 2
    failed = runs[1]
    assert killed["name"] in failed["error"] and "exited with code 137" in failed["error"]

    # The second run's finished requests are kept; its run row flags the run as failed, with the reason.
    requests = _rows(store, "requests")
    second = [r for r in requests if r["run_id"] == failed["run_id"]]
    assert any(r["phase"] == "measure" and r["error"] is None for r in second), second
    assert any(r["error"] is not None for r in second)
    first = [r for r in requests if r["run_id"] == runs[0]["run_id"]]
    assert len(first) == REQUESTS + 1 and all(r["error"] is None for r in first)

    # Nothing of the batch is left on the Docker host, and the container's log is kept beside the runs.
    assert docker_api.containers.list(all=True, filters={"label": f"{LABEL_BATCH}={killed['batch']}"}) == []
    log = store / "logs" / f"container-{killed['name']}.log"
    assert log.is_file() and "llama" in log.read_text("utf-8", "replace")
