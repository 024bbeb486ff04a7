"""serving_columns: a run's serving configuration (schemas.ServingConfig), its config_id and the GPUs it was given.

The launcher of each engine kind knows its own knobs (``RunningEngine.serving``: the batch limit, the parallel
sizes, the dtype...); this module adds the engine's name and version, the model and the GPUs handed to the engine
(``gpus_given``: the rules in docs/dev/architecture/hosts-and-engines.md#tasks-engine-serving).
"""

from __future__ import annotations

import math
from typing import Any

from tcobench.schemas import (
    BenchmarkConfig,
    EngineKind,
    GpusSource,
    GpuVendor,
    ServingConfig,
    VllmSettings,
)

__all__ = ["gpus_given", "serving_columns", "serving_config", "vllm_knobs"]


def vllm_knobs(v: VllmSettings, tp: int, slots: int) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """The serving knobs of vLLM's api_server: (their arguments, the settings recorded beside the others, the serving
    configuration's fields: schemas.ServingConfig). The batch limit is engine.vllm.max_num_seqs, else the
    workload's highest concurrency (``slots``); pipeline and data parallel, the batched-token limit, the KV-cache dtype
    and speculative decoding are passed only when set."""
    seqs = v.max_num_seqs or max(slots, 1)
    args = ["--tensor-parallel-size", str(tp), "--max-num-seqs", str(seqs)]
    recorded: dict[str, Any] = {}
    optional = (
        (
            "--pipeline-parallel-size",
            "pipeline_parallel_size",
            v.pipeline_parallel if v.pipeline_parallel > 1 else None,
        ),
        ("--data-parallel-size", "data_parallel_size", v.data_parallel if v.data_parallel > 1 else None),
        ("--max-num-batched-tokens", "max_num_batched_tokens", v.max_batched_tokens),
        ("--kv-cache-dtype", "kv_cache_dtype", v.kv_cache_dtype),
        ("--speculative-config", "speculative_config", v.speculative),
    )
    for flag, key, value in optional:
        if value is not None:
            args += [flag, str(value)]
            recorded[key] = value
    serving = {
        "dtype": v.dtype,
        "tensor_parallel": tp,
        "pipeline_parallel": v.pipeline_parallel,
        "data_parallel": v.data_parallel,
        "max_num_seqs": seqs,
        "max_batched_tokens": v.max_batched_tokens,
        "kv_cache_dtype": v.kv_cache_dtype,
        "speculative": v.speculative,
        "extra_args": tuple(v.extra_args),
        "settings": {"max_model_len": v.max_model_len},
    }
    return args, recorded, serving


def _host_gpus(config: BenchmarkConfig, detected: int | None) -> int | None:
    """Every GPU of the host: detected where the engine runs, else the inventory's count; None when neither."""
    if detected:
        return detected
    declared = config.declared.gpu_count if config.declared is not None else 0
    return declared or None


def gpus_given(
    config: BenchmarkConfig, detected: int | None, knobs: dict[str, Any] | None = None
) -> tuple[int | None, GpusSource | None]:
    """(GPUs handed to the engine, where that count came from), by the module docstring's rules; ``knobs``: the
    launcher's serving fields (an engine that splits a model by tensor, pipeline and data parallel names them)."""
    kind, container, given = config.engine.kind, config.engine.container, knobs or {}
    if kind is EngineKind.embedded or (container is not None and container.gpu.vendor is GpuVendor.cpu):
        return 0, GpusSource.cpu
    if kind is EngineKind.vllm or given.get("tensor_parallel") is not None:
        v = config.engine.vllm
        sizes = [given.get(k) or getattr(v, k) for k in ("tensor_parallel", "pipeline_parallel", "data_parallel")]
        return math.prod(int(size) for size in sizes), GpusSource.parallel
    if kind is EngineKind.endpoint:
        declared = config.engine.serving.gpus if config.engine.serving is not None else None
        if declared is not None:
            return declared, GpusSource.declared
        host = _host_gpus(config, None)
        return (host, GpusSource.host) if host else (None, None)
    assert container is not None  # EngineConfig: kind container has one
    gpu = container.gpu
    if gpu.device_ids:
        return len(gpu.device_ids), GpusSource.device_list
    if gpu.count is not None and gpu.count > 0:
        return gpu.count, GpusSource.handed_count
    host = _host_gpus(config, detected)
    return (host, GpusSource.host) if host else (None, None)


def serving_config(
    config: BenchmarkConfig, engine: str, version: str, knobs: dict[str, Any], gpus: int | None
) -> ServingConfig:
    """The run's serving configuration: the launcher's ``knobs``, an endpoint's declared settings, the engine, its
    version, the model and ``gpus`` (None: unknown)."""
    fields = dict(knobs)
    if config.engine.serving is not None and config.engine.serving.settings:
        fields["settings"] = {**fields.get("settings", {}), **config.engine.serving.settings}
    return ServingConfig(engine=engine, engine_version=version, model=config.model.name, gpus=gpus, **fields)


def serving_columns(
    config: BenchmarkConfig, engine: str, version: str, knobs: dict[str, Any], detected: int | None
) -> dict[str, Any]:
    """The RunRecord columns of the serving configuration: config_id, serving_config, its knobs, gpus_given and
    gpus_given_source."""
    gpus, source = gpus_given(config, detected, knobs)
    found = serving_config(config, engine, version, knobs, gpus)
    return {
        "config_id": found.config_id,
        "serving_config": found.canonical(),
        "dtype": found.dtype,
        "tensor_parallel": found.tensor_parallel,
        "pipeline_parallel": found.pipeline_parallel,
        "data_parallel": found.data_parallel,
        "max_num_seqs": found.max_num_seqs,
        "max_batched_tokens": found.max_batched_tokens,
        "kv_cache_dtype": found.kv_cache_dtype,
        "speculative": found.speculative,
        "gpus_given": gpus,
        "gpus_given_source": source.value if source is not None else None,
    }
