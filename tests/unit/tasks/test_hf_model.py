"""Synthetic Hugging Face model folders for vLLM's --load-format dummy (tasks/hf_model.py).

The tokenizer is trained by the engine's Python (it has `tokenizers`); here that is the vLLM venv of CI when
TCOBENCH_TEST_VLLM_PYTHON is set, else the test that trains one skips (fails with CI=true).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tcobench.errors import ConfigError, EngineError
from tcobench.schemas import SHAPES
from tcobench.tasks.hf_model import check_hf_model, hf_config, is_hf_synthetic, synth_hf_model
from tests.services import require


def test_config_has_the_shape_and_says_synthetic() -> None:
    config = hf_config(SHAPES["llama-3b"])
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert (config["hidden_size"], config["num_hidden_layers"], config["num_attention_heads"]) == (3072, 28, 24)
    assert (config["num_key_value_heads"], config["intermediate_size"], config["head_dim"]) == (8, 8192, 128)
    assert config["tcobench_synthetic"] is True and config["tcobench_shape"] == "llama-3b"


def test_model_folder_without_config_json_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"has no config.json: .*/config.json is missing"):
        check_hf_model(tmp_path)
    with pytest.raises(ConfigError, match="does not exist or is not a directory"):
        check_hf_model(tmp_path / "nope")
    (tmp_path / "config.json").write_text("{}")
    check_hf_model(tmp_path)
    assert not is_hf_synthetic(tmp_path)


def test_unknown_shape_lists_the_shapes(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown model shape 'llama-9b'.*llama-3b"):
        synth_hf_model("llama-9b", tmp_path, Path(sys.executable))


def test_a_python_without_tokenizers_is_one_engine_error(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named tokenizers' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(EngineError, match="training the synthetic model's tokenizer .* No module named tokenizers"):
        synth_hf_model("tiny", tmp_path / "out", fake)
    assert not list((tmp_path / "out").iterdir())  # nothing half-written


def test_synthetic_folder_is_written_once_and_reused(tmp_path: Path) -> None:
    python = os.environ.get("TCOBENCH_TEST_VLLM_PYTHON")
    if not python:
        require("TCOBENCH_TEST_VLLM_PYTHON is not set (a Python with tokenizers; .ci/run sets it)")
    folder = synth_hf_model("tiny", tmp_path, Path(str(python)))
    assert folder.name == "tiny-v1" and is_hf_synthetic(folder)
    vocab = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]
    assert len(vocab) == 4096
    mtime = (folder / "config.json").stat().st_mtime_ns
    assert synth_hf_model("tiny", tmp_path, Path("/nonexistent/python")) == folder  # complete: not rewritten
    assert (folder / "config.json").stat().st_mtime_ns == mtime
