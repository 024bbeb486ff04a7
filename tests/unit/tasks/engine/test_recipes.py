"""Container plans per engine: what the container runs, mounts and pins (no daemon needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tcobench.errors import EngineError
from tcobench.schemas import BenchmarkConfig, ContainerEngine, Protocol
from tcobench.tasks.engine.recipes import recipe_for


def _config(container: dict[str, Any], **rest: Any) -> BenchmarkConfig:
    engine = {"kind": "container", "container": {"image": "img", **container}}
    if container.get("engine") == "ollama":
        engine["protocol"] = "ollama"
    return BenchmarkConfig.model_validate_json(json.dumps({"engine": engine, **rest}))


def test_llama_cpp_mounts_the_model_read_only(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF not really")
    config = _config(
        {"engine": "llama.cpp"},
        model={"name": "tiny", "path": str(model)},
        workload={"num_ctx": 1024, "concurrency": [1, 4]},
    )
    recipe = recipe_for(ContainerEngine.llama_cpp)
    plan = recipe.plan(config, 4, "127.0.0.1", 18080, tmp_path, local=True)
    assert recipe.protocol is Protocol.openai and plan.health_path == "/health"
    assert plan.volumes == {str(model): {"bind": "/models/tiny.gguf", "mode": "ro"}}
    command = " ".join(plan.command)
    assert "--model /models/tiny.gguf" in command and "--alias tiny" in command and "--port 18080" in command
    assert "--parallel 4" in command and "--ctx-size 4096" in command and "--host 127.0.0.1" in command
    assert plan.settings["parallel"] == 4 and plan.settings["model_path"] == str(model)
    assert plan.model_digest is not None and len(plan.model_digest) == 64


def test_llama_cpp_on_a_remote_host_needs_a_model_path(tmp_path: Path) -> None:
    recipe = recipe_for(ContainerEngine.llama_cpp)
    with pytest.raises(EngineError, match="remote Docker host needs model.path"):
        recipe.plan(_config({"engine": "llama.cpp"}), 1, "0.0.0.0", 18080, tmp_path, local=False)
    remote = _config({"engine": "llama.cpp"}, model={"name": "m", "path": "/srv/models/m.gguf"})
    plan = recipe.plan(remote, 1, "0.0.0.0", 18080, tmp_path, local=False)
    assert plan.model_digest is None and "--threads" not in plan.command  # cannot hash or size a remote host


def test_missing_local_model_file(tmp_path: Path) -> None:
    config = _config({"engine": "llama.cpp"}, model={"name": "m", "path": str(tmp_path / "nope.gguf")})
    with pytest.raises(EngineError, match="does not exist"):
        recipe_for(ContainerEngine.llama_cpp).plan(config, 1, "127.0.0.1", 1, tmp_path, local=True)


def test_ollama_knobs_are_pinned_in_the_environment(tmp_path: Path) -> None:
    config = _config(
        {"engine": "ollama", "ollama": {"flash_attention": True, "kv_cache_type": "q8_0"}, "models_volume": "vol"},
        model={"name": "llama3.2:3b"},
        workload={"num_ctx": 8192, "concurrency": [1, 8]},
    )
    plan = recipe_for(ContainerEngine.ollama).plan(config, 8, "127.0.0.1", 11500, tmp_path, local=True)
    env = plan.environment
    assert env["OLLAMA_HOST"] == "127.0.0.1:11500" and env["OLLAMA_NUM_PARALLEL"] == "8"
    assert env["OLLAMA_CONTEXT_LENGTH"] == "8192" and env["OLLAMA_FLASH_ATTENTION"] == "1"
    assert env["OLLAMA_KV_CACHE_TYPE"] == "q8_0" and env["OLLAMA_KEEP_ALIVE"] == "-1"
    assert env["OLLAMA_MAX_LOADED_MODELS"] == "1"
    assert plan.volumes == {"vol": {"bind": "/models", "mode": "rw"}} and plan.command == ["serve"]
    assert plan.settings["OLLAMA_NUM_PARALLEL"] == "8" and "OLLAMA_HOST" not in plan.settings
    assert plan.health_path == "/api/version"
