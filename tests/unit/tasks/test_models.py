"""synth_model / write_tokenizer on real GGUF files (small shapes, a small tokenizer written here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFReader, GGUFValueType, GGUFWriter

from tcobench.errors import ConfigError
from tcobench.schemas import SHAPES, ModelShape
from tcobench.tasks.models import is_synthetic, synth_model, write_tokenizer


@pytest.fixture
def tokenizer_source(tmp_path: Path) -> Path:
    path = tmp_path / "src.gguf"
    w = GGUFWriter(str(path), arch="gemma3")
    tokens = ["<pad>", "<eos>", "<bos>", "<unk>"] + [f"tok{i}" for i in range(96)]
    w.add_key_value("tokenizer.ggml.model", "llama", GGUFValueType.STRING)
    w.add_key_value("tokenizer.ggml.tokens", tokens, GGUFValueType.ARRAY, sub_type=GGUFValueType.STRING)
    w.add_key_value("tokenizer.ggml.scores", [0.0] * 100, GGUFValueType.ARRAY, sub_type=GGUFValueType.FLOAT32)
    w.add_key_value("tokenizer.ggml.bos_token_id", 2, GGUFValueType.UINT32)
    w.add_key_value("gemma3.block_count", 18, GGUFValueType.UINT32)  # not a tokenizer key: must not be copied
    w.add_tensor("x", np.zeros(4, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_synth_model_layout(tmp_path: Path, tokenizer_source: Path) -> None:
    shape = ModelShape(name="t", n_embd=64, n_layer=2, n_head=4, n_head_kv=2, n_ff=128)
    out = synth_model(shape, tmp_path / "m.gguf", tokenizer_source, seed=1)
    reader = GGUFReader(str(out))
    fields = reader.fields
    assert fields["general.architecture"].contents() == "llama"
    assert fields["llama.block_count"].contents() == 2 and fields["llama.attention.head_count_kv"].contents() == 2
    assert fields["tokenizer.ggml.tokens"].contents()[:3] == ["<pad>", "<eos>", "<bos>"]
    assert "gemma3.block_count" not in fields
    tensors = {t.name: tuple(int(d) for d in t.shape) for t in reader.tensors}  # GGUF order: cols, rows
    assert tensors["token_embd.weight"] == (64, 100) and tensors["output.weight"] == (64, 100)
    assert tensors["blk.1.attn_k.weight"] == (64, 32)  # 2 kv heads x 16 dims
    assert tensors["blk.0.ffn_down.weight"] == (128, 64)
    assert len(tensors) == 2 + 2 * 9 + 1
    data = next(t for t in reader.tensors if t.name == "blk.0.attn_q.weight").data
    assert np.isfinite(data).all() and 0.005 < float(np.std(data)) < 0.05
    assert is_synthetic(out) and not is_synthetic(tokenizer_source)
    assert not list(tmp_path.glob(".*.tmp"))


def test_tokenizer_only_file(tmp_path: Path, tokenizer_source: Path) -> None:
    out = write_tokenizer(tokenizer_source, tmp_path / "tok.gguf")
    fields = GGUFReader(str(out)).fields
    assert fields["tokenizer.ggml.bos_token_id"].contents() == 2 and "gemma3.block_count" not in fields
    # a tokenizer-only file is itself a valid tokenizer source
    model = synth_model(SHAPES["tiny"].model_copy(update={"n_layer": 1}), tmp_path / "m.gguf", out)
    assert GGUFReader(str(model)).fields["tokenizer.ggml.tokens"].contents()[-1] == "tok95"


def test_no_tokenizer_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "bare.gguf"
    w = GGUFWriter(str(path), arch="llama")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    with pytest.raises(ConfigError, match="holds no tokenizer"):
        synth_model(SHAPES["tiny"], tmp_path / "m.gguf", path)
    with pytest.raises(ConfigError, match="cannot read a tokenizer"):
        synth_model(SHAPES["tiny"], tmp_path / "m.gguf", tmp_path / "missing.gguf")


def test_shape_must_divide() -> None:
    with pytest.raises(ValueError, match="divisible"):
        ModelShape(name="bad", n_embd=100, n_layer=1, n_head=3, n_head_kv=1, n_ff=10)
