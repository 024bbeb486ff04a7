"""Ollama in a container: knobs pinned through its environment, models pulled into a named volume.

Settings recorded per run: OLLAMA_NUM_PARALLEL, OLLAMA_KEEP_ALIVE, OLLAMA_FLASH_ATTENTION,
OLLAMA_KV_CACHE_TYPE, OLLAMA_CONTEXT_LENGTH, OLLAMA_MAX_LOADED_MODELS, and after the load what
/api/ps says (size, size_vram, cpu_offload).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import docker
import httpx

from tcobench.errors import ImageError
from tcobench.schemas import BenchmarkConfig, ContainerEngine, Protocol
from tcobench.tasks.engine.base import EngineEvent, LaunchOptions
from tcobench.tasks.engine.endpoint import target_of
from tcobench.tasks.engine.ollama_api import load_model, loaded_model, pull_model
from tcobench.tasks.engine.recipes.base import ContainerPlan, Recipe, SmokeAddress, register
from tcobench.tasks.host.docker_client import remove_container, tcobench_labels
from tcobench.tasks.load.protocols import EngineInfo
from tcobench.tasks.load.stream import preflight
from tcobench.tasks.tls import tls_context

__all__ = ["MODELS_DIR", "OllamaRecipe", "ollama_environment"]

MODELS_DIR = "/models"  # OLLAMA_MODELS inside the container (a named volume, so pulls survive runs)
_SMOKE_TIMEOUT_S = 60.0


def ollama_environment(config: BenchmarkConfig, slots: int, bind: str, port: int) -> dict[str, str]:
    """The pinned knobs of one run."""
    assert config.engine.container is not None
    knobs = config.engine.container.ollama
    return {
        "OLLAMA_HOST": f"{bind}:{port}",
        "OLLAMA_MODELS": MODELS_DIR,
        "OLLAMA_NUM_PARALLEL": str(knobs.num_parallel or slots),
        "OLLAMA_KEEP_ALIVE": knobs.keep_alive,
        "OLLAMA_FLASH_ATTENTION": "1" if knobs.flash_attention else "0",
        "OLLAMA_KV_CACHE_TYPE": knobs.kv_cache_type,
        "OLLAMA_CONTEXT_LENGTH": str(knobs.context_length or config.workload.num_ctx),
        "OLLAMA_MAX_LOADED_MODELS": str(knobs.max_loaded_models),
    }


@register(ContainerEngine.ollama, Protocol.ollama)
class OllamaRecipe(Recipe):
    def plan(
        self, config: BenchmarkConfig, slots: int, bind: str, port: int, model_cache: Path, local: bool
    ) -> ContainerPlan:
        assert config.engine.container is not None
        env = ollama_environment(config, slots, bind, port)
        settings: dict[str, Any] = {k: v for k, v in env.items() if k not in ("OLLAMA_HOST", "OLLAMA_MODELS")}
        volumes = {config.engine.container.models_volume: {"bind": MODELS_DIR, "mode": "rw"}}
        knobs = config.engine.container.ollama
        serving = {
            "max_num_seqs": int(env["OLLAMA_NUM_PARALLEL"]),
            "kv_cache_dtype": knobs.kv_cache_type,
            "settings": {
                "flash_attention": knobs.flash_attention,
                "context_length": int(env["OLLAMA_CONTEXT_LENGTH"]),
            },
        }
        return ContainerPlan(
            ["serve"], "/api/version", environment=env, volumes=volumes, settings=settings, serving=serving
        )

    def prepare(self, config: BenchmarkConfig, base_url: str, launch: LaunchOptions) -> dict[str, Any]:
        assert config.engine.container is not None
        knobs = config.engine.container.ollama
        model = config.model.name
        if knobs.pull:
            pull_model(base_url, model, launch.on_event, knobs.pull_timeout_s)
        load_model(base_url, model, config.workload.num_ctx, knobs.keep_alive)
        loaded = loaded_model(base_url, model)
        if loaded is None:
            launch.report(EngineEvent(f"/api/ps does not list {model} after loading it", warning=True))
            return {"cpu_offload": None}
        if loaded.cpu_offload:
            share = 100 * loaded.size_vram / loaded.size if loaded.size else 0.0
            launch.report(
                EngineEvent(
                    f"{model} is partly on the CPU: {loaded.size_vram:,} of {loaded.size:,} bytes in VRAM "
                    f"({share:.0f}%)",
                    warning=True,
                )
            )
        return loaded.as_settings()

    def identify(
        self, config: BenchmarkConfig, base_url: str, labels: Mapping[str, str], plan: ContainerPlan
    ) -> EngineInfo:
        return preflight(target_of(config, base_url))

    def smoke(self, client: docker.DockerClient, image: str, address: SmokeAddress) -> str:
        env = {"OLLAMA_HOST": f"{address.bind}:{address.port}"}
        container = client.containers.create(
            image,
            command=["serve"],
            environment=env,
            network_mode="host",
            labels=tcobench_labels("smoke-test"),
            detach=True,
        )
        try:
            container.start()
            return _wait_version(container, f"http://{address.connect}:{address.port}/api/version", image)
        finally:
            remove_container(container, timeout_s=5)


def _wait_version(container: Any, url: str, image: str) -> str:
    deadline = time.monotonic() + _SMOKE_TIMEOUT_S
    with httpx.Client(timeout=2.0, trust_env=False, verify=tls_context()) as http:
        while time.monotonic() < deadline:
            container.reload()
            if container.status not in ("created", "running"):
                logs = container.logs().decode("utf-8", "replace").strip().splitlines()[-3:]
                raise ImageError(f"smoke test of {image}: `ollama serve` exited: {' | '.join(logs)}")
            try:
                answer = http.get(url)
                if answer.status_code == 200:
                    return str(answer.json()["version"])
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            time.sleep(0.2)
    raise ImageError(f"smoke test of {image}: {url} did not answer within {_SMOKE_TIMEOUT_S:g} s")
