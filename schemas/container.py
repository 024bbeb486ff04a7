"""Configuration of an engine started as a container on a Docker host (engine.kind = container)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from tcobench.schemas.base import ContainerEngine, GpuVendor, StrictModel
from tcobench.schemas.flags import Flag
from tcobench.schemas.urls import check_url

__all__ = ["DOCKER_HOST_SCHEMES", "ContainerConfig", "DockerHostUrl", "GpuConfig", "OllamaSettings"]

DOCKER_HOST_SCHEMES = ("unix://", "tcp://", "ssh://")


def _docker_host_url(value: str) -> str:
    if not value.startswith(DOCKER_HOST_SCHEMES):
        raise ValueError(f"must start with {', '.join(DOCKER_HOST_SCHEMES)}, got {value!r}")
    return check_url(value, tuple(s.removesuffix("://") for s in DOCKER_HOST_SCHEMES), needs_host=False)


DockerHostUrl = Annotated[str, AfterValidator(_docker_host_url)]
_SIZE = re.compile(r"^\d+[bkmg]?$")


class OllamaSettings(StrictModel):
    """Ollama server knobs, pinned per run (environment of the container) and stored in engine_settings."""

    num_parallel: int | None = Field(
        default=None, gt=0, description="OLLAMA_NUM_PARALLEL; default: the highest concurrency of the run."
    )
    keep_alive: str = Field(
        default="-1", min_length=1, description="OLLAMA_KEEP_ALIVE; '-1' keeps the model loaded for the whole run."
    )
    flash_attention: bool = Field(default=False, description="OLLAMA_FLASH_ATTENTION (pinned, not left to Ollama).")
    kv_cache_type: Literal["f16", "q8_0", "q4_0"] = Field(default="f16", description="OLLAMA_KV_CACHE_TYPE.")
    context_length: int | None = Field(
        default=None, gt=0, description="OLLAMA_CONTEXT_LENGTH; default: workload.num_ctx."
    )
    max_loaded_models: int = Field(default=1, gt=0, description="OLLAMA_MAX_LOADED_MODELS.")
    pull: bool = Field(default=True, description="Pull the model through /api/pull before measuring.")
    pull_timeout_s: float = Field(default=3600.0, gt=0, description="Longest a model pull may take, seconds.")


class GpuConfig(StrictModel):
    """How the container gets its accelerators. Never privileged."""

    vendor: Annotated[
        GpuVendor, Flag(r"GPUs to hand to the --image container \[cpu].", name="gpu_vendor", derived=True)
    ] = Field(default=GpuVendor.cpu, description="cpu, nvidia or amd.")
    count: Annotated[
        int | None,
        Flag(
            "Which GPUs: all, a count (NVIDIA), or device=ID,... (NVIDIA ids; AMD render nodes).",
            name="gpus",
            cli_type=str | None,
            derived=True,
        ),
    ] = Field(default=None, description="NVIDIA: number of GPUs (-1 = all); default all unless device_ids are given.")
    device_ids: tuple[str, ...] = Field(
        default=(),
        description="NVIDIA: GPU indices or UUIDs. AMD: render nodes (/dev/dri/renderD128); default: all of /dev/dri.",
    )
    group_add: tuple[int, ...] | None = Field(
        default=None,
        description="AMD: numeric group ids that may open /dev/kfd and the render nodes; default: read from the "
        "devices on a local Docker host (group names may not exist inside the image).",
    )
    ipc_host: bool = Field(default=True, description="AMD: share the host's IPC namespace (ROCm's advice).")
    shm_size: str = Field(default="8g", description="AMD: /dev/shm size, e.g. 8g.")
    hsa_override_gfx_version: str | None = Field(
        default=None, description="AMD: HSA_OVERRIDE_GFX_VERSION for consumer cards, e.g. 11.0.0."
    )

    @field_validator("shm_size")
    @classmethod
    def _size(cls, value: str) -> str:
        if not _SIZE.match(value.lower()):
            raise ValueError(f"must be a size like 512m or 8g, got {value!r}")
        return value.lower()

    @model_validator(mode="after")
    def _vendor_fields(self) -> GpuConfig:
        if self.vendor is GpuVendor.cpu and (self.count is not None or self.device_ids):
            raise ValueError("gpu.count and gpu.device_ids need gpu.vendor nvidia or amd")
        if self.vendor is not GpuVendor.nvidia and self.count is not None:
            raise ValueError("gpu.count is only valid with gpu.vendor 'nvidia' (AMD: list render nodes)")
        if self.count is not None and self.device_ids:
            raise ValueError("give gpu.count or gpu.device_ids, not both")
        if self.count is not None and (self.count == 0 or self.count < -1):
            raise ValueError(f"gpu.count must be -1 (all) or a positive number, got {self.count}")
        if self.vendor is GpuVendor.amd:
            bad = [d for d in self.device_ids if not d.startswith("/dev/dri/")]
            if bad:
                raise ValueError(f"AMD gpu.device_ids are render nodes under /dev/dri/, got {bad[0]!r}")
        return self


class ContainerConfig(StrictModel):
    """An engine image to start as a container (host networking, labelled, always removed afterwards)."""

    image: Annotated[str, Flag("Start this engine image (reference or catalog name) as a container.", derived=True)] = (
        Field(min_length=1, description="Image reference or catalog name, e.g. llama-cpp-cpu.")
    )
    docker_host: Annotated[
        DockerHostUrl | None,
        Flag(
            "Docker host for --image: unix://..., tcp://host:2376 (TLS), ssh://user@host.",
            cli_type=str | None,
            derived=True,
        ),
    ] = Field(
        default=None,
        description="Docker host: unix:///var/run/docker.sock, tcp://host:2376 (TLS from DOCKER_CERT_PATH) or "
        "ssh://user@host; default: DOCKER_HOST or the local socket.",
    )
    engine: ContainerEngine | None = Field(
        default=None, description="Engine the image runs; default: its io.tcobench.engine label."
    )
    gpu: GpuConfig = Field(default_factory=GpuConfig, description="Accelerator passthrough.")
    port: int | None = Field(
        default=None, gt=0, lt=65536, description="Port the engine listens on (host network); default: a free one."
    )
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables of the container.")
    ollama: OllamaSettings = Field(default_factory=OllamaSettings, description="Ollama knobs (Ollama images).")
    models_volume: str = Field(
        default="tcobench-ollama-models", min_length=1, description="Named volume holding pulled Ollama models."
    )
    stop_timeout_s: int = Field(default=10, ge=0, description="Seconds between SIGTERM and SIGKILL on stop.")
