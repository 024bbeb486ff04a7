"""engine.kind = container: the container section is validated with the rest of the config, before anything starts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from tcobench.schemas import BenchmarkConfig, ContainerEngine, EngineKind, GpuVendor


def _config(engine: dict[str, Any], **rest: Any) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate_json(json.dumps({"engine": engine, **rest}))


def test_container_config_defaults() -> None:
    config = _config({"kind": "container", "container": {"image": "llama-cpp-cpu"}})
    cfg = config.engine.container
    assert config.engine.kind is EngineKind.container and cfg is not None
    assert cfg.gpu.vendor is GpuVendor.cpu and cfg.engine is None and cfg.docker_host is None
    assert cfg.ollama.keep_alive == "-1" and cfg.ollama.flash_attention is False and cfg.ollama.kv_cache_type == "f16"


@pytest.mark.parametrize(
    ("engine", "needle"),
    [
        ({"kind": "container"}, "engine.container"),
        ({"kind": "embedded", "container": {"image": "x"}}, "engine.container"),
        ({"kind": "container", "url": "http://127.0.0.1:1", "container": {"image": "x"}}, "engine.url"),
        ({"kind": "container", "container": {"image": "x", "docker_host": "http://h"}}, "unix://"),
        ({"kind": "container", "container": {"image": "x", "engine": "ollama"}}, "speaks protocol 'ollama'"),
        ({"kind": "container", "protocol": "ollama", "container": {"image": "x", "engine": "llama.cpp"}}, "'openai'"),
        ({"kind": "container", "container": {"image": "x", "gpu": {"count": 2}}}, "vendor nvidia or amd"),
        ({"kind": "container", "container": {"image": "x", "gpu": {"vendor": "amd", "count": 2}}}, "only valid"),
        ({"kind": "container", "container": {"image": "x", "gpu": {"vendor": "nvidia", "count": 0}}}, "-1 (all)"),
        (
            {"kind": "container", "container": {"image": "x", "gpu": {"vendor": "amd", "device_ids": ["0"]}}},
            "render nodes",
        ),
        ({"kind": "container", "container": {"image": "x", "gpu": {"vendor": "amd", "shm_size": "lots"}}}, "8g"),
    ],
)
def test_invalid_container_configs_name_the_field(engine: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValidationError) as info:
        _config(engine)
    assert needle in str(info.value)


def test_model_rules_follow_the_container_engine() -> None:
    ollama = {"kind": "container", "protocol": "ollama", "container": {"image": "x", "engine": "ollama"}}
    assert _config(ollama, model={"name": "llama3.2:3b"}).model.name == "llama3.2:3b"
    with pytest.raises(ValidationError, match="model.path"):
        _config(ollama, model={"name": "m", "path": "/models/m.gguf"})
    llama = {"kind": "container", "container": {"image": "x", "engine": "llama.cpp"}}
    with pytest.raises(ValidationError, match="llama.cpp container"):
        _config(llama, model={"name": "llama-70b"})
    assert _config(llama, model={"name": "m", "path": "/models/m.gguf"}).engine.container is not None
    assert _config(llama).engine.container.engine is ContainerEngine.llama_cpp  # type: ignore[union-attr]


def test_gpu_settings_accepted() -> None:
    nvidia = _config({"kind": "container", "container": {"image": "x", "gpu": {"vendor": "nvidia", "count": -1}}})
    assert nvidia.engine.container.gpu.count == -1  # type: ignore[union-attr]
    gpu_amd = {"vendor": "amd", "device_ids": ["/dev/dri/renderD128"], "group_add": [44, 109], "shm_size": "16G"}
    amd = _config({"kind": "container", "container": {"image": "x", "gpu": gpu_amd}})
    gpu = amd.engine.container.gpu  # type: ignore[union-attr]
    assert gpu.group_add == (44, 109) and gpu.shm_size == "16g"


def test_shipped_container_example_is_valid() -> None:
    from pathlib import Path

    from tcobench.tasks.config import load_config
    from tcobench.tasks.prices import check_keys, load_prices

    example = Path(__file__).resolve().parents[3] / "examples" / "container-ollama-rocm.toml"
    config = load_config(example)
    cfg = config.engine.container
    assert cfg is not None and cfg.gpu.vendor is GpuVendor.amd and cfg.gpu.group_add == (992, 44)
    assert cfg.docker_host == "ssh://bench@mi300-1" and cfg.ollama.num_parallel == 8
    check_keys(load_prices(None), config.pricing, where=str(example))
