"""SGLang's server in a container (images sglang-cuda, sglang-rocm): its arguments, health, readiness, metrics.

Launch: ``python3 -m sglang.launch_server --model-path`` (a folder mounted read-only, or a model id),
``--served-model-name`` = model.name, ``--dtype``, ``--context-length``, ``--tp-size`` = the GPUs handed to the
container, ``--max-running-requests`` = the highest concurrency, ``--host``/``--port`` (127.0.0.1 for a local daemon),
``--enable-metrics``. Health: ``GET /health`` (SGLang generates one token); readiness: the model listed by
``/v1/models`` (preflight); metrics: ``/metrics`` (``sglang:`` names). Recorded: every launch argument above and the
extra arguments. SGLang caches prefixes by default (RadixAttention), like vLLM.
"""

from __future__ import annotations

from typing import Any

from tcobench.schemas import BenchmarkConfig, ContainerEngine, Protocol
from tcobench.tasks.engine.recipes.base import register
from tcobench.tasks.engine.recipes.hf_server import HfServerRecipe

__all__ = ["SglangRecipe", "sglang_arguments"]


def sglang_arguments(
    config: BenchmarkConfig, slots: int, bind: str, port: int, model: str, tp: int
) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """(launch_server arguments, recorded settings, the serving configuration's fields); engine.vllm's dtype, length,
    batch limits, KV-cache dtype and extra args apply to SGLang too (pipeline and data parallel: --pp-size, --dp-size;
    the batched-token limit: --chunked-prefill-size; speculative decoding: its own extra arguments)."""
    v = config.engine.vllm
    running = v.max_num_seqs or slots
    settings: dict[str, Any] = {
        "dtype": v.dtype,
        "context_length": v.max_model_len,
        "tp_size": tp,
        "max_running_requests": running,
        "extra_args": list(v.extra_args),
    }
    optional: list[str] = []
    for flag, key, value in (
        ("--pp-size", "pp_size", v.pipeline_parallel if v.pipeline_parallel > 1 else None),
        ("--dp-size", "dp_size", v.data_parallel if v.data_parallel > 1 else None),
        ("--chunked-prefill-size", "chunked_prefill_size", v.max_batched_tokens),
        ("--kv-cache-dtype", "kv_cache_dtype", v.kv_cache_dtype),
    ):
        if value is not None:
            optional += [flag, str(value)]
            settings[key] = value
    serving = {
        "dtype": v.dtype,
        "tensor_parallel": tp,
        "pipeline_parallel": v.pipeline_parallel,
        "data_parallel": v.data_parallel,
        "max_num_seqs": running,
        "max_batched_tokens": v.max_batched_tokens,
        "kv_cache_dtype": v.kv_cache_dtype,
        "extra_args": tuple(v.extra_args),
        "settings": {"context_length": v.max_model_len},
    }
    args = [
        "--model-path",
        model,
        "--served-model-name",
        config.model.name,
        "--host",
        bind,
        "--port",
        str(port),
        "--dtype",
        v.dtype,
        "--context-length",
        str(v.max_model_len),
        "--tp-size",
        str(tp),
        "--max-running-requests",
        str(running),
        *optional,
        "--enable-metrics",
        *v.extra_args,
    ]
    return args, settings, serving


@register(ContainerEngine.sglang, Protocol.openai)
class SglangRecipe(HfServerRecipe):
    arguments = staticmethod(sglang_arguments)
    module = "sglang"
