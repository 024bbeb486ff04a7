"""The Ollama adapter through ``measure()`` and ``preflight()``, over real HTTP on 127.0.0.1.

No Ollama binary can be installed on our build machines, so these tests do NOT talk to Ollama:
they talk to ``ollama_replay``, a real threaded HTTP server in this process that replays Ollama's
documented responses (docs/api.md: NDJSON streamed line by line with real pauses, a final
``done: true`` object with ``done_reason`` and ns counters, ``{"error": ...}`` inside an HTTP 200
stream, /api/version, /api/tags). What they prove is that tcobench reads that documented wire
format correctly, times it, and sends the options that make runs comparable; not that a given
Ollama release still speaks it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ollama_replay import (
    COUNTERS,
    DONE_REASON,
    ERROR_MESSAGE,
    FIRST_TOKEN_DELAY_S,
    HTTP_500_MESSAGE,
    MIDSTREAM_TOKENS,
    TOKEN_GAP_S,
    TOKENS,
    VERSION,
    OllamaReplay,
    digest_of,
    ollama_replay,
)

from tcobench.errors import EngineError
from tcobench.schemas import LoadMode, Phase, Protocol, RequestRecord, WorkloadConfig
from tcobench.tasks.load.measure import measure
from tcobench.tasks.load.record import RunContext
from tcobench.tasks.load.stream import Target, preflight

CTX = RunContext(run_id="run-ollama", date="2026-01-01", host="testhost")
PROMPTS = ("Why is the sky blue?", "Name a prime number.", "Say hi.")
NUM_CTX = 4096
MAX_TOKENS = 16
TEMPERATURE = 0.7
SEED = 1234


@pytest.fixture
def server() -> Iterator[OllamaReplay]:
    with ollama_replay() as replay:
        yield replay


def _workload(**overrides: object) -> WorkloadConfig:
    fields: dict[str, object] = {
        "prompts": PROMPTS,
        "max_tokens": MAX_TOKENS,
        "num_ctx": NUM_CTX,
        "temperature": TEMPERATURE,
        "seed": SEED,
        "warmup_requests": 0,
        "requests": 1,
        "concurrency": (1,),
        "request_timeout_s": 10.0,
    }
    return WorkloadConfig.model_validate(fields | overrides)


def _target(server: OllamaReplay, model: str, chat: bool = False) -> Target:
    return Target(base_url=server.url, protocol=Protocol.ollama, model=model, chat=chat)


def _one(server: OllamaReplay, model: str, chat: bool = False) -> RequestRecord:
    result = measure(_target(server, model, chat), _workload(), CTX, concurrency=1)
    assert result.warmup == []
    assert len(result.measured) == 1
    return result.measured[0]


# --- streams ---------------------------------------------------------------------------------


@pytest.mark.parametrize("chat", [False, True], ids=["generate", "chat"])
def test_normal_stream_is_timed_and_counted(server: OllamaReplay, chat: bool) -> None:
    row = _one(server, "normal", chat)

    assert row.error is None
    assert row.http_status == 200
    assert row.phase is Phase.measure
    assert (row.run_id, row.date, row.host) == (CTX.run_id, CTX.date, CTX.host)
    # every token line is a content chunk; the final (empty) done object is not
    assert row.chunks == len(TOKENS)
    assert len(row.itl_ns) == row.chunks - 1
    assert row.ttft_ns is not None and row.decode_ns is not None and row.e2e_ns is not None
    # the lines really arrived over time: nothing can arrive before the server wrote it
    assert row.ttft_ns >= FIRST_TOKEN_DELAY_S * 1e9 * 0.9
    assert row.decode_ns >= (len(TOKENS) - 1) * TOKEN_GAP_S * 1e9 * 0.5
    assert sum(row.itl_ns) == row.decode_ns
    assert row.ttft_ns + row.decode_ns <= row.e2e_ns
    # counters are the server's, converted to nothing (already ns and tokens)
    assert row.output_tokens == COUNTERS["eval_count"]
    assert row.prompt_tokens == COUNTERS["prompt_eval_count"]
    assert row.token_count_source == "server_counters"
    assert row.finish_reason == DONE_REASON
    assert row.server_load_ns == COUNTERS["load_duration"]
    assert row.server_prompt_eval_count == COUNTERS["prompt_eval_count"]
    assert row.server_prompt_eval_ns == COUNTERS["prompt_eval_duration"]
    assert row.server_eval_count == COUNTERS["eval_count"]
    assert row.server_eval_ns == COUNTERS["eval_duration"]
    assert row.server_total_ns == COUNTERS["total_duration"]
    assert row.counter_note is not None
    assert "prompt_eval_duration excludes cached" in row.counter_note
    assert row.cached_tokens is None  # Ollama does not say how many were cached

    (sent,) = server.generations()
    assert sent.path == ("/api/chat" if chat else "/api/generate")
    assert sent.body is not None
    if chat:
        assert sent.body["messages"] == [{"role": "user", "content": PROMPTS[0]}]
        assert "prompt" not in sent.body
    else:
        assert sent.body["prompt"] == PROMPTS[0]
        assert "messages" not in sent.body


@pytest.mark.parametrize("chat", [False, True], ids=["generate", "chat"])
def test_error_inside_a_200_stream_fails_the_row(server: OllamaReplay, chat: bool) -> None:
    row = _one(server, "midstream-error", chat)

    assert row.http_status == 200
    assert row.error is not None
    assert ERROR_MESSAGE in row.error
    assert row.chunks == MIDSTREAM_TOKENS  # what came before the error is still recorded
    # e2e runs to the failure, after the tokens that came before it
    assert row.ttft_ns is not None and row.e2e_ns is not None
    assert row.e2e_ns > row.ttft_ns
    assert row.output_tokens is None
    assert row.token_count_source == "none"


def test_missing_counters_are_none_not_a_crash(server: OllamaReplay) -> None:
    row = _one(server, "missing-metrics")

    assert row.error is None
    assert row.chunks == len(TOKENS)
    assert row.finish_reason == DONE_REASON
    # only eval_count was sent
    assert row.server_eval_count == COUNTERS["eval_count"]
    assert row.output_tokens == COUNTERS["eval_count"]
    assert row.token_count_source == "server_counters"
    assert row.server_eval_ns is None
    assert row.server_prompt_eval_ns is None
    assert row.server_prompt_eval_count is None
    assert row.server_load_ns is None
    assert row.server_total_ns is None
    assert row.prompt_tokens is None


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("truncated", "truncated"),  # chunked body cut off: the transport notices
        ("truncated-close", "malformed"),  # close-delimited body: the half line reaches the parser
    ],
)
def test_truncated_stream_fails_the_row(server: OllamaReplay, model: str, expected: str) -> None:
    row = _one(server, model)

    assert row.http_status == 200
    assert row.error is not None
    assert expected in row.error.lower()
    assert row.chunks == MIDSTREAM_TOKENS
    assert row.ttft_ns is not None and row.e2e_ns is not None
    assert row.e2e_ns > row.ttft_ns
    assert row.output_tokens is None


def test_http_500_fails_the_row_with_the_body(server: OllamaReplay) -> None:
    row = _one(server, "http-500")

    assert row.http_status == 500
    assert row.error is not None
    assert row.error.startswith("HTTP 500")
    assert HTTP_500_MESSAGE in row.error
    assert row.chunks == 0
    assert row.ttft_ns is None
    assert row.itl_ns == []


# --- what is sent ------------------------------------------------------------------------------


def test_every_request_sends_the_options_and_its_seed(server: OllamaReplay) -> None:
    workload = _workload(warmup_requests=2, requests=4)
    result = measure(_target(server, "normal"), workload, CTX, concurrency=1)

    assert [r.phase for r in result.warmup] == [Phase.warmup, Phase.warmup]
    assert [r.request_index for r in result.warmup] == [0, 1]
    assert [r.phase for r in result.measured] == [Phase.measure] * 4
    assert [r.request_index for r in result.measured] == [0, 1, 2, 3]
    assert [r.seed for r in result.measured] == [SEED + i for i in range(4)]
    assert [r.prompt_index for r in result.measured] == [0, 1, 2, 0]
    assert all(r.error is None for r in result.warmup + result.measured)
    # measured requests are disjoint from the warm-up ones in seed, so they never replay a warm-up
    assert not {r.seed for r in result.warmup} & {r.seed for r in result.measured}

    sent = server.generations()
    assert len(sent) == 6
    for request in sent:
        assert request.body is not None
        assert request.body["model"] == "normal"
        assert request.body["stream"] is True
        options = request.body["options"]
        assert options["num_ctx"] == NUM_CTX
        assert options["num_predict"] == MAX_TOKENS
        assert options["temperature"] == TEMPERATURE
    by_seed = {r.body["options"]["seed"]: r.body for r in sent if r.body is not None}
    for row in result.warmup + result.measured:
        assert by_seed[row.seed]["prompt"] == PROMPTS[row.prompt_index]


# --- load shapes -------------------------------------------------------------------------------


def test_closed_loop_keeps_two_in_flight(server: OllamaReplay) -> None:
    workload = _workload(requests=6, concurrency=(2,))
    result = measure(_target(server, "normal"), workload, CTX, concurrency=2)

    assert [r.request_index for r in result.measured] == list(range(6))
    assert all(r.error is None and r.output_tokens == COUNTERS["eval_count"] for r in result.measured)
    assert server.max_streaming == 2
    assert result.measure_start_ns is not None and result.measure_end_ns is not None
    assert result.measure_start_ns < result.measure_end_ns


def test_poisson_sends_the_requested_number(server: OllamaReplay) -> None:
    workload = _workload(requests=8, mode=LoadMode.poisson, rate=50.0, concurrency=(4,))
    result = measure(_target(server, "normal", chat=True), workload, CTX, concurrency=4)

    assert [r.request_index for r in result.measured] == list(range(8))
    assert [r.seed for r in result.measured] == [SEED + i for i in range(8)]
    assert all(r.error is None and r.phase is Phase.measure for r in result.measured)
    assert len(server.generations()) == 8
    assert server.max_streaming <= 4


# --- preflight ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "listed"),
    [("normal", "normal:latest"), ("llama3.2", "llama3.2:latest"), ("llama3.2:latest", "llama3.2:latest")],
)
def test_preflight_reports_version_and_digest(server: OllamaReplay, model: str, listed: str) -> None:
    info = preflight(_target(server, model))

    assert info.name == "ollama"
    assert info.version == VERSION
    assert info.model_digest == digest_of(listed)
    assert [r.path for r in server.received] == ["/api/version", "/api/tags"]


def test_preflight_names_an_unknown_model_and_the_available_ones(server: OllamaReplay) -> None:
    with pytest.raises(EngineError) as caught:
        preflight(_target(server, "mistral:7b"))

    message = str(caught.value)
    assert "'mistral:7b'" in message
    assert server.url in message
    assert "llama3.2:latest" in message
    assert "normal:latest" in message


def test_preflight_when_nothing_listens() -> None:
    with ollama_replay() as replay:
        url = replay.url
    # the port is closed now: nothing answers there
    with pytest.raises(EngineError, match="cannot reach"):
        preflight(Target(base_url=url, protocol=Protocol.ollama, model="normal", connect_timeout_s=1.0))
