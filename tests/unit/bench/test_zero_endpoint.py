"""bench/zero_endpoint.py on a real socket (127.0.0.1, port 0): its wire format as our adapters read it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from zero_endpoint import EndpointConfig, start_in_thread

from tcobench.schemas import Protocol, WorkloadConfig
from tcobench.tasks.load.measure import measure
from tcobench.tasks.load.record import RunContext
from tcobench.tasks.load.stream import Target, preflight

CTX = RunContext("r1", "2026-11-30", "bench")


@pytest.fixture
def url() -> Iterator[str]:
    base, stop = start_in_thread(EndpointConfig(ttft_s=0.002, itl_s=0.001, tokens=5))
    try:
        yield base
    finally:
        stop()


def _workload(max_tokens: int = 7) -> WorkloadConfig:
    return WorkloadConfig(max_tokens=max_tokens, requests=4, warmup_requests=1, concurrency=(2,))


@pytest.mark.parametrize(
    ("protocol", "chat", "source"),
    [
        (Protocol.openai, False, "usage"),
        (Protocol.openai, True, "usage"),
        (Protocol.ollama, False, "server_counters"),
        (Protocol.ollama, True, "server_counters"),
    ],
)
def test_measure_reads_every_route(url: str, protocol: Protocol, chat: bool, source: str) -> None:
    target = Target(url, protocol, "zero", chat=chat)
    assert preflight(target).version in {"unknown", "0.0.0-zero"}
    result = measure(target, _workload(7), CTX, 2)
    assert len(result.measured) == 4
    for record in result.warmup + result.measured:
        assert record.error is None
        assert (record.output_tokens, record.chunks, len(record.itl_ns)) == (7, 7, 6)
        assert record.token_count_source == source
        assert record.finish_reason == "length"


def test_sse_wire_format(url: str) -> None:
    body = {"model": "zero", "prompt": "one two three", "max_tokens": 3, "stream": True}
    with httpx.Client(trust_env=False) as client, client.stream("POST", f"{url}/v1/completions", json=body) as r:
        assert r.headers["content-type"] == "text/event-stream"
        assert r.headers["transfer-encoding"] == "chunked"
        data = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert [c["choices"][0]["text"] for c in chunks[:3]] == [" tok"] * 3
    assert chunks[3]["choices"][0]["finish_reason"] == "length"
    assert chunks[4]["choices"] == []
    assert chunks[4]["usage"] == {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}


def test_ndjson_final_object_has_counters(url: str) -> None:
    body = {"model": "zero", "prompt": "hi", "options": {"num_predict": 2}}
    with httpx.Client(trust_env=False) as client, client.stream("POST", f"{url}/api/generate", json=body) as r:
        assert r.headers["content-type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in r.iter_lines() if line]
    assert [x["done"] for x in lines] == [False, False, True]
    assert lines[-1]["eval_count"] == 2
    assert lines[-1]["prompt_eval_duration"] == 2_000_000  # the configured TTFT, in ns
    assert lines[-1]["done_reason"] == "length"


def test_default_length_stats_and_unknown_route(url: str) -> None:
    with httpx.Client(trust_env=False, base_url=url) as client:
        client.get("/stats?reset=1")
        text = client.post("/v1/completions", json={"prompt": "x", "stream": True}).text
        assert text.count('"text":" tok"') == 5  # no max_tokens: the configured default
        stats = client.get("/stats").json()
        assert (stats["requests"], stats["tokens"], stats["timed_writes"]) == (1, 5, 5)
        assert client.get("/nope").status_code == 404
        assert client.get("/api/tags").json()["models"][0]["name"] == "zero:latest"


def test_fixed_tokens_ignores_max_tokens() -> None:
    base, stop = start_in_thread(EndpointConfig(tokens=3, fixed_tokens=True))
    try:
        result = measure(Target(base, Protocol.openai, "zero"), _workload(50), CTX, 2)
    finally:
        stop()
    assert {r.output_tokens for r in result.measured} == {3}
    assert all(r.error is None for r in result.measured)
