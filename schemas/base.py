"""Shared model configuration and enums used by every schema."""

from __future__ import annotations

import re
from enum import StrEnum
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

__all__ = [
    "ClientPlacement",
    "ContainerEngine",
    "EngineKind",
    "FailureClass",
    "GpuSource",
    "GpuVendor",
    "HostFactsSource",
    "LoadMode",
    "Phase",
    "Protocol",
    "RunStatus",
    "SamplerKind",
    "StrictModel",
    "TelemetryPhase",
    "check_env_name",
    "check_no_user_info",
    "redact_url",
]

_USER_INFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^/@\s]*)@")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def redact_url(text: str) -> str:
    """``text`` with the user info of every URL in it masked: ``http://user:pw@host`` -> ``http://***@host``."""
    return _USER_INFO.sub(lambda m: f"{m['scheme']}***@", text)


def check_no_user_info(url: str) -> str:
    """Refuse a URL that carries credentials (``user:password@``): they would be stored and printed with it."""
    if "@" in (urlsplit(url).netloc or ""):
        raise ValueError(
            f"{redact_url(url)!r} carries user info (user:password@), which would be stored with every run; give "
            "the URL without it and the credential as an API key (--api-key, TCOBENCH_API_KEY or api_key_env)"
        )
    return url


def check_env_name(name: str) -> str:
    """An environment variable's name (where a secret is read from), never the secret itself."""
    if not _ENV_NAME.match(name):
        raise ValueError(
            f"must be the NAME of an environment variable holding the key (letters, digits, _), got a value of "
            f"{len(name)} characters that is not one (not shown: it may be the key itself, which never belongs in a "
            "file)"
        )
    return name


class StrictModel(BaseModel):
    """Strict, closed model: unknown fields are errors, values are not coerced across types.

    Each model's validator is built when it is first used, not when its module is imported (``defer_build``): a
    command imports many models it never validates (docs/dev/performance.md#models-built-when-used)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, use_enum_values=False, defer_build=True)


class Protocol(StrEnum):
    """Wire protocol an engine speaks."""

    openai = "openai"
    ollama = "ollama"


class EngineKind(StrEnum):
    """How the engine under test is provided."""

    embedded = "embedded"  # llama.cpp's llama-server started by tcobench as a local process
    endpoint = "endpoint"  # an already running server the user points at
    container = "container"  # an engine image started by tcobench as a container on a Docker host
    vllm = "vllm"  # vLLM's OpenAI api_server started by tcobench as a local process (engine.vllm.python)


class ContainerEngine(StrEnum):
    """Which engine a container image runs (its ``io.tcobench.engine`` label)."""

    llama_cpp = "llama.cpp"  # llama.cpp's llama-server (OpenAI-compatible API)
    ollama = "ollama"  # Ollama (native API)
    vllm = "vllm"  # vLLM's OpenAI api_server
    sglang = "sglang"  # SGLang's launch_server (OpenAI-compatible API)


class ClientPlacement(StrEnum):
    """Where the load generator ran relative to the engine it measured (stored on every run row)."""

    loopback = "loopback"  # same host, through the loopback interface (127.0.0.0/8, ::1): no network in TTFT
    same_host_container = "same-host-container"  # same host, through a non-loopback address of this host
    network = "network"  # another machine: every request crosses the network (see rtt_p50_ns)


class HostFactsSource(StrEnum):
    """Where a run's host facts (OS, kernel, CPU, memory) were read."""

    engine_host = "engine-host"  # by tcobench on the machine the engine runs on
    docker_daemon = "docker-daemon"  # the engine's remote Docker daemon (docker info) and its container
    client = "client"  # the load generator's machine: the engine runs elsewhere and was not asked


class GpuSource(StrEnum):
    """Where a run's accelerator facts (vendor, model, count) come from."""

    detected = "detected"  # a GPU sampler where the engine runs
    declared = "declared"  # the inventory, when nothing was detected


class GpuVendor(StrEnum):
    """Accelerator vendor of a host or an image; ``cpu`` when there is none."""

    cpu = "cpu"
    nvidia = "nvidia"
    amd = "amd"


class LoadMode(StrEnum):
    """How requests are issued."""

    closed = "closed"  # fixed concurrency: a new request starts when one finishes
    poisson = "poisson"  # open loop: arrivals drawn from a Poisson process at a fixed rate
    replay = "replay"  # open loop: each request of a trace at its recorded offset (workload.trace)


class Phase(StrEnum):
    warmup = "warmup"
    measure = "measure"


class RunStatus(StrEnum):
    ok = "ok"  # every measured request succeeded
    partial = "partial"  # the run finished but some requests failed
    failed = "failed"  # the run could not be completed
    interrupted = "interrupted"  # stopped early (a signal, or its deadline): its finished requests are kept


class FailureClass(StrEnum):
    """Why a run that is not ok failed (rules: tcobench/data/failure_classes.toml); only platform counts against
    the platform."""

    platform = "platform"  # the accelerator, its driver or runtime, the host itself
    engine = "engine"  # the engine refused the model or its arguments
    harness = "harness"  # tcobench's own fault
    infrastructure = "infrastructure"  # network, Docker daemon, orchestrator, store
    unknown = "unknown"  # no rule decided


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
