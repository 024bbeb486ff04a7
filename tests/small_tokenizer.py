"""A small byte-level BPE tokenizer trained on the shipped corpus: a model vocabulary unlike Gemma 3's, for tests
that must show prompts are built (and counted) with *the measured model's* tokenizer. Trained locally with the
``tokenizers`` library in about a second; nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

from tcobench.tasks.workload import corpus_text

__all__ = ["BOS", "train_tokenizer"]

BOS = "<s>"


def train_tokenizer(folder: Path, vocab_size: int = 3000) -> Path:
    """tokenizer.json of a byte-level BPE (vocab_size entries, BOS added to every prompt) under ``folder``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[BOS],
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    text = corpus_text()
    tokenizer.train_from_iterator([text[i : i + 4000] for i in range(0, len(text), 4000)], trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", special_tokens=[(BOS, tokenizer.token_to_id(BOS))]
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tokenizer.json"
    tokenizer.save(str(path))
    return path
