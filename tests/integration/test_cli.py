"""The `tcobench` command as a user runs it: real llama.cpp engine, real Prefect flow, real Parquet and DuckDB."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tcobench.tasks.engine import RunningEngine
from tests.store_helpers import data_files, store_rows

pytestmark = [pytest.mark.engine, pytest.mark.prefect]


def tcobench(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "tcobench"  # the console script of the venv running the tests
    if not exe.exists():
        exe = Path(shutil.which("tcobench") or "tcobench")
    return subprocess.run([str(exe), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def query_json(sql: str, env: dict[str, str]) -> list[dict[str, Any]]:
    done = tcobench("query", sql, "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def parquet_files(store: Path) -> list[Path]:
    return sorted(store.rglob("*.parquet")) if store.exists() else []


def test_default_run_end_to_end(cli_env: dict[str, str]) -> None:
    """The main job (`make run`; docs/getting-started.md: embedded llama.cpp, its default model, Prefect on, 1
    warm-up, concurrency 1 then 2), with 4 measured requests of 16 tokens instead of 20 of 64 to keep CI short;
    summary with cost. The defaults themselves (20 requests, 64 tokens) are checked in
    tests/unit/tasks/test_config.py."""
    done = tcobench("run", "--requests", "4", "--max-tokens", "16", env=cli_env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cost per 1M output tokens" in done.stdout
    assert "Cost per month behind those numbers" in done.stdout
    assert "source: hardware" in done.stdout
    store = Path(cli_env["TCOBENCH_STORE"])
    assert data_files(store, "runs") and data_files(store, "requests")

    counts = store_rows(store, "select phase, count(*) as n from requests group by 1 order by 1")
    assert counts == [{"phase": "measure", "n": 8}, {"phase": "warmup", "n": 2}]
    runs = store_rows(
        store,
        "select r.concurrency, r.status, r.model_digest, r.engine_name, s.errors, s.output_tok_s, "
        "t.usd_per_m_output_tokens from runs r join run_summary s using (run_id) join tco t using (run_id) "
        "order by 1",
    )
    assert [r["concurrency"] for r in runs] == [1, 2]
    for run in runs:
        assert run["status"] == "ok" and run["errors"] == 0
        assert run["engine_name"] == "llama.cpp"
        assert run["model_digest"] == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
        assert run["output_tok_s"] > 0 and run["usd_per_m_output_tokens"] > 0
    tokens = store_rows(
        store,
        "select min(output_tokens) as lo, max(output_tokens) as hi, count(*) filter (where token_count_source "
        "<> 'usage') as not_usage from requests",
    )[0]
    assert tokens["lo"] >= 1 and tokens["hi"] <= 16 and tokens["not_usage"] == 0

    refused = tcobench("query", "delete from requests", env=cli_env)
    assert refused.returncode != 0
    assert refused.stderr.strip().startswith("QueryError:") and "read-only" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert query_json("select count(*) as n from requests", cli_env) == [{"n": 10}]


def test_run_against_running_server(cli_env: dict[str, str], llama_server: RunningEngine) -> None:
    """`tcobench run --endpoint` measures a separately started llama.cpp server. Prefect off: an endpoint run through
    the flow is tests/faults/test_secrets.py's (step 3), the flow itself test_default_run_end_to_end's."""
    done = tcobench(
        "run",
        "--no-prefect",
        "--endpoint",
        llama_server.base_url,
        "--protocol",
        "openai",
        "--model",
        "gemma-3-270m-q4_k_m",
        "--requests",
        "3",
        "--concurrency",
        "2",
        "--max-tokens",  # 16 of the default 64: the claim is the endpoint run, not the answers' length
        "16",
        env=cli_env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = query_json("select engine_kind, engine_url, concurrency, status from runs", cli_env)
    assert rows == [{"engine_kind": "endpoint", "engine_url": llama_server.base_url, "concurrency": 2, "status": "ok"}]
    assert query_json("select count(*) as n from requests where phase = 'measure'", cli_env) == [{"n": 3}]


def test_extra_body_reaches_the_engine(cli_env: dict[str, str], llama_server: RunningEngine) -> None:
    """--extra-body fields go into every request: llama.cpp lets n_predict override max_tokens."""
    done = tcobench(
        "run",
        "--no-prefect",
        "--endpoint",
        llama_server.base_url,
        "--model",
        "gemma-3-270m-q4_k_m",
        "--requests",
        "2",
        "--warmup",
        "0",
        "--concurrency",
        "1",
        "--max-tokens",
        "16",
        "--ignore-eos",
        "--extra-body",
        '{"n_predict": 3}',
        "--shape-tolerance",  # 3 of the 16 asked is -81%: without it, exit 4 (a shape mismatch)
        "0.85",
        env=cli_env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert query_json("select max_tokens, extra_body from runs", cli_env) == [
        {"max_tokens": 16, "extra_body": '{"n_predict": 3}'}
    ]
    assert query_json("select distinct output_tokens from requests", cli_env) == [{"output_tokens": 3}]


def _assert_one_line_failure(done: subprocess.CompletedProcess[str], kind: str, *needles: str) -> None:
    assert done.returncode != 0
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("starting Prefect")]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"{kind}:"), lines[0]
    for needle in needles:
        assert needle in lines[0]


def test_unreachable_endpoint(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = tcobench("run", "--endpoint", "http://127.0.0.1:9", "--model", "m", env=cli_env)
    _assert_one_line_failure(done, "EngineError", "http://127.0.0.1:9")
    assert parquet_files(Path(cli_env["TCOBENCH_STORE"])) == []


def test_unknown_model_at_endpoint(cli_env: dict[str, str], llama_server: RunningEngine) -> None:
    done = tcobench("run", "--endpoint", llama_server.base_url, "--model", "no-such-model", env=cli_env)
    _assert_one_line_failure(done, "EngineError", "no-such-model", "gemma-3-270m-q4_k_m")
    assert parquet_files(Path(cli_env["TCOBENCH_STORE"])) == []


def test_unknown_model_embedded(cli_env: dict[str, str]) -> None:
    done = tcobench("run", "--model", "llama-70b", env=cli_env)
    _assert_one_line_failure(done, "ConfigError", "llama-70b")
    assert not Path(cli_env["TCOBENCH_STORE"]).exists()


def test_malformed_config(cli_env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bench.toml"
    bad.write_text("[workload]\nconcurrency = [1, 0]\n", "utf-8")
    done = tcobench("run", "--config", str(bad), env=cli_env)
    _assert_one_line_failure(done, "ConfigError", str(bad), "workload.concurrency")
    bad.write_text("[workload\n", "utf-8")
    _assert_one_line_failure(tcobench("run", "--config", str(bad), env=cli_env), "ConfigError", "TOML")
    assert not Path(cli_env["TCOBENCH_STORE"]).exists()


def test_malformed_price_table(cli_env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "prices.toml"
    shipped = Path(__file__).resolve().parents[2] / "tcobench" / "data" / "prices.toml"
    bad.write_text(shipped.read_text("utf-8").replace("lifetime_months = 48", "lifetime_months = -1", 1), "utf-8")
    done = tcobench("run", "--prices", str(bad), env=cli_env)
    _assert_one_line_failure(done, "PricingError", str(bad), "lifetime_months")
    assert not Path(cli_env["TCOBENCH_STORE"]).exists()
