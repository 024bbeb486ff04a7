"""What the vLLM and SGLang recipes share: a Hugging Face model folder mounted read-only (or a model id the engine
fetches itself), tensor parallelism over the GPUs handed to the container, and identity from what the server says."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import docker

from tcobench.errors import ImageError
from tcobench.schemas import BenchmarkConfig
from tcobench.tasks.engine.endpoint import target_of
from tcobench.tasks.engine.recipes.base import ContainerPlan, Recipe, SmokeAddress
from tcobench.tasks.hf_model import check_hf_model, is_hf_synthetic
from tcobench.tasks.host.docker_client import run_to_completion
from tcobench.tasks.load.protocols import EngineInfo
from tcobench.tasks.load.stream import preflight

__all__ = [
    "MODEL_DIR",
    "HfServerRecipe",
    "ServedModel",
    "identify_served",
    "served_model",
    "smoke_version",
    "tensor_parallel",
]

MODEL_DIR = "/models"  # where a model folder appears inside the container (read-only)


@dataclass(frozen=True)
class ServedModel:
    """The --model argument, the mounts it needs, and what is recorded about it."""

    argument: str
    volumes: dict[str, dict[str, str]]
    settings: dict[str, Any]
    synthetic: bool


def served_model(config: BenchmarkConfig, local: bool) -> ServedModel:
    """model.path (a folder with config.json, mounted read-only) or model.name (an id the engine resolves)."""
    path = config.model.path
    if path is None:
        return ServedModel(config.model.name, {}, {"model": config.model.name}, False)
    if local:
        check_hf_model(path)
        path = path.resolve()
    inside = f"{MODEL_DIR}/{path.name}"
    settings = {"model_path": str(path), "container_model_path": inside}
    synthetic = local and is_hf_synthetic(path)
    return ServedModel(inside, {str(path): {"bind": inside, "mode": "ro"}}, settings, synthetic)


def tensor_parallel(config: BenchmarkConfig) -> int:
    """GPUs one model copy spans: engine.vllm.tensor_parallel where the configuration sets a parallel size (tensor,
    pipeline or data above 1: a sweep's configuration), else the GPUs handed to the container (a count or device
    ids), else 1."""
    assert config.engine.container is not None
    gpu = config.engine.container.gpu
    v = config.engine.vllm
    if v.gpus > 1:
        return v.tensor_parallel
    handed = gpu.count if gpu.count is not None and gpu.count > 0 else len(gpu.device_ids)
    return handed or v.tensor_parallel


def identify_served(config: BenchmarkConfig, base_url: str, labels: Mapping[str, str], synthetic: bool) -> EngineInfo:
    """Who the server says it is (tasks.load.protocols.engine_id), with the image's engine label as evidence beside
    it."""
    served = preflight(target_of(config, base_url))
    label = labels.get("io.tcobench.engine-version")
    where = f"image label io.tcobench.engine-version={label}; {served.detected_from}" if label else served.detected_from
    return EngineInfo(
        served.name,
        served.version,
        None,
        synthetic=synthetic or config.model.synthetic,
        context_tokens=served.context_tokens,
        detected_from=where,
    )


def smoke_version(client: docker.DockerClient, image: str, module: str) -> str:
    """The engine package's version, printed by the image's own Python (no GPU needed); ImageError otherwise."""
    code, output = run_to_completion(
        client,
        image,
        ["-c", f"import {module}; print({module}.__version__)"],
        network_mode="none",
        entrypoint=["python3"],
    )
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if code != 0 or not lines:
        raise ImageError(
            f"smoke test of {image}: `python3 -c 'import {module}'` exited with code {code}: {' | '.join(lines[-3:])}"
        )
    return lines[-1]


class HfServerRecipe(Recipe):
    """A Hugging Face model server in a container (vLLM, SGLang): its launch arguments (``arguments``), ``GET /health``,
    identity from what it serves, and the smoke test's ``python -m <module> --version``."""

    # (config, slots, bind, port, model argument, tensor parallel) -> (launch arguments, recorded settings, the
    # serving configuration's fields)
    arguments: ClassVar[
        staticmethod[[BenchmarkConfig, int, str, int, str, int], tuple[list[str], dict[str, Any], dict[str, Any]]]
    ]
    module: ClassVar[str]

    def plan(
        self, config: BenchmarkConfig, slots: int, bind: str, port: int, model_cache: Path, local: bool
    ) -> ContainerPlan:
        model = served_model(config, local)
        args, settings, serving = type(self).arguments(
            config, slots, bind, port, model.argument, tensor_parallel(config)
        )
        env = {"HF_HUB_OFFLINE": "1" if model.volumes else "0"}  # a folder: nothing to fetch
        return ContainerPlan(
            args,
            "/health",
            environment=env,
            volumes=model.volumes,
            settings={**settings, **model.settings, "synthetic": model.synthetic},
            serving=serving,
        )

    def identify(
        self, config: BenchmarkConfig, base_url: str, labels: Mapping[str, str], plan: ContainerPlan
    ) -> EngineInfo:
        return identify_served(config, base_url, labels, bool(plan.settings.get("synthetic")))

    def smoke(self, client: docker.DockerClient, image: str, address: SmokeAddress) -> str:
        return smoke_version(client, image, self.module)
