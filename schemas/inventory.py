"""The team's GPU hosts, how the nightly reaches them (in-process, or Prefect workers: ``[fleet]``), and the nightly
matrix of engines x models x workloads run on them."""

from __future__ import annotations

import itertools
import json
from typing import Literal

from pydantic import Field, JsonValue, field_validator, model_validator

from tcobench.schemas.base import GpuVendor, Protocol, StrictModel, check_env_name, check_no_user_info
from tcobench.schemas.config import ModelConfig, WorkloadConfig
from tcobench.schemas.container import DockerHostUrl, GpuConfig, OllamaSettings
from tcobench.schemas.records import HOST_PATTERN
from tcobench.schemas.urls import check_api_base, check_url
from tcobench.schemas.vllm import VllmSettings

__all__ = ["CONTROL_QUEUE", "SWEEP_KEYS", "FleetSettings", "HostSpec", "Inventory", "Matrix", "MatrixEngine"]

CONTROL_QUEUE = "control"  # work queue of the nightly flow's own deployment; host queues are named after hosts
# A sweep's keys: vLLM's (and SGLang's) launch settings (engine.vllm), Ollama's knobs (engine.ollama), the GPUs given
VLLM_SWEEP_KEYS = (
    "tensor_parallel",
    "pipeline_parallel",
    "data_parallel",
    "max_num_seqs",
    "max_batched_tokens",
    "dtype",
    "kv_cache_dtype",
    "max_model_len",
    "speculative",
    "extra_args",
)
OLLAMA_SWEEP_KEYS = ("num_parallel", "kv_cache_type", "flash_attention", "context_length")
SWEEP_KEYS = (*VLLM_SWEEP_KEYS, *OLLAMA_SWEEP_KEYS, "gpus")


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
    budget_s: float | None = Field(
        default=None,
        gt=0,
        description="Fleet mode: time this host's run may take once picked up (default: [fleet] host_budget_s).",
    )


class FleetSettings(StrictModel):
    """Fleet mode: each host's cells run on that host, by its Prefect worker (``tcobench worker --host NAME``).

    The Prefect server comes from the environment (PREFECT_API_URL, PREFECT_API_AUTH_STRING), never from this file.
    """

    work_pool: str = Field(
        default="tcobench-fleet",
        pattern=r"^[A-Za-z0-9._-]+$",
        description="Prefect work pool (type process); one work queue per host, named as the host.",
    )
    pickup_timeout_s: float = Field(
        default=300.0, gt=0, description="A host whose worker has not picked up its run by then is 'host offline'."
    )
    host_budget_s: float = Field(
        default=21600.0, gt=0, description="Time a host's run may take once picked up (6 h); then it is cancelled."
    )
    cancel_grace_s: float = Field(
        default=60.0, gt=0, description="Time a cancelled run gets to stop before it is given up as lost."
    )
    lost_after_s: float = Field(
        default=90.0,
        gt=0,
        description="A running host whose worker sent no heartbeat for this long is lost (its run is crashed).",
    )
    poll_s: float = Field(default=2.0, gt=0, le=60, description="How often the nightly reads its host runs' states.")


class Inventory(StrictModel):
    hosts: tuple[HostSpec, ...] = Field(min_length=1, description="Every host measured by the nightly flow.")
    fleet: FleetSettings | None = Field(
        default=None, description="Run each host's cells on that host through its Prefect worker (fleet mode)."
    )

    @model_validator(mode="after")
    def _unique_names(self) -> Inventory:
        names = [h.name for h in self.hosts]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"host names must be unique; repeated: {', '.join(dupes)}")
        return self

    @model_validator(mode="after")
    def _fleet_hosts(self) -> Inventory:
        if self.fleet is None:
            return self
        for host in self.hosts:
            if host.name == CONTROL_QUEUE:
                raise ValueError(f"host name {host.name!r} is the nightly's own work queue in fleet mode; rename it")
            if host.docker_host is not None and not host.docker_host.startswith("unix://"):
                raise ValueError(
                    f"host {host.name!r}: docker_host {host.docker_host!r} is a remote daemon; in fleet mode each "
                    "host's worker uses its own local Docker socket (leave docker_host out, or give unix://...)"
                )
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
    embedded: bool = Field(
        default=False,
        description="Instead of an image: the embedded llama.cpp engine started on the host (model.path for a GGUF).",
    )
    kind: Literal["vllm"] | None = Field(
        default=None,
        description="Instead of an image: vllm = vLLM started on the host as a local process (its settings in "
        "`vllm`, its Python in vllm.python or $TCOBENCH_VLLM_PYTHON; model.path a folder or model.shape).",
    )
    vllm: VllmSettings = Field(default_factory=VllmSettings, description="vLLM's launch settings (kind = vllm).")
    hosts: tuple[str, ...] | None = Field(
        default=None, min_length=1, description="Only for these hosts of the inventory (default: every host)."
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
    gpus: int | None = Field(
        default=None,
        gt=0,
        description="GPUs this engine gets: an image, that many NVIDIA GPUs handed to its container (instead of the "
        "host's gpu table); an endpoint, the GPUs it serves on as declared (tcobench does not launch it; default: "
        "the host's gpu_count). Every run divides its throughput by the GPUs its configuration used.",
    )
    settings: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="An endpoint's serving configuration as declared (e.g. tensor_parallel = 2, max_num_seqs = 256): "
        "free-form, it enters the runs' config_id; engines tcobench starts record their own.",
    )
    sweep: dict[str, list[JsonValue]] | None = Field(
        default=None,
        description="A grid of serving configurations: each key (SWEEP_KEYS) with its values; the engine becomes one "
        "cell per combination, each launched, warmed up, swept over concurrency and stopped before the next.",
    )

    @field_validator("sweep")
    @classmethod
    def _grid(cls, value: dict[str, list[JsonValue]] | None) -> dict[str, list[JsonValue]] | None:
        if value is None:
            return value
        if not value:
            raise ValueError(f"sweep is empty: give at least one key (valid: {', '.join(SWEEP_KEYS)})")
        for key, values in value.items():
            if key not in SWEEP_KEYS:
                raise ValueError(f"unknown sweep key {key!r} (valid: {', '.join(SWEEP_KEYS)})")
            if not values:
                raise ValueError(f"sweep.{key} is an empty grid: give at least one value, e.g. {key} = [1, 2]")
        return value

    @field_validator("endpoint")
    @classmethod
    def _endpoint_base(cls, value: str | None) -> str | None:
        """No credentials, a usable http(s) URL, and the server's base (not its /v1): as engine.url."""
        if value is None:
            return value
        check_no_user_info(value)
        return check_api_base(check_url(value, ("http", "https")))

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        return value if value is None else check_env_name(value)

    @model_validator(mode="after")
    def _image_or_endpoint(self) -> MatrixEngine:
        if (self.image is not None) + (self.endpoint is not None) + self.embedded + (self.kind is not None) != 1:
            raise ValueError(
                'give exactly one of image (a container), endpoint (a running server), embedded = true or kind = "vllm"'
            )
        if self.api_key_env is not None and self.endpoint is None:
            raise ValueError("api_key_env is only valid with endpoint (a server you run)")
        if self.settings and self.endpoint is None:
            raise ValueError(
                "settings (a declared configuration) is only valid with endpoint; an engine tcobench "
                "starts records its own"
            )
        keys = {*(self.sweep or {}), *(["gpus"] if self.gpus is not None else [])}
        if "gpus" in keys and (self.embedded or self.kind is not None):
            raise ValueError("gpus is only valid with image or endpoint (vLLM started by tcobench: tensor_parallel)")
        wrong = sorted(k for k in (self.sweep or {}) if k in VLLM_SWEEP_KEYS and (self.embedded or self.endpoint))
        wrong += sorted(k for k in (self.sweep or {}) if k in OLLAMA_SWEEP_KEYS and self.image is None)
        if wrong:
            raise ValueError(
                f'sweep key {wrong[0]!r} does not apply to this engine (vLLM/SGLang keys: kind = "vllm" '
                "or an image; Ollama keys: an image)"
            )
        return self

    def configurations(self) -> list[tuple[str, MatrixEngine]]:
        """The serving configurations of this engine: one (label suffix, engine) per combination of its sweep's
        values (keys in their order, values as given), or ("", itself) without a sweep."""
        if not self.sweep:
            return [("", self)]
        keys = list(self.sweep)
        found = []
        for combo in itertools.product(*(self.sweep[k] for k in keys)):
            data = self.model_dump(mode="json", exclude={"sweep"})
            for key, value in zip(keys, combo, strict=True):
                if key == "gpus":
                    data["gpus"] = value
                elif key in OLLAMA_SWEEP_KEYS:
                    data["ollama"][key] = value
                else:
                    data["vllm"][key] = value
            words = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in zip(keys, combo, strict=True)]
            found.append((f"[{','.join(words)}]", MatrixEngine.model_validate_json(json.dumps(data))))
        return found


class Matrix(StrictModel):
    """Engines x models x workloads; each workload's concurrency levels are runs of one cell."""

    vendor: GpuVendor | None = Field(
        default=None, description="Per-vendor matrix file: its engines apply to hosts of this vendor only."
    )
    engines: tuple[MatrixEngine, ...] = Field(min_length=1, description="Engine images.")
    models: tuple[ModelConfig, ...] = Field(min_length=1, description="Models (name as the engine knows it).")
    workloads: tuple[WorkloadConfig, ...] = Field(min_length=1, description="Workloads.")
