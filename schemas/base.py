"""Shared model configuration and enums used by every schema."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

__all__ = [
    "ClientPlacement",
    "ContainerEngine",
    "EngineKind",
    "GpuVendor",
    "LoadMode",
    "Phase",
    "Protocol",
    "RunStatus",
    "SamplerKind",
    "StrictModel",
    "TelemetryPhase",
]


class StrictModel(BaseModel):
    """Strict, closed model: unknown fields are errors, values are not coerced across types."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, use_enum_values=False)


class Protocol(StrEnum):
    """Wire protocol an engine speaks."""

    openai = "openai"
    ollama = "ollama"


class EngineKind(StrEnum):
    """How the engine under test is provided."""

    embedded = "embedded"  # llama.cpp's llama-server started by tcobench as a local process
    endpoint = "endpoint"  # an already running server the user points at
    container = "container"  # an engine image started by tcobench as a container on a Docker host


class ContainerEngine(StrEnum):
    """Which engine a container image runs (its ``io.tcobench.engine`` label)."""

    llama_cpp = "llama.cpp"  # llama.cpp's llama-server (OpenAI-compatible API)
    ollama = "ollama"  # Ollama (native API)


class ClientPlacement(StrEnum):
    """Where the load generator ran relative to the engine it measured (stored on every run row)."""

    loopback = "loopback"  # same host, through the loopback interface (127.0.0.0/8, ::1): no network in TTFT
    same_host_container = "same-host-container"  # same host, through a non-loopback address of this host
    network = "network"  # another machine: every request crosses the network (see rtt_p50_ns)


class GpuVendor(StrEnum):
    """Accelerator vendor of a host or an image; ``cpu`` when there is none."""

    cpu = "cpu"
    nvidia = "nvidia"
    amd = "amd"


class LoadMode(StrEnum):
    """How requests are issued."""

    closed = "closed"  # fixed concurrency: a new request starts when one finishes
    poisson = "poisson"  # open loop: arrivals drawn from a Poisson process at a fixed rate


class Phase(StrEnum):
    warmup = "warmup"
    measure = "measure"


class RunStatus(StrEnum):
    ok = "ok"  # every measured request succeeded
    partial = "partial"  # the run finished but some requests failed
    failed = "failed"  # the run could not be completed


class SamplerKind(StrEnum):
    """Where power/energy telemetry comes from (one sampler module per vendor)."""

    # local engine: nvidia, amd, nvidia-smi, amd-smi, cpu; engine in a remote container: nvidia-smi, amd-smi in it
    auto = "auto"
    nvidia = "nvidia"  # NVML (nvidia-ml-py)
    nvidia_smi = "nvidia-smi"  # the nvidia-smi command, on this host or inside the engine's container
    amd = "amd"  # amdsmi
    amd_smi = "amd-smi"  # the amd-smi command, on this host or inside the engine's container
    cpu = "cpu"  # Linux RAPL powercap
    none = "none"


class TelemetryPhase(StrEnum):
    idle = "idle"  # baseline before any load
    warmup = "warmup"
    measure = "measure"
