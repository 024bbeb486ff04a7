"""Workload shapes on the embedded engine: llama.cpp's llama-server with Gemma 3 270M (conftest.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_helpers import tcobench

from tcobench.tasks.engine import RunningEngine
from tcobench.tasks.engine.model import bundled_model
from tcobench.tasks.workload import corpus_text, local_tokenizer

pytestmark = pytest.mark.engine


def query(sql: str, env: dict[str, str]) -> list[dict[str, Any]]:
    done = tcobench("query", sql, "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.prefect
def test_preset_512_128_is_token_exact_on_the_embedded_engine(cli_env: dict[str, str]) -> None:
    """Acceptance: server-reported prompt_tokens within 1 of 512 on every measured request (it is exactly 512:
    the probe measured llama-server's BOS), and exactly 128 output tokens (ignore_eos)."""
    # Prefect on (the default): the workload plan travels through the flow's tasks. No warm-up request: the claim is
    # on the measured ones, and a warm-up of 512/128 is engine time it does not need (docs/dev/performance.md#ci-lanes)
    done = tcobench(
        "run",
        "--preset",
        "smoke-512-128",
        "--requests",
        "4",
        "--warmup",
        "0",
        "--concurrency",
        "2",
        env=cli_env,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = query(
        "select prompt_tokens, output_tokens, requested_input_tokens, token_count_source, error "
        "from requests where phase = 'measure'",
        cli_env,
    )
    assert len(rows) == 4 and all(r["error"] is None for r in rows)
    assert all(abs(r["prompt_tokens"] - 512) <= 1 for r in rows), rows
    assert {r["prompt_tokens"] for r in rows} == {512}
    assert {r["output_tokens"] for r in rows} == {128} and {r["token_count_source"] for r in rows} == {"usage"}
    (run,) = query(
        "select preset, tokenizer, prompt_overhead_tokens, prompt_overhead_source, output_len_enforced from runs",
        cli_env,
    )
    assert run == {
        "preset": "smoke-512-128",
        "tokenizer": "engine POST /tokenize (llama.cpp)",
        "prompt_overhead_tokens": 1,
        "prompt_overhead_source": "probe",
        "output_len_enforced": True,
    }


def test_gguf_vocabulary_tokenizes_like_llama_server(llama_server: RunningEngine, model_cache: Path) -> None:
    """The GGUF file's vocabulary, converted for the tokenizers library, gives llama.cpp's own ids."""
    gguf, _ = bundled_model(model_cache)
    ours = local_tokenizer(gguf, model_cache)
    text = corpus_text()
    rng = random.Random(3)
    samples = [text[a : a + rng.randrange(5, 2500)] for a in (rng.randrange(len(text) - 2600) for _ in range(40))]
    samples += [
        "héllo wörld 😀 — “quotes”",
        "  leading spaces",
        "tabs\tand\r\nCRLF",
        "中文测试 成本效率",
        "x" * 50,
        "\n\n\n  \n",
        "用一句话解释什么是成本效率",
    ]
    with httpx.Client(trust_env=False, timeout=60) as client:
        for sample in samples:
            theirs = client.post(f"{llama_server.base_url}/tokenize", json={"content": sample}).json()["tokens"]
            assert ours.encode(sample).ids == theirs, sample[:80]
    assert ours.special_tokens() == 1  # BOS, as llama-server adds it


def test_timed_run_on_the_embedded_engine(cli_env: dict[str, str]) -> None:
    """--duration (short in CI; docs/workloads.md shows --duration 60): ends after the duration plus at most the longest
    request in flight, and the run row says stop_rule = duration."""
    done = tcobench(
        "run", "--no-prefect", "--duration", "4", "--concurrency", "2", "--max-tokens", "16", env=cli_env, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = query(
        "select stop_rule, measure_start_ns, measure_end_ns, measured_requests from runs where concurrency = 2", cli_env
    )
    rows = query(
        "select r.e2e_ns, r.in_flight_at_stop from requests r join runs using (run_id) "
        "where phase = 'measure' and concurrency = 2",
        cli_env,
    )
    assert run["stop_rule"] == "duration" and run["measured_requests"] == len(rows) >= 2
    longest = max(r["e2e_ns"] for r in rows)
    assert run["measure_end_ns"] - run["measure_start_ns"] <= 4e9 + longest + 0.5e9
    assert sum(r["in_flight_at_stop"] for r in rows) <= 2  # at most one per slot crossed the end


def test_a_replayed_traces_shared_blocks_are_cached_by_the_embedded_engine(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Two Mooncake requests a second apart that name the same first two hash_ids blocks: llama-server serves the
    second one's shared prefix (two 512-token blocks and the BOS) from its prompt cache, which its cache_n reports
    (requests.cached_tokens); the first one shares at most its tag's lead word with the probe before it. Two short
    requests: the embedded engine is slow under load."""
    trace = tmp_path / "mooncake.jsonl"
    rows = [
        {"timestamp": 0, "input_length": 1100, "output_length": 2, "hash_ids": [1, 2, 3]},
        {"timestamp": 1000, "input_length": 1200, "output_length": 2, "hash_ids": [1, 2, 4]},
    ]
    trace.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    done = tcobench(
        "run", "--no-prefect", "--trace", str(trace), "--warmup", "0", "--concurrency", "1", env=cli_env, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = query(
        "select prompt_tokens, cached_tokens, error from requests where phase = 'measure' order by request_index",
        cli_env,
    )
    assert [(r["prompt_tokens"], r["error"]) for r in got] == [(1100, None), (1200, None)]
    first, second = (r["cached_tokens"] for r in got)
    assert first is not None and first < 64, got
    assert second is not None and 2 * 512 <= second < 1200, got
