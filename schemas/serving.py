"""A serving configuration: what changes what the engine does, and the GPUs it was given (issue 40).

A platform is never measured in one way: the same hardware, engine and model serve at tensor parallel 1, 2, 4 or 8,
with several batch limits, in FP8 or BF16. Each run stores its configuration (``ServingConfig``) and a short stable
``config_id`` (the first 12 hex digits of the sha256 of its canonical JSON), so the frontier is drawn per
configuration and a platform compared at its best one (its envelope), never as an average of several.

``DeclaredServing`` is what a matrix says of an engine tcobench does not launch (an endpoint): its GPUs and free-form
settings. ``GpusSource`` says where a run's GPU count came from.
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum

from pydantic import Field, JsonValue

from tcobench.schemas.base import StrictModel

__all__ = ["CONFIG_ID_LENGTH", "DeclaredServing", "GpusSource", "ServingConfig", "config_label"]

CONFIG_ID_LENGTH = 12  # hex digits of the sha256 kept as config_id


class GpusSource(StrEnum):
    """Where the GPUs a configuration was given were counted from (runs.gpus_given_source)."""

    device_list = "device_list"  # the devices handed to the engine (container device ids)
    handed_count = "count"  # a GPU count handed to the engine (container --gpus N)
    parallel = "parallel"  # tensor x pipeline x data parallel of an engine tcobench starts
    declared = "declared"  # the matrix's `gpus` of an engine tcobench does not launch
    host = "host"  # every GPU of the host (a container given all of them; an endpoint as declared by the host)
    cpu = "cpu"  # no GPU: the engine runs on the CPU (counted as one device)


class DeclaredServing(StrictModel):
    """An engine tcobench does not launch (an endpoint), as its matrix declares it."""

    gpus: int | None = Field(
        default=None, gt=0, description="GPUs the engine serves on; default: the host's declared gpu_count."
    )
    settings: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="Free-form settings that identify the configuration (e.g. tensor_parallel, max_num_seqs); they "
        "enter its config_id.",
    )


class ServingConfig(StrictModel):
    """One serving configuration: every field changes what the engine does; ``config_id`` hashes them all."""

    engine: str = Field(description="Engine product, e.g. vllm, llama.cpp (runs.engine_name).")
    engine_version: str = Field(description="Engine version as the engine reports it (runs.engine_version).")
    model: str = Field(description="Model name as served (runs.model_name).")
    dtype: str | None = Field(default=None, description="Weights' dtype or quantisation, e.g. bfloat16, fp8.")
    tensor_parallel: int | None = Field(default=None, description="GPUs one model copy spans (TP).")
    pipeline_parallel: int | None = Field(default=None, description="Pipeline stages (PP).")
    data_parallel: int | None = Field(default=None, description="Model copies behind one server (DP).")
    max_num_seqs: int | None = Field(default=None, description="Batch limit: sequences decoded at once (slots).")
    max_batched_tokens: int | None = Field(default=None, description="Batch limit: tokens per engine step.")
    kv_cache_dtype: str | None = Field(default=None, description="KV-cache dtype, e.g. fp8, q8_0.")
    speculative: str | None = Field(default=None, description="Speculative decoding settings (JSON), if any.")
    extra_args: tuple[str, ...] = Field(default=(), description="Further engine arguments, as given.")
    settings: dict[str, JsonValue] = Field(
        default_factory=dict, description="Other settings that change what the engine does (declared or pinned)."
    )
    gpus: int | None = Field(
        ge=0, description="GPUs the engine was given (0: none, it runs on the CPU; null: not known)."
    )

    def canonical(self) -> str:
        """The configuration as canonical JSON (sorted keys, no spaces): what config_id hashes."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @property
    def config_id(self) -> str:
        return hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()[:CONFIG_ID_LENGTH]

    def label(self) -> str:
        """'vllm 0.32.0, TP=4, max_num_seqs 256, 4 GPUs': the engine and what is set, as a verdict names it."""
        version = "" if self.engine_version in ("", "unknown") else f" {self.engine_version}"
        parts = [f"{self.engine}{version}"]
        for name, value in (("TP", self.tensor_parallel), ("PP", self.pipeline_parallel), ("DP", self.data_parallel)):
            if value is not None and (value > 1 or name == "TP"):
                parts.append(f"{name}={value}")
        for name, text in (
            ("max_num_seqs", self.max_num_seqs),
            ("max_batched_tokens", self.max_batched_tokens),
            ("dtype", self.dtype),
            ("kv", self.kv_cache_dtype),
            ("spec", self.speculative),
        ):
            if text is not None:
                parts.append(f"{name} {text}")
        parts += [f"{key} {json.dumps(value)}" for key, value in sorted(self.settings.items())]
        if self.extra_args:
            parts.append(" ".join(self.extra_args))
        if self.gpus is not None:
            parts.append("CPU" if self.gpus == 0 else f"{self.gpus} GPU" + ("s" if self.gpus > 1 else ""))
        return ", ".join(parts)


def config_label(serving_config: str | None) -> str | None:
    """A stored serving_config's label (ServingConfig.label); None for a row stored before configurations. A value
    that is not a whole ServingConfig (written by another tool, or by hand) is named by what it holds, never an
    error: a verdict must not fail on one row's description."""
    if not serving_config:
        return None
    try:
        return ServingConfig.model_validate_json(serving_config).label()
    except ValueError:  # pydantic's ValidationError included
        pass
    try:
        held = json.loads(serving_config)
    except ValueError:
        return serving_config
    if isinstance(held, dict) and held:
        return ", ".join(f"{key} {json.dumps(value)}" for key, value in sorted(held.items()))
    return serving_config
