"""OpenAI-compatible adapter: SSE line parsing, request bodies, and preflight over httpx.MockTransport."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tcobench.errors import EngineError
from tcobench.schemas import Protocol, WorkloadConfig
from tcobench.tasks.load.protocols import EngineInfo, LineEvent, adapter_for
from tcobench.tasks.load.protocols.openai import OpenAIAdapter
from tcobench.tasks.workload import RequestInput


def given(prompt: str, seed: int, max_tokens: int = 64) -> RequestInput:
    """What the workload plan hands an adapter for a one-prompt request."""
    return RequestInput(prompt, [{"role": "user", "content": prompt}], max_tokens, seed, None)


ADAPTER = adapter_for(Protocol.openai)
BASE = "http://engine.test"


def data(obj: Any) -> str:
    return f"data: {json.dumps(obj)}"


def parse(line: str, chat: bool = False) -> LineEvent:
    event = ADAPTER.parse_line(line, chat)
    assert event is not None
    return event


def test_registered_under_openai() -> None:
    assert isinstance(ADAPTER, OpenAIAdapter)
    assert ADAPTER.protocol is Protocol.openai
    assert ADAPTER.path(chat=True) == "/v1/chat/completions"
    assert ADAPTER.path(chat=False) == "/v1/completions"


# --- parse_line ----------------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["", "   ", ": keep-alive", ":", "event: message", "id: 7", "retry: 100"])
def test_lines_that_carry_nothing(line: str) -> None:
    assert ADAPTER.parse_line(line, chat=False) is None


@pytest.mark.parametrize("line", ["data: [DONE]", "data:[DONE]", "data: [DONE]\r\n"])
def test_done_marker(line: str) -> None:
    assert parse(line) == LineEvent(done=True)


def test_completion_text_chunk_is_content() -> None:
    event = parse(data({"choices": [{"index": 0, "text": " Paris", "finish_reason": None}]}))
    assert event == LineEvent(content=True, text=" Paris")


def test_chat_delta_chunk_is_content() -> None:
    line = data({"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]})
    assert parse(line, chat=True).content is True
    # the same chunk read as a completion carries no text
    assert parse(line, chat=False).content is False


def test_chat_reasoning_delta_is_content() -> None:
    line = data({"choices": [{"delta": {"reasoning_content": "Let me think"}}]})
    assert parse(line, chat=True).content is True


@pytest.mark.parametrize(
    "chunk",
    [
        {"choices": [{"delta": {"role": "assistant"}}]},  # chat's opening chunk
        {"choices": [{"delta": {"content": ""}}]},
        {"choices": []},
        {"choices": None},
        {},
    ],
)
def test_chunks_without_text_are_not_content(chunk: dict[str, Any]) -> None:
    event = parse(data(chunk), chat=True)
    assert event.content is False
    assert event.error is None
    assert event.done is False


def test_finish_reason() -> None:
    event = parse(data({"choices": [{"text": "", "finish_reason": "length"}]}))
    assert event.content is False
    assert event.fields == {"finish_reason": "length"}


def test_usage_chunk() -> None:
    usage = {
        "prompt_tokens": 12,
        "completion_tokens": 64,
        "total_tokens": 76,
        "prompt_tokens_details": {"cached_tokens": 8},
    }
    event = parse(data({"choices": [], "usage": usage}))
    assert event.content is False
    assert event.fields == {
        "prompt_tokens": 12,
        "output_tokens": 64,
        "cached_tokens": 8,
        "token_count_source": "usage",
    }


def test_usage_null_is_ignored() -> None:
    event = parse(data({"choices": [{"text": "a"}], "usage": None}))
    assert event.fields == {}


def test_llama_cpp_timings_are_converted_to_ns() -> None:
    timings = {"prompt_n": 10, "prompt_ms": 12.5, "predicted_n": 64, "predicted_ms": 800.25, "cache_n": 3}
    event = parse(data({"choices": [{"text": "", "finish_reason": "stop"}], "timings": timings}))
    assert event.fields == {
        "finish_reason": "stop",
        "prompt_eval_count": 10,
        "prompt_eval_ns": 12_500_000,
        "eval_count": 64,
        "eval_ns": 800_250_000,
        "cached_tokens": 3,
    }
    # timings alone are counters, not a token count source
    assert "token_count_source" not in event.fields
    assert "output_tokens" not in event.fields


def test_timings_with_missing_keys_give_none() -> None:
    event = parse(data({"choices": [], "timings": {"predicted_n": 5}}))
    assert event.fields["eval_count"] == 5
    assert event.fields["eval_ns"] is None
    assert event.fields["prompt_eval_ns"] is None


def test_usage_wins_over_timings() -> None:
    usage = {"prompt_tokens": 13, "completion_tokens": 64, "prompt_tokens_details": {"cached_tokens": 5}}
    timings = {"prompt_n": 10, "prompt_ms": 1.0, "predicted_n": 63, "predicted_ms": 2.0, "cache_n": 3}
    event = parse(data({"choices": [], "usage": usage, "timings": timings}))
    assert event.fields["cached_tokens"] == 5
    assert event.fields["output_tokens"] == 64
    assert event.fields["prompt_tokens"] == 13
    assert event.fields["token_count_source"] == "usage"
    # the timings' own counters stay
    assert event.fields["eval_count"] == 63
    assert event.fields["prompt_eval_ns"] == 1_000_000


def test_usage_without_cache_details_keeps_the_timings_cache_count() -> None:
    usage = {"prompt_tokens": 13, "completion_tokens": 64}
    timings = {"prompt_n": 10, "prompt_ms": 1.0, "predicted_n": 64, "predicted_ms": 2.0, "cache_n": 3}
    event = parse(data({"choices": [], "usage": usage, "timings": timings}))
    assert event.fields["cached_tokens"] == 3
    assert event.fields["output_tokens"] == 64


@pytest.mark.parametrize(
    ("chunk", "message"),
    [
        ({"error": {"message": "context overflow", "type": "invalid_request_error"}}, "context overflow"),
        ({"error": {"code": 500}}, "{'code': 500}"),
        ({"error": "backend died"}, "backend died"),
    ],
)
def test_error_object_in_the_stream(chunk: dict[str, Any], message: str) -> None:
    event = parse(data(chunk))
    assert event.error is not None
    assert message in event.error
    assert event.content is False


@pytest.mark.parametrize("line", ['data: {"choices": [', "data: not json", "data: "])
def test_malformed_json(line: str) -> None:
    event = parse(line)
    assert event.error is not None
    assert "malformed" in event.error


@pytest.mark.parametrize("line", ["data: [1, 2]", 'data: "text"', "data: 3"])
def test_json_that_is_not_an_object(line: str) -> None:
    event = parse(line)
    assert event.error is not None
    assert "not a JSON object" in event.error


# --- payload -------------------------------------------------------------------------------------


def workload(**overrides: Any) -> WorkloadConfig:
    return WorkloadConfig.model_validate({"max_tokens": 32, "temperature": 0.5, "num_ctx": 1024} | overrides)


def test_completion_payload() -> None:
    body = ADAPTER.payload("m1", given("Say hi.", 7, max_tokens=32), workload(), chat=False)
    assert body == {
        "model": "m1",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 32,
        "temperature": 0.5,
        "seed": 7,
        "prompt": "Say hi.",
    }


def test_chat_payload() -> None:
    body = ADAPTER.payload("m1", given("Say hi.", 7, max_tokens=32), workload(), chat=True)
    assert body["messages"] == [{"role": "user", "content": "Say hi."}]
    assert "prompt" not in body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert (body["max_tokens"], body["temperature"], body["seed"]) == (32, 0.5, 7)


@pytest.mark.parametrize("chat", [False, True])
def test_ignore_eos_only_when_set(chat: bool) -> None:
    assert "ignore_eos" not in ADAPTER.payload("m1", given("p", 1), workload(), chat=chat)
    assert ADAPTER.payload("m1", given("p", 1), workload(ignore_eos=True), chat=chat)["ignore_eos"] is True


# --- preflight -----------------------------------------------------------------------------------

Routes = dict[str, Callable[[httpx.Request], httpx.Response]]


def models(*ids: str) -> Callable[[httpx.Request], httpx.Response]:
    return lambda _: httpx.Response(200, json={"object": "list", "data": [{"id": i, "object": "model"} for i in ids]})


def run_preflight(routes: Routes, model: str = "m1") -> tuple[EngineInfo, list[str]]:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        route = routes.get(request.url.path)
        return route(request) if route else httpx.Response(404, json={"error": "not found"})

    async def go() -> EngineInfo:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await ADAPTER.preflight(client, BASE, model)

    return asyncio.run(go()), seen


def test_preflight_llama_cpp_from_props_build_info() -> None:
    props = {"build_info": "b6000-abcdef0", "total_slots": 2}
    info, seen = run_preflight({"/v1/models": models("m1"), "/props": lambda _: httpx.Response(200, json=props)})
    assert info == EngineInfo(
        name="llama.cpp", version="b6000-abcdef0", model_digest=None, detected_from="/props build_info"
    )
    assert seen == ["/v1/models", "/props"]


def test_preflight_falls_back_to_version() -> None:
    info, seen = run_preflight(
        {"/v1/models": models("m1"), "/version": lambda _: httpx.Response(200, json={"version": "0.9.2"})}
    )
    assert (info.name, info.version) == ("openai-compatible", "0.9.2")
    assert info.detected_from is not None and info.detected_from.endswith("; version /version")
    assert seen == ["/v1/models", "/props", "/metrics", "/version"]


def test_preflight_props_without_build_info_is_not_llama_cpp() -> None:
    info, _ = run_preflight({"/v1/models": models("m1"), "/props": lambda _: httpx.Response(200, json={"x": 1})})
    assert (info.name, info.version) == ("openai-compatible", "unknown")


def test_preflight_unknown_model_lists_the_served_ones() -> None:
    with pytest.raises(EngineError) as caught:
        run_preflight({"/v1/models": models("alpha", "beta")}, model="gamma")
    message = str(caught.value)
    assert "'gamma'" in message
    assert BASE in message
    assert "alpha, beta" in message


def test_preflight_no_models_served() -> None:
    with pytest.raises(EngineError, match="it serves: none"):
        run_preflight({"/v1/models": models()})


@pytest.mark.parametrize(
    "answer",
    [httpx.Response(404, json={"error": "nope"}), httpx.Response(200, text="<html>hi</html>")],
    ids=["404", "not-json"],
)
def test_preflight_of_a_server_without_v1_models(answer: httpx.Response) -> None:
    with pytest.raises(EngineError, match=r"/v1/models answered HTTP"):
        run_preflight({"/v1/models": lambda _: answer})


def test_preflight_connection_failure_is_an_engine_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(EngineError, match=r"cannot reach http://engine\.test/v1/models"):
        run_preflight({"/v1/models": refuse})


def test_request_body_adds_extra_body_fields() -> None:
    workload = WorkloadConfig(extra_body={"samplers": ["temperature"], "top_k": 1})
    body = ADAPTER.request_body("m", given("hi", 7), workload, chat=False)
    assert body["samplers"] == ["temperature"] and body["top_k"] == 1
    assert (body["prompt"], body["seed"], body["max_tokens"], body["stream"]) == ("hi", 7, 64, True)
    assert ADAPTER.request_body("m", given("hi", 7), WorkloadConfig(), False) == ADAPTER.payload(
        "m", given("hi", 7), WorkloadConfig(), False
    )


@pytest.mark.parametrize("chat", [False, True])
def test_every_field_the_payload_sets_is_reserved_from_extra_body(chat: bool) -> None:
    """REQUEST_FIELDS is what the config refuses in extra_body: it must cover every key this adapter writes."""
    from tcobench.schemas.config import REQUEST_FIELDS

    body = ADAPTER.payload("m", given("hi", 1), WorkloadConfig(ignore_eos=True), chat)
    assert set(body) <= REQUEST_FIELDS
