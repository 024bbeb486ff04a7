"""Engine-side metrics scraped during real runs, stored beside telemetry and charted in the report.

- llama.cpp: the real embedded llama-server (started with ``--metrics``) and the bundled Gemma 3 270M; and the same
  server with 2 slots measured at concurrency 4, so requests wait in its queue (``llamacpp:requests_deferred``).
- Ollama: no Ollama binary exists on our build machines, so this talks to ``ollama_replay``, a real HTTP server on
  127.0.0.1 replaying Ollama's documented ``/api/ps`` answer (docs/api.md); it proves tcobench reads that contract,
  not that a given Ollama release still speaks it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import assert_charted_or_left_out
from ollama_replay import PS_SIZE, ollama_replay
from test_cli import query_json, tcobench

from tcobench.tasks.engine import RunningEngine
from tests.store_helpers import data_files

# 32 tokens each, never cut short by an end-of-sequence token: a request then lasts several scrapes even on a fast
# machine (8 tokens lasted under one 4 Hz scrape in CI, so running_max read 0)
SHORT = (
    "--no-prefect",
    "--requests",
    "4",
    "--warmup",
    "0",
    "--max-tokens",
    "32",
    "--ignore-eos",
    "--telemetry",
    "none",
)


def scrape_often(tmp_path: Path) -> str:
    """A config file asking for 20 scrapes a second (the most; default 1), so short test runs get many."""
    path = tmp_path / "scrape-20hz.toml"
    path.write_text("[telemetry]\nengine_metrics_hz = 20.0\n", "utf-8")
    return str(path)


LOAD_SQL = (
    "select r.concurrency, r.engine_metrics_source as source, r.engine_metrics_note as note, l.samples, "
    "l.running_max, l.waiting_max, l.kv_used_max from runs r left join engine_load l using (run_id) order by 1"
)


@pytest.mark.engine
def test_embedded_llama_server_metrics_scraped_stored_and_charted(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = tcobench(
        "run", "--config", scrape_often(tmp_path), *SHORT, "--concurrency", "1", "--concurrency", "2", env=cli_env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    store = Path(cli_env["TCOBENCH_STORE"])
    assert data_files(store, "engine_metrics"), "no engine_metrics files beside telemetry"
    rows = query_json(LOAD_SQL, cli_env)
    assert [r["concurrency"] for r in rows] == [1, 2]
    for r in rows:
        assert r["source"] == "llama.cpp /metrics" and r["note"] is None
        assert r["samples"] >= 1
        assert 1 <= r["running_max"] <= r["concurrency"]  # one slot per concurrent request
        assert 0 < r["kv_used_max"] < 1  # prompt + 32 tokens in a 2048-token slot
    stored = query_json(
        "select distinct metric, quantity from engine_metrics order by 1, 2", cli_env
    )  # the engine's own names, raw
    assert {"metric": "llamacpp:requests_processing", "quantity": "requests_running"} in stored
    assert {"metric": "llamacpp:requests_deferred", "quantity": "requests_waiting"} in stored
    assert {"metric": "/slots n_ctx", "quantity": "kv_cache_capacity_tokens"} in stored

    out = tmp_path / "report.html"
    done = tcobench("report", "--out", str(out), "--resamples", "100", env=cli_env)
    assert done.returncode == 0, done.stderr[-3000:]
    html = out.read_text("utf-8")
    section = html[html.index('<h2 id="engine">') :]
    assert_charted_or_left_out(section, cli_env)


@pytest.mark.engine
def test_requests_wait_in_the_engine_when_concurrency_exceeds_its_slots(
    cli_env: dict[str, str], llama_server: RunningEngine, tmp_path: Path
) -> None:
    """The session server has 2 slots; at concurrency 4, two requests wait inside llama-server at a time."""
    done = tcobench(
        "run",
        "--config",
        scrape_often(tmp_path),
        *SHORT,
        "--endpoint",
        llama_server.base_url,
        "--model",
        "gemma-3-270m-q4_k_m",
        "--concurrency",
        "4",
        env=cli_env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = query_json(LOAD_SQL, cli_env)
    assert row["source"] == "llama.cpp /metrics"
    assert row["running_max"] == 2  # every slot busy
    assert row["waiting_max"] >= 1  # and the rest queued


def test_ollama_ps_stand_in(cli_env: dict[str, str]) -> None:
    with ollama_replay() as replay:
        replay.load("normal", 2048)  # what tcobench's container launcher does before measuring (/api/ps lists it)
        done = tcobench(
            "run",
            "--no-prefect",
            "--endpoint",
            replay.url,
            "--protocol",
            "ollama",
            "--model",
            "normal",
            "--concurrency",
            "1",
            "--requests",
            "3",
            "--warmup",
            "0",
            "--telemetry",
            "none",
            env=cli_env,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = query_json("select engine_metrics_source as source, engine_metrics_note as note from runs", cli_env)
    assert run == {"source": "ollama /api/ps", "note": None}
    sizes = query_json("select distinct metric, labels, value from engine_metrics order by 1", cli_env)
    assert sizes == [
        {"metric": "/api/ps size", "labels": '{"model":"normal:latest"}', "value": PS_SIZE},
        {"metric": "/api/ps size_vram", "labels": '{"model":"normal:latest"}', "value": PS_SIZE},
    ]
