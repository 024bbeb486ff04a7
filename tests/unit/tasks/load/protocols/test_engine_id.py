"""Engine identity behind an OpenAI-compatible endpoint (tasks/load/protocols/engine_id.py), from recorded answers.

SGLang and TensorRT-LLM cannot run on this machine (both need CUDA-only packages), so their answers here are
RECORDED FROM THE DOCUMENTED CONTRACT in their own source, not captured from a running server:
- SGLang: ``ModelCard.owned_by = "sglang"`` (sgl-project/sglang python/sglang/srt/entrypoints/openai/protocol.py);
  ``GET /get_server_info`` returns the server arguments plus ``"version": __version__`` (sgl-project/sglang
  python/sglang/srt/entrypoints/http_server.py, commit 0025436eab0556737d615b36a4dd3e1e26e82f3d, get_server_info);
  Prometheus names start with ``sglang:`` (with --enable-metrics).
- TensorRT-LLM (trtllm-serve): ``ModelCard.owned_by = "tensorrt_llm"`` (NVIDIA/TensorRT-LLM
  tensorrt_llm/serve/openai_protocol.py); ``GET /version`` returns ``{"version": VERSION}`` and ``GET /metrics``
  a JSON list of iteration statistics (tensorrt_llm/serve/openai_server.py; docs/source/commands/trtllm-serve.rst).
vLLM's and llama.cpp's answers are checked against the real servers in tests/integration/test_vllm.py and
tests/integration/test_engine_identity.py; the vLLM answers below are the ones the real vLLM 0.32.0 gave here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tcobench.tasks.load.protocols.engine_id import Detected, detect_engine, engine_from_metrics

BASE = "http://127.0.0.1:9"
Routes = dict[str, Callable[[httpx.Request], httpx.Response]]


def detect(routes: Routes, entry: dict[str, Any]) -> tuple[Detected, list[str]]:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        route = routes.get(request.url.path)
        return route(request) if route else httpx.Response(404, json={"detail": "Not Found"})

    async def go() -> Detected:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await detect_engine(client, BASE, entry)

    return asyncio.run(go()), seen


def json_answer(body: Any) -> Callable[[httpx.Request], httpx.Response]:
    return lambda _: httpx.Response(200, json=body)


VLLM_ENTRY = {"id": "tiny", "object": "model", "owned_by": "vllm", "root": "/m", "parent": None, "max_model_len": 2048}
SGLANG_ENTRY = {
    "id": "meta-llama/Llama-3.1-8B-Instruct",
    "object": "model",
    "created": 1,
    "owned_by": "sglang",
    "root": "meta-llama/Llama-3.1-8B-Instruct",
    "max_model_len": 131072,
}
TRTLLM_ENTRY = {"id": "TinyLlama-1.1B-Chat-v1.0", "object": "model", "created": 1, "owned_by": "tensorrt_llm"}


def test_vllm_from_owned_by_and_version() -> None:
    found, _ = detect({"/version": json_answer({"version": "0.32.0"})}, VLLM_ENTRY)
    assert found == Detected("vllm", "0.32.0", "/v1/models owned_by=vllm; version /version")


def test_sglang_from_owned_by_and_get_server_info() -> None:
    info = {"model_path": "meta-llama/Llama-3.1-8B-Instruct", "tp_size": 8, "version": "0.5.23", "internal_states": []}
    found, seen = detect({"/get_server_info": json_answer(info)}, SGLANG_ENTRY)
    assert found == Detected("sglang", "0.5.23", "/v1/models owned_by=sglang; version /get_server_info")
    assert "/version" not in seen  # SGLang's version is where SGLang serves it


def test_tensorrt_llm_from_owned_by_and_version() -> None:
    stats = [{"gpuMemUsage": 1, "iter": 3, "inflightBatchingStats": {"numScheduledRequests": 1}}]
    routes = {"/version": json_answer({"version": "1.2.0"}), "/metrics": json_answer(stats)}
    found, _ = detect(routes, TRTLLM_ENTRY)
    assert found == Detected("tensorrt-llm", "1.2.0", "/v1/models owned_by=tensorrt_llm; version /version")


def test_llama_cpp_from_props_before_anything_else() -> None:
    props = {"build_info": "b6000-abcdef0", "default_generation_settings": {"n_ctx": 4096}}
    found, seen = detect({"/props": json_answer(props)}, {"id": "m", "owned_by": "llamacpp"})
    assert found == Detected("llama.cpp", "b6000-abcdef0", "/props build_info", 4096)
    assert seen == ["/props"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('# HELP vllm:num_requests_running x\nvllm:num_requests_running{engine="0"} 0.0\n', "vllm"),
        ('sglang:num_running_reqs{model_name="m"} 1.0\n', "sglang"),
        ("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.0\n", None),
    ],
)
def test_metric_prefixes(text: str, name: str | None) -> None:
    assert engine_from_metrics(text) == name


def test_behind_a_proxy_that_rewrites_owned_by_the_metrics_prefix_decides() -> None:
    metrics = 'sglang:num_running_reqs{model_name="m"} 1.0\n'
    routes = {
        "/metrics": lambda _: httpx.Response(200, text=metrics),
        "/get_server_info": json_answer({"version": "0.5.23"}),
    }
    found, _ = detect(routes, {"id": "m", "owned_by": "openai"})
    assert (found.name, found.version) == ("sglang", "0.5.23")
    assert found.detected_from.startswith("/metrics sglang: prefix")


def test_nothing_recognisable_stays_openai_compatible() -> None:
    found, _ = detect({"/version": json_answer({"version": "9.9"})}, {"id": "m", "owned_by": "system"})
    assert (found.name, found.version) == ("openai-compatible", "9.9")
    assert found.detected_from.startswith("nothing recognisable")
