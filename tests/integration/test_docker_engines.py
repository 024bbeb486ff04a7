"""The vLLM and SGLang recipes at container create, on the real dockerd of CI (no GPU, no image pulls here).

The GPU images cannot be pulled on this network and no GPU exists here, so the container is CREATED (never started)
FROM the local base image with exactly what the launcher would send (the recipe's plan, the launcher's create
arguments, the vendor's passthrough options), and the daemon's own inspect output is checked: the launch arguments
(model mounted read-only, served name, 127.0.0.1, tensor parallel = the GPUs handed over, metrics), the engine label,
host networking and the GPU devices. The Dockerfiles' pins and labels are checked in tests/unit/images.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tcobench.schemas import BenchmarkConfig, ContainerEngine, EngineKind
from tcobench.tasks.engine.base import LaunchOptions, launcher_for
from tcobench.tasks.engine.recipes import recipe_for
from tcobench.tasks.host.gpu import vendor_for

pytestmark = pytest.mark.docker

PORT = 18123


@pytest.fixture
def created(docker_api: Any) -> Iterator[list[Any]]:
    containers: list[Any] = []
    try:
        yield containers
    finally:
        for container in containers:
            container.remove(force=True)


def _config(engine: ContainerEngine, vendor: str, folder: Path, gpu: dict[str, Any]) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate_json(
        json.dumps(
            {
                "engine": {
                    "kind": "container",
                    "container": {"image": "unused", "engine": engine.value, "gpu": {"vendor": vendor, **gpu}},
                },
                "model": {"name": "served-name", "path": str(folder)},
                "workload": {"concurrency": [1, 8]},
            }
        )
    )


def _create(docker_api: Any, base_image: str, created: list[Any], config: BenchmarkConfig, tmp: Path) -> dict[str, Any]:
    cfg = config.engine.container
    assert cfg is not None and cfg.engine is not None
    plan = recipe_for(cfg.engine).plan(config, 8, "127.0.0.1", PORT, tmp, True)
    gpu = vendor_for(cfg.gpu.vendor).options(cfg.gpu, True)
    launcher = launcher_for(EngineKind.container)
    create = launcher._create_kwargs(  # type: ignore[attr-defined]
        cfg,
        plan,
        gpu.environment,
        LaunchOptions(batch_id="recipe-spec"),
        cfg.engine,
        "tcobench/x:1",
        PORT,
    )
    container = docker_api.containers.create(base_image, **create, **gpu.create_kwargs)
    created.append(container)
    container.reload()
    assert container.status == "created"
    return dict(container.attrs)


def _model(tmp_path: Path) -> Path:
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}')
    return folder


def _after(cmd: list[str], flag: str) -> str:
    return cmd[cmd.index(flag) + 1]


@pytest.mark.parametrize("engine", [ContainerEngine.vllm, ContainerEngine.sglang], ids=lambda e: e.value)
def test_nvidia_container_spec(
    engine: ContainerEngine, docker_api: Any, base_image: str, created: list[Any], tmp_path: Path
) -> None:
    folder = _model(tmp_path)
    attrs = _create(docker_api, base_image, created, _config(engine, "nvidia", folder, {"count": 2}), tmp_path)
    cmd, host = attrs["Config"]["Cmd"], attrs["HostConfig"]
    model_flag, tp_flag = (
        ("--model", "--tensor-parallel-size") if engine is ContainerEngine.vllm else ("--model-path", "--tp-size")
    )
    assert _after(cmd, model_flag) == "/models/my-model" and _after(cmd, "--served-model-name") == "served-name"
    assert _after(cmd, "--host") == "127.0.0.1" and _after(cmd, "--port") == str(PORT)
    assert _after(cmd, tp_flag) == "2"  # tensor parallel = the GPUs handed to the container
    assert "--enable-prompt-tokens-details" in cmd if engine is ContainerEngine.vllm else "--enable-metrics" in cmd
    assert f"{folder.resolve()}:/models/my-model:ro" in host["Binds"]
    assert host["NetworkMode"] == "host" and host["Privileged"] is False
    (request,) = host["DeviceRequests"]
    assert request["Count"] == 2 and request["Capabilities"] == [["gpu"]]
    assert attrs["Config"]["Labels"]["io.tcobench.engine"] == engine.value
    assert "HF_HUB_OFFLINE=1" in attrs["Config"]["Env"]  # a mounted folder: nothing to download


@pytest.mark.parametrize("engine", [ContainerEngine.vllm, ContainerEngine.sglang], ids=lambda e: e.value)
def test_amd_container_spec(
    engine: ContainerEngine, docker_api: Any, base_image: str, created: list[Any], tmp_path: Path
) -> None:
    folder = _model(tmp_path)
    gpu = {"device_ids": ["/dev/dri/renderD128", "/dev/dri/renderD129"], "group_add": [44, 109]}
    attrs = _create(docker_api, base_image, created, _config(engine, "amd", folder, gpu), tmp_path)
    cmd, host = attrs["Config"]["Cmd"], attrs["HostConfig"]
    tp_flag = "--tensor-parallel-size" if engine is ContainerEngine.vllm else "--tp-size"
    assert _after(cmd, tp_flag) == "2" and _after(cmd, "--host") == "127.0.0.1"
    paths = [d["PathOnHost"] for d in host["Devices"]]
    assert paths == ["/dev/kfd", "/dev/dri/renderD128", "/dev/dri/renderD129"]
    assert host["GroupAdd"] == ["44", "109"] and host["Privileged"] is False
