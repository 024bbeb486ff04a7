"""synth_model / write_tokenizer: GGUF files for hosts that cannot download models.

A synthetic model has a real architecture shape (``schemas.SHAPES``) and random F16 weights, with the
tokenizer of the bundled Gemma 3 model (or any GGUF given). Dense decode speed depends on the shape and
dtype, not on weight values (vLLM's dummy load format rests on the same fact), so hosts can be compared
at 3B/8B/70B shapes offline. The file carries ``tcobench.synthetic = true``; every row measured on it
says synthetic. Note the tokenizer's vocabulary (262,144 entries for Gemma 3) sets the embedding and
output matrices, so a shape's parameter count differs from the original model's where vocabularies differ.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from tcobench.errors import ConfigError
from tcobench.schemas import ModelShape

__all__ = ["SYNTHETIC_KEY", "is_synthetic", "synth_model", "write_tokenizer"]

SYNTHETIC_KEY = "tcobench.synthetic"
_POOL = 1 << 26  # 64 Mi random F16 values (128 MB); tensors are windows of it (or tilings, when larger)


def _tokenizer_fields(source: Path) -> list[tuple[str, Any, Any, Any]]:
    """(key, value, type, sub type) of every tokenizer.* entry of a GGUF file."""
    from gguf import GGUFReader, GGUFValueType

    try:
        reader = GGUFReader(str(source))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read a tokenizer from {source}: {exc}") from exc
    out = []
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == GGUFValueType.ARRAY else None
        out.append((key, field.contents(), vtype, sub))
    if not any(k == "tokenizer.ggml.tokens" for k, *_ in out):
        raise ConfigError(f"{source} holds no tokenizer (tokenizer.ggml.tokens missing)")
    return out


def _add_fields(writer: Any, fields: list[tuple[str, Any, Any, Any]]) -> int:
    vocab = 0
    for key, value, vtype, sub in fields:
        writer.add_key_value(key, value, vtype, sub_type=sub)
        if key == "tokenizer.ggml.tokens":
            vocab = len(value)
    return vocab


def write_tokenizer(source: Path, out: Path) -> Path:
    """A tokenizer-only GGUF (a few MB) from any GGUF: what a GPU host needs to synthesise models."""
    from gguf import GGUFValueType, GGUFWriter

    fields = _tokenizer_fields(source)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    writer = GGUFWriter(str(tmp), arch="llama")
    _add_fields(writer, fields)
    writer.add_key_value("tcobench.tokenizer_only", True, GGUFValueType.BOOL)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    tmp.replace(out)
    return out


def _tensors(shape: ModelShape, vocab: int) -> Iterator[tuple[str, tuple[int, ...], Any]]:
    """(name, numpy shape rows x cols, dtype) in llama.cpp's llama layout."""
    head_dim = shape.n_embd // shape.n_head
    kv = shape.n_head_kv * head_dim
    e, ff, f16, f32 = shape.n_embd, shape.n_ff, np.float16, np.float32
    yield "token_embd.weight", (vocab, e), f16
    for i in range(shape.n_layer):
        b = f"blk.{i}."
        yield b + "attn_norm.weight", (e,), f32
        yield b + "attn_q.weight", (e, e), f16
        yield b + "attn_k.weight", (kv, e), f16
        yield b + "attn_v.weight", (kv, e), f16
        yield b + "attn_output.weight", (e, e), f16
        yield b + "ffn_norm.weight", (e,), f32
        yield b + "ffn_gate.weight", (ff, e), f16
        yield b + "ffn_up.weight", (ff, e), f16
        yield b + "ffn_down.weight", (e, ff), f16
    yield "output_norm.weight", (e,), f32
    yield "output.weight", (vocab, e), f16


def _data(pool: np.ndarray, rng: np.random.Generator, dims: tuple[int, ...], dtype: Any) -> np.ndarray:
    n = int(np.prod(dims))
    if dtype is np.float32:
        return np.ones(dims, dtype=np.float32)  # norm weights: 1.0 keeps activations finite
    if n <= pool.size:
        start = int(rng.integers(0, pool.size - n + 1))
        return pool[start : start + n].reshape(dims)
    return np.resize(pool, n).reshape(dims)


def _write_header(writer: Any, shape: ModelShape, fields: list[tuple[str, Any, Any, Any]]) -> int:
    from gguf import GGUFValueType, LlamaFileType

    writer.add_name(f"tcobench synthetic {shape.name} (random weights)")
    writer.add_context_length(shape.context_length)
    writer.add_embedding_length(shape.n_embd)
    writer.add_block_count(shape.n_layer)
    writer.add_feed_forward_length(shape.n_ff)
    writer.add_head_count(shape.n_head)
    writer.add_head_count_kv(shape.n_head_kv)
    writer.add_rope_dimension_count(shape.n_embd // shape.n_head)
    writer.add_rope_freq_base(500000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(LlamaFileType.MOSTLY_F16)
    writer.add_key_value(SYNTHETIC_KEY, True, GGUFValueType.BOOL)
    writer.add_key_value("tcobench.shape", shape.model_dump_json(), GGUFValueType.STRING)
    vocab = _add_fields(writer, fields)
    writer.add_vocab_size(vocab)
    return vocab


def synth_model(shape: ModelShape, out: Path, tokenizer: Path, seed: int = 0) -> Path:
    """Write a random-weight F16 GGUF of ``shape`` with ``tokenizer``'s vocabulary; atomic (temp + rename)."""
    from gguf import GGUFWriter

    fields = _tokenizer_fields(tokenizer)
    rng = np.random.default_rng(seed)
    pool = (rng.standard_normal(_POOL, dtype=np.float32) * 0.02).astype(np.float16)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        writer = GGUFWriter(str(tmp), arch="llama")
        vocab = _write_header(writer, shape, fields)
        plan = list(_tensors(shape, vocab))
        for name, dims, dtype in plan:
            nbytes = int(np.prod(dims)) * np.dtype(dtype).itemsize
            writer.add_tensor_info(name, dims, np.dtype(dtype), nbytes)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        for _name, dims, dtype in plan:
            writer.write_tensor_data(_data(pool, rng, dims, dtype))
        writer.close()
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def is_synthetic(path: Path) -> bool:
    """Whether a GGUF file was written by synth_model (its metadata read by the memory-mapped reader: the ``gguf``
    package's reader parses the whole vocabulary to read this one key; figures: docs/dev/performance.md#gguf-reader)."""
    from tcobench.tasks.workload.gguf_vocab import read_gguf_metadata

    try:
        return bool(read_gguf_metadata(path, prefix=SYNTHETIC_KEY).get(SYNTHETIC_KEY))
    except ConfigError:  # not a GGUF file, or not readable
        return False
