"""Ollama adapter: NDJSON line parsing, request bodies, and preflight over httpx.MockTransport.

Lines follow Ollama's docs/api.md (durations in ns; any counter of the final object may be missing).
The adapter's behaviour over a real HTTP stream is in tests/integration/test_ollama_adapter.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from tcobench.errors import EngineError
from tcobench.schemas import Protocol, WorkloadConfig
from tcobench.tasks.load.protocols import EngineInfo, LineEvent, adapter_for
from tcobench.tasks.load.protocols.ollama import CACHE_NOTE, OllamaAdapter
from tcobench.tasks.workload import RequestInput


def given(prompt: str, seed: int, max_tokens: int = 64) -> RequestInput:
    """What the workload plan hands an adapter for a one-prompt request."""
    return RequestInput(prompt, [{"role": "user", "content": prompt}], max_tokens, seed, None)


ADAPTER = adapter_for(Protocol.ollama)
BASE = "http://ollama.test:11434"
FINAL = {
    "model": "llama3.2",
    "created_at": "2026-01-01T00:00:00Z",
    "done": True,
    "done_reason": "length",
    "total_duration": 5_043_500_667,
    "load_duration": 5_025_959,
    "prompt_eval_count": 26,
    "prompt_eval_duration": 325_953_000,
    "eval_count": 290,
    "eval_duration": 4_709_213_000,
}


def line(obj: Any) -> str:
    return json.dumps(obj) + "\n"


def parse(text: str, chat: bool = False) -> LineEvent:
    event = ADAPTER.parse_line(text, chat)
    assert event is not None
    return event


def test_registered_under_ollama() -> None:
    assert isinstance(ADAPTER, OllamaAdapter)
    assert ADAPTER.protocol is Protocol.ollama
    assert ADAPTER.path(chat=True) == "/api/chat"
    assert ADAPTER.path(chat=False) == "/api/generate"


# --- parse_line ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n", "   \r\n"])
def test_blank_lines_carry_nothing(text: str) -> None:
    assert ADAPTER.parse_line(text, chat=False) is None


def test_generate_token_line() -> None:
    assert parse(line({"model": "m", "response": "The", "done": False})) == LineEvent(content=True, text="The")


def test_chat_token_line() -> None:
    text = line({"model": "m", "message": {"role": "assistant", "content": "The"}, "done": False})
    assert parse(text, chat=True) == LineEvent(content=True, text="The")
    # read as generate, a chat line carries no "response"
    assert parse(text, chat=False).content is False


@pytest.mark.parametrize(
    ("obj", "chat"),
    [
        ({"response": "", "thinking": "hmm", "done": False}, False),
        ({"message": {"role": "assistant", "content": "", "thinking": "hmm"}, "done": False}, True),
    ],
)
def test_thinking_is_content(obj: dict[str, Any], chat: bool) -> None:
    assert parse(line(obj), chat).content is True


@pytest.mark.parametrize(
    ("obj", "chat"),
    [
        ({"response": "", "done": False}, False),
        ({"message": {"role": "assistant", "content": ""}, "done": False}, True),
        ({"message": None, "done": False}, True),
        ({"done": False}, False),
    ],
)
def test_empty_lines_are_not_content(obj: dict[str, Any], chat: bool) -> None:
    assert parse(line(obj), chat) == LineEvent()


@pytest.mark.parametrize("chat", [False, True])
def test_final_object_counters(chat: bool) -> None:
    final = FINAL | ({"message": {"role": "assistant", "content": ""}} if chat else {"response": "", "context": [1]})
    event = parse(line(final), chat)
    assert event.done is True
    assert event.content is False
    assert event.error is None
    assert event.fields == {
        "load_ns": 5_025_959,
        "prompt_eval_count": 26,
        "prompt_eval_ns": 325_953_000,
        "eval_count": 290,
        "eval_ns": 4_709_213_000,
        "total_ns": 5_043_500_667,
        "finish_reason": "length",
        "note": CACHE_NOTE,
        "output_tokens": 290,
        "token_count_source": "server_counters",
        "prompt_tokens": 26,
    }


def test_cache_note_names_the_rule() -> None:
    assert "prompt_eval_duration excludes cached" in CACHE_NOTE
    assert "prompt_eval_count includes" in CACHE_NOTE


def test_final_object_with_its_last_token() -> None:
    event = parse(line(FINAL | {"response": "."}))
    assert event.done is True
    assert event.content is True


def test_final_object_without_counters() -> None:
    event = parse(line({"model": "m", "response": "", "done": True}))
    assert event.done is True
    assert event.fields == {"finish_reason": None, "note": CACHE_NOTE}


def test_final_object_with_some_counters_missing() -> None:
    event = parse(line({"response": "", "done": True, "done_reason": "stop", "eval_count": 3}))
    assert event.fields["eval_count"] == 3
    assert event.fields["output_tokens"] == 3
    assert event.fields["token_count_source"] == "server_counters"
    for missing in ("load_ns", "prompt_eval_ns", "eval_ns", "total_ns", "prompt_eval_count", "prompt_tokens"):
        assert missing not in event.fields


@pytest.mark.parametrize("value", [None, "12", 1.5])
def test_counters_that_are_not_integers_are_dropped(value: Any) -> None:
    event = parse(line({"response": "", "done": True, "eval_count": value, "eval_duration": value}))
    assert "eval_count" not in event.fields
    assert "eval_ns" not in event.fields
    assert "token_count_source" not in event.fields


def test_done_false_is_not_the_end() -> None:
    assert parse(line({"response": "x", "done": False, "eval_count": 9})).fields == {}


@pytest.mark.parametrize("chat", [False, True])
def test_error_object_in_the_stream(chat: bool) -> None:
    event = parse(line({"error": "an error was encountered while running the model"}), chat)
    assert event.error is not None
    assert "an error was encountered while running the model" in event.error
    assert event.done is False


@pytest.mark.parametrize("text", ['{"model": "m", "response": "Th', "not json", "{"])
def test_malformed_line(text: str) -> None:
    event = parse(text)
    assert event.error is not None
    assert "malformed" in event.error
    assert "truncated" in event.error


@pytest.mark.parametrize("text", ["[1, 2]", '"done"', "42", "null"])
def test_json_that_is_not_an_object(text: str) -> None:
    event = parse(text)
    assert event.error is not None
    assert "not a JSON object" in event.error


# --- payload -------------------------------------------------------------------------------------


def workload(**overrides: Any) -> WorkloadConfig:
    return WorkloadConfig.model_validate({"max_tokens": 32, "temperature": 0.5, "num_ctx": 8192} | overrides)


def test_generate_payload() -> None:
    body = ADAPTER.payload("llama3.2", given("Say hi.", 7, max_tokens=32), workload(), chat=False)
    assert body == {
        "model": "llama3.2",
        "stream": True,
        "options": {"num_ctx": 8192, "num_predict": 32, "seed": 7, "temperature": 0.5},
        "prompt": "Say hi.",
    }


def test_chat_payload() -> None:
    body = ADAPTER.payload("llama3.2", given("Say hi.", 7, max_tokens=32), workload(), chat=True)
    assert body == {
        "model": "llama3.2",
        "stream": True,
        "options": {"num_ctx": 8192, "num_predict": 32, "seed": 7, "temperature": 0.5},
        "messages": [{"role": "user", "content": "Say hi."}],
    }


def test_temperature_zero_is_still_sent() -> None:
    body = ADAPTER.payload("m", given("p", 0), workload(temperature=0.0), chat=False)
    assert body["options"]["temperature"] == 0.0
    assert body["options"]["seed"] == 0


@pytest.mark.parametrize("chat", [False, True])
def test_ignore_eos_is_not_an_ollama_option(chat: bool) -> None:
    body = ADAPTER.payload("m", given("p", 1), workload(ignore_eos=True), chat=chat)
    assert "ignore_eos" not in body
    assert "ignore_eos" not in body["options"]


# --- preflight -----------------------------------------------------------------------------------


def tags(*names: str) -> dict[str, Any]:
    return {"models": [{"name": n, "model": n, "digest": f"digest-of-{n}", "size": 1} for n in names]}


def run_preflight(version: httpx.Response, listing: httpx.Response, model: str) -> EngineInfo:
    def handler(request: httpx.Request) -> httpx.Response:
        return {"/api/version": version, "/api/tags": listing}.get(request.url.path, httpx.Response(404))

    async def go() -> EngineInfo:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await ADAPTER.preflight(client, BASE, model)

    return asyncio.run(go())


VERSION_OK = httpx.Response(200, json={"version": "0.12.6"})


@pytest.mark.parametrize(
    ("model", "listed"),
    [("llama3.2", "llama3.2:latest"), ("llama3.2:latest", "llama3.2:latest"), ("qwen3:8b", "qwen3:8b")],
)
def test_preflight_version_and_digest(model: str, listed: str) -> None:
    info = run_preflight(VERSION_OK, httpx.Response(200, json=tags("llama3.2:latest", "qwen3:8b")), model)
    assert info == EngineInfo(name="ollama", version="0.12.6", model_digest=f"digest-of-{listed}")


def test_preflight_unknown_model_lists_the_available_ones() -> None:
    with pytest.raises(EngineError) as caught:
        run_preflight(VERSION_OK, httpx.Response(200, json=tags("qwen3:8b", "llama3.2:latest")), "mistral")
    message = str(caught.value)
    assert "'mistral'" in message
    assert BASE in message
    assert "llama3.2:latest, qwen3:8b" in message


def test_preflight_tags_failure_reads_as_no_models() -> None:
    with pytest.raises(EngineError, match="it has: none"):
        run_preflight(VERSION_OK, httpx.Response(500, json={"error": "boom"}), "llama3.2")


@pytest.mark.parametrize(
    "version",
    [httpx.Response(404, text="404 page not found"), httpx.Response(200, json={"name": "x"})],
    ids=["404", "no-version"],
)
def test_preflight_of_a_server_that_is_not_ollama(version: httpx.Response) -> None:
    with pytest.raises(EngineError, match=r"/api/version answered HTTP \d+; is this an Ollama server\?"):
        run_preflight(version, httpx.Response(200, json=tags("llama3.2:latest")), "llama3.2")


def test_request_body_merges_extra_options_and_adds_fields() -> None:
    adapter = adapter_for(Protocol.ollama)
    workload = WorkloadConfig(extra_body={"options": {"num_gpu": 99}, "keep_alive": "10m"})
    body = adapter.request_body("m", given("hi", 3), workload, chat=True)
    assert body["options"] == {"num_ctx": 2048, "num_predict": 64, "seed": 3, "temperature": 0.0, "num_gpu": 99}
    assert body["keep_alive"] == "10m" and body["messages"] == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("chat", [False, True])
def test_every_field_and_option_the_payload_sets_is_reserved(chat: bool) -> None:
    from tcobench.schemas.config import OLLAMA_OPTIONS, REQUEST_FIELDS

    body = adapter_for(Protocol.ollama).payload("m", given("hi", 1), WorkloadConfig(), chat)
    assert set(body) - {"options"} <= REQUEST_FIELDS and set(body["options"]) == OLLAMA_OPTIONS
