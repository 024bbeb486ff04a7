"""Settings of vLLM started by tcobench as a local process (``engine.kind = "vllm"``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from tcobench.schemas.base import StrictModel
from tcobench.schemas.flags import Flag

__all__ = ["VLLM_PYTHON_ENV", "VllmSettings"]

VLLM_PYTHON_ENV = "TCOBENCH_VLLM_PYTHON"  # the Python with vLLM when engine.vllm.python is not given


class VllmSettings(StrictModel):
    """How tcobench starts ``python -m vllm.entrypoints.openai.api_server``; every value is recorded per run."""

    python: Annotated[
        Path | None,
        Flag(
            "--engine vllm: a Python with vLLM installed [$TCOBENCH_VLLM_PYTHON].",
            name="vllm_python",
            show_default=False,
        ),
    ] = Field(
        default=None,
        description="Python interpreter that has vLLM installed (e.g. a venv's bin/python); default: "
        "$TCOBENCH_VLLM_PYTHON.",
    )
    dtype: str = Field(default="bfloat16", min_length=1, description="--dtype of the weights and activations.")
    max_model_len: int = Field(default=2048, gt=0, description="--max-model-len: context per sequence, tokens.")
    tensor_parallel: int = Field(default=1, gt=0, description="--tensor-parallel-size: GPUs one model spans.")
    pipeline_parallel: int = Field(default=1, gt=0, description="--pipeline-parallel-size: pipeline stages.")
    data_parallel: int = Field(default=1, gt=0, description="--data-parallel-size: model copies behind the server.")
    max_num_seqs: int | None = Field(
        default=None,
        gt=0,
        description="--max-num-seqs (SGLang: --max-running-requests): sequences decoded at once; default: the "
        "workload's highest concurrency.",
    )
    max_batched_tokens: int | None = Field(
        default=None, gt=0, description="--max-num-batched-tokens (SGLang: --chunked-prefill-size); default: vLLM's."
    )
    kv_cache_dtype: str | None = Field(
        default=None, min_length=1, description="--kv-cache-dtype, e.g. fp8; default: the engine's (auto)."
    )
    speculative: str | None = Field(
        default=None, min_length=1, description="--speculative-config (a JSON object, vLLM); default: none."
    )

    @property
    def gpus(self) -> int:
        """GPUs one server spans: tensor x pipeline x data parallel."""
        return self.tensor_parallel * self.pipeline_parallel * self.data_parallel

    load_format: str | None = Field(
        default=None,
        description="--load-format; default: dummy (random weights) for a synthetic model, else vLLM's own (auto).",
    )
    kv_cache_gib: int | None = Field(
        default=None, gt=0, description="VLLM_CPU_KVCACHE_SPACE (CPU backend only): KV cache size, GiB."
    )
    extra_args: tuple[str, ...] = Field(default=(), description="Further api_server arguments, passed as given.")
