"""Engine identity against the real llama.cpp server (the embedded llama-server): /props decides, before owned_by.

vLLM's identity is checked against the real vLLM in test_vllm.py; SGLang's and TensorRT-LLM's against recorded
answers of their documented contract in tests/unit/tasks/load/protocols/test_engine_id.py.
"""

from __future__ import annotations

import json

import pytest

from tcobench.schemas import BenchmarkConfig
from tcobench.tasks.engine import RunningEngine, target_of
from tcobench.tasks.load.stream import preflight


@pytest.mark.engine
def test_llama_server_is_detected_as_llama_cpp(llama_server: RunningEngine) -> None:
    body = {"engine": {"kind": "endpoint", "url": llama_server.base_url}, "model": {"name": "gemma-3-270m-q4_k_m"}}
    config = BenchmarkConfig.model_validate_json(json.dumps(body))
    info = preflight(target_of(config, llama_server.base_url))
    assert info.name == "llama.cpp"
    assert info.detected_from == "/props build_info"
    assert info.version and info.version != "unknown"
    assert info.context_tokens is not None and info.context_tokens > 0
