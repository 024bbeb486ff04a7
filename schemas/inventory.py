"""The team's GPU hosts and the nightly matrix of engines x models x workloads run on them."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from .base import GpuVendor, Protocol, StrictModel, check_env_name, check_no_user_info
from .config import ModelConfig, WorkloadConfig
from .container import DockerHostUrl, GpuConfig, OllamaSettings
from .records import HOST_PATTERN

__all__ = ["HostSpec", "Inventory", "Matrix", "MatrixEngine"]


class HostSpec(StrictModel):
    """One measured host: where its Docker daemon is and how to price it."""

    name: str = Field(pattern=HOST_PATTERN, description="Host name in stored rows (letters, digits, . _ -).")
    docker_host: DockerHostUrl | None = Field(
        default=None, description="unix://..., tcp://host:2376 (TLS) or ssh://user@host; default: local daemon."
    )
    vendor: GpuVendor = Field(description="cpu, nvidia or amd: which matrix engines apply to this host.")
    gpu_model: str | None = Field(default=None, description="Accelerator model, e.g. H200, MI300X.")
    gpu_count: int = Field(default=0, ge=0, description="Accelerators the engine may use on this host.")
    gpu: GpuConfig | None = Field(
        default=None, description="Passthrough details (device ids, render nodes, group ids); default from vendor."
    )
    hardware: str = Field(min_length=1, description="Key into the price table's [hardware].")
    site: str = Field(default="default", min_length=1, description="Key into [site] (electricity price, PUE).")
    ops: str = Field(default="default", min_length=1, description="Key into [ops] (labour).")


class Inventory(StrictModel):
    hosts: tuple[HostSpec, ...] = Field(min_length=1, description="Every host measured by the nightly flow.")

    @model_validator(mode="after")
    def _unique_names(self) -> Inventory:
        names = [h.name for h in self.hosts]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"host names must be unique; repeated: {', '.join(dupes)}")
        return self


class MatrixEngine(StrictModel):
    """An engine image of the matrix."""

    name: str = Field(min_length=1, description="Label of this engine in reports.")
    image: str | None = Field(
        default=None, min_length=1, description="Image catalog name or reference (pinned by the images catalog)."
    )
    endpoint: str | None = Field(
        default=None,
        description="Instead of an image: a running server's base URL (simulated hosts, engines run elsewhere).",
    )
    protocol: Protocol = Field(default=Protocol.openai, description="Wire protocol of `endpoint`.")
    api_key_env: str | None = Field(
        default=None,
        description="NAME of the environment variable holding the API key of `endpoint` (sent as `Authorization: "
        "Bearer`); never the key itself.",
    )
    vendor: GpuVendor | None = Field(
        default=None, description="Only for hosts of this vendor (default: the matrix file's vendor, else all)."
    )
    ollama: OllamaSettings = Field(default_factory=OllamaSettings, description="Ollama knobs (Ollama images).")

    @field_validator("endpoint")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        return value if value is None else check_no_user_info(value)

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        return value if value is None else check_env_name(value)

    @model_validator(mode="after")
    def _image_or_endpoint(self) -> MatrixEngine:
        if (self.image is None) == (self.endpoint is None):
            raise ValueError("give exactly one of image (a container) or endpoint (a running server)")
        if self.api_key_env is not None and self.endpoint is None:
            raise ValueError("api_key_env is only valid with endpoint (a server you run)")
        return self


class Matrix(StrictModel):
    """Engines x models x workloads; each workload's concurrency levels are runs of one cell."""

    vendor: GpuVendor | None = Field(
        default=None, description="Per-vendor matrix file: its engines apply to hosts of this vendor only."
    )
    engines: tuple[MatrixEngine, ...] = Field(min_length=1, description="Engine images.")
    models: tuple[ModelConfig, ...] = Field(min_length=1, description="Models (name as the engine knows it).")
    workloads: tuple[WorkloadConfig, ...] = Field(min_length=1, description="Workloads.")
