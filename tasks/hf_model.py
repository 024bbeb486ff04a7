"""synth_hf_model / check_hf_model: a Hugging Face model folder of a ``schemas.SHAPES`` shape, for vLLM's
``--load-format dummy`` (random weights: no weight file, no download).

The folder holds ``config.json`` (``LlamaForCausalLM`` of the shape, plus ``tcobench_synthetic: true``) and a
byte-level BPE ``tokenizer.json`` trained on the shipped public-domain corpus. The tokenizer is trained by the
engine's own Python (it has ``tokenizers``, a vLLM dependency), so tcobench needs no tokenizer library itself. The
vocabulary (4,096 entries) sets the embedding and output matrices: a shape's parameter count differs from the
original model's by those two matrices.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tcobench.errors import ConfigError, EngineError
from tcobench.schemas import SHAPES, ModelShape
from tcobench.tasks.workload import corpus_text

__all__ = ["HF_SYNTHETIC_KEY", "VOCAB_SIZE", "check_hf_model", "hf_config", "is_hf_synthetic", "synth_hf_model"]

HF_SYNTHETIC_KEY = "tcobench_synthetic"
VOCAB_SIZE = 4096
_BOS, _EOS = "<s>", "</s>"
_TRAIN = """
import sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
corpus, out, vocab, bos, eos = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
text = open(corpus, encoding="utf-8").read()
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=[bos, eos], show_progress=False,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train_from_iterator([text[i:i + 4000] for i in range(0, len(text), 4000)], trainer)
tok.post_processor = processors.TemplateProcessing(single=bos + " $A", special_tokens=[(bos, tok.token_to_id(bos))])
tok.save(out)
"""


def hf_config(shape: ModelShape, vocab: int = VOCAB_SIZE) -> dict[str, object]:
    """config.json of a Llama decoder of ``shape`` (token ids 0 and 1 are BOS and EOS of the trained tokenizer)."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": shape.n_embd,
        "intermediate_size": shape.n_ff,
        "num_hidden_layers": shape.n_layer,
        "num_attention_heads": shape.n_head,
        "num_key_value_heads": shape.n_head_kv,
        "head_dim": shape.n_embd // shape.n_head,
        "max_position_embeddings": shape.context_length,
        "vocab_size": vocab,
        "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "bos_token_id": 0,
        "eos_token_id": 1,
        HF_SYNTHETIC_KEY: True,
        "tcobench_shape": shape.name,
    }


def _shape(name: str) -> ModelShape:
    if name not in SHAPES:
        raise ConfigError(f"unknown model shape {name!r} (model.shape / --synthetic); shapes: {', '.join(SHAPES)}")
    return SHAPES[name]


def synth_hf_model(shape_name: str, out: Path, python: Path) -> Path:
    """The model folder of ``shape_name`` under ``out`` (written once, atomically; reused when complete)."""
    shape = _shape(shape_name)
    folder = out / f"{shape.name}-v1"
    if (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file():
        return folder
    tmp = out / f".{folder.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        corpus = tmp / "corpus.txt"
        corpus.write_text(corpus_text(), "utf-8")
        done = subprocess.run(
            [str(python), "-c", _TRAIN, str(corpus), str(tmp / "tokenizer.json"), str(VOCAB_SIZE), _BOS, _EOS],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise EngineError(f"training the synthetic model's tokenizer with {python} failed: {tail}")
        corpus.unlink()
        (tmp / "config.json").write_text(json.dumps(hf_config(shape), indent=2), "utf-8")
        (tmp / "tokenizer_config.json").write_text(
            json.dumps(
                {
                    "tokenizer_class": "PreTrainedTokenizerFast",
                    "bos_token": _BOS,
                    "eos_token": _EOS,
                    "model_max_length": shape.context_length,
                    "clean_up_tokenization_spaces": False,
                }
            ),
            "utf-8",
        )
        shutil.rmtree(folder, ignore_errors=True)  # an incomplete copy from a crashed write
        tmp.replace(folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def check_hf_model(folder: Path) -> None:
    """ConfigError naming the missing file unless ``folder`` is a model folder (a config.json in a directory)."""
    if not folder.is_dir():
        raise ConfigError(f"model folder {folder} does not exist or is not a directory (model.path / --model-path)")
    if not (folder / "config.json").is_file():
        raise ConfigError(f"model folder {folder} has no config.json: {folder / 'config.json'} is missing")


def is_hf_synthetic(folder: Path) -> bool:
    """Whether a model folder's config.json says tcobench wrote it with random weights."""
    try:
        return bool(json.loads((folder / "config.json").read_text("utf-8")).get(HF_SYNTHETIC_KEY))
    except (OSError, ValueError, AttributeError):
        return False
