"""Preparing an Ollama container's model, over real HTTP on 127.0.0.1: pull with progress, load, /api/ps.

No Ollama binary can be installed on our build machines, so, like test_ollama_adapter, these tests talk to
``ollama_replay``, which replays Ollama's documented /api/pull, /api/generate (load) and /api/ps answers.
They prove tcobench reads that documented format and flags CPU offload; not that a given release still
speaks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from ollama_replay import PS_SIZE, PULL_ERROR, PULL_STEPS, PULL_TOTAL, OllamaReplay, ollama_replay

from tcobench.errors import EngineError
from tcobench.schemas import BenchmarkConfig, ContainerEngine
from tcobench.tasks.engine import EngineEvent, LaunchOptions
from tcobench.tasks.engine.ollama_api import load_model, loaded_model, pull_model
from tcobench.tasks.engine.recipes import recipe_for


@pytest.fixture
def server() -> Iterator[OllamaReplay]:
    with ollama_replay() as replay:
        yield replay


def _config(model: str, num_ctx: int = 4096) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate_json(
        json.dumps(
            {
                "engine": {
                    "kind": "container",
                    "protocol": "ollama",
                    "container": {"image": "tcobench/ollama-cuda:0.32.0", "engine": "ollama"},
                },
                "model": {"name": model},
                "workload": {"num_ctx": num_ctx},
            }
        )
    )


def test_pull_reports_byte_progress(server: OllamaReplay) -> None:
    events: list[EngineEvent] = []
    pull_model(server.url, "llama3.2", events.append)
    sized = [e for e in events if e.total]
    assert [e.completed for e in sized] == [PULL_TOTAL * i // PULL_STEPS for i in range(1, PULL_STEPS + 1)]
    assert all(e.total == PULL_TOTAL for e in sized) and events[-1].message == "pull llama3.2: success"
    assert server.received[-1].body == {"model": "llama3.2", "stream": True}


def test_pull_of_an_unknown_model_fails_naming_it(server: OllamaReplay) -> None:
    with pytest.raises(EngineError) as info:
        pull_model(server.url, "no-such-model")
    assert "'no-such-model'" in str(info.value) and PULL_ERROR in str(info.value) and server.url in str(info.value)


def test_load_then_ps(server: OllamaReplay) -> None:
    assert loaded_model(server.url, "llama3.2") is None
    load_model(server.url, "llama3.2", 8192, "-1")
    loaded = loaded_model(server.url, "llama3.2")
    assert loaded is not None and loaded.size == loaded.size_vram == PS_SIZE and not loaded.cpu_offload
    assert loaded.context_length == 8192
    assert server.generations()[-1].body == {
        "model": "llama3.2",
        "prompt": "",
        "stream": False,
        "keep_alive": "-1",
        "options": {"num_ctx": 8192},
    }


def test_recipe_prepares_the_model_and_flags_cpu_offload(server: OllamaReplay) -> None:
    """What the container launcher does once Ollama is healthy: pull, load with num_ctx, read /api/ps."""
    events: list[EngineEvent] = []
    recipe = recipe_for(ContainerEngine.ollama)
    settings = recipe.prepare(_config("offload"), server.url, LaunchOptions("batch", events.append))
    assert settings == {
        "ps_size_bytes": PS_SIZE,
        "ps_size_vram_bytes": PS_SIZE // 2,
        "ps_context_length": 4096,
        "cpu_offload": True,
    }
    (warning,) = [e for e in events if e.warning]
    assert "offload is partly on the CPU" in warning.message and "(50%)" in warning.message
    assert [r.path for r in server.received if r.method == "POST"] == ["/api/pull", "/api/generate"]
    plan = recipe.plan(_config("offload"), 1, "127.0.0.1", 1, Path("/nonexistent"), local=True)  # no model cache
    info = recipe.identify(_config("offload"), server.url, {}, plan)
    assert info.name == "ollama" and info.model_digest and info.version


def test_recipe_without_pull(server: OllamaReplay) -> None:
    config = BenchmarkConfig.model_validate_json(
        json.dumps(
            {
                "engine": {
                    "kind": "container",
                    "protocol": "ollama",
                    "container": {"image": "i", "engine": "ollama", "ollama": {"pull": False}},
                },
                "model": {"name": "llama3.2"},
            }
        )
    )
    settings = recipe_for(ContainerEngine.ollama).prepare(config, server.url, LaunchOptions())
    assert settings["cpu_offload"] is False
    assert [r.path for r in server.received if r.method == "POST"] == ["/api/generate"]
