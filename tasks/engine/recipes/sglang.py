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
) -> tuple[list[str], dict[str, Any]]:
    """(launch_server arguments, recorded settings); engine.vllm's dtype, length and extra args apply to SGLang too."""
    v = config.engine.vllm
    settings: dict[str, Any] = {
        "dtype": v.dtype,
        "context_length": v.max_model_len,
        "tp_size": tp,
        "max_running_requests": slots,
        "extra_args": list(v.extra_args),
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
        str(slots),
        "--enable-metrics",
        *v.extra_args,
    ]
    return args, settings


@register(ContainerEngine.sglang, Protocol.openai)
class SglangRecipe(HfServerRecipe):
    arguments = staticmethod(sglang_arguments)
    module = "sglang"
