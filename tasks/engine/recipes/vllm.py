"""vLLM's OpenAI api_server in a container (images vllm-cuda, vllm-rocm): its arguments, health, readiness, metrics.

Launch: ``--model`` (a folder mounted read-only, or a model id), ``--served-model-name`` = model.name, ``--dtype``,
``--max-model-len``, ``--tensor-parallel-size`` = the GPUs handed to the container, ``--max-num-seqs`` = the highest
concurrency, ``--host``/``--port`` (127.0.0.1 for a local daemon), ``--enable-prompt-tokens-details`` (cached tokens in
usage). Health: ``GET /health``; readiness: the model listed by ``/v1/models`` (preflight); metrics: ``/metrics``
(``vllm:`` names, scraped by tasks.host.engine_metrics.vllm). Recorded: every launch argument above, the load format and
the extra arguments.
"""

from __future__ import annotations

from typing import Any

from tcobench.schemas import BenchmarkConfig, ContainerEngine, Protocol
from tcobench.tasks.engine.recipes.base import register
from tcobench.tasks.engine.recipes.hf_server import HfServerRecipe
from tcobench.tasks.engine.serving import vllm_knobs

__all__ = ["VllmRecipe", "vllm_arguments"]


def vllm_arguments(
    config: BenchmarkConfig, slots: int, bind: str, port: int, model: str, tp: int
) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """(api_server arguments, recorded settings, the serving configuration's fields: ``vllm_knobs``)."""
    v = config.engine.vllm
    knob_args, recorded, serving = vllm_knobs(v, tp, slots)
    settings: dict[str, Any] = {
        "dtype": v.dtype,
        "max_model_len": v.max_model_len,
        "tensor_parallel_size": tp,
        "max_num_seqs": serving["max_num_seqs"],
        "load_format": v.load_format or "auto",
        "extra_args": list(v.extra_args),
        **recorded,
    }
    args = [
        "--model",
        model,
        "--served-model-name",
        config.model.name,
        "--host",
        bind,
        "--port",
        str(port),
        "--dtype",
        v.dtype,
        "--max-model-len",
        str(v.max_model_len),
        *knob_args,
        "--load-format",
        settings["load_format"],
        "--enable-prompt-tokens-details",
        "--disable-uvicorn-access-log",
        *v.extra_args,
    ]
    return args, settings, serving


@register(ContainerEngine.vllm, Protocol.openai)
class VllmRecipe(HfServerRecipe):
    arguments = staticmethod(vllm_arguments)
    module = "vllm"
