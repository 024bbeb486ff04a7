"""Workload shapes: the measured model's tokenizer, the shipped corpus, length distributions, datasets, presets,
and the per-request plan (a pure function of seed and request index)."""

from __future__ import annotations

from .corpus import TAG_BASE, CorpusTokens, corpus_text, tokenize_corpus
from .dataset import Dataset, DatasetRecord, open_dataset
from .gguf_vocab import gguf_tokenizer, read_gguf_metadata
from .lengths import draw_length, rng_for
from .plan import TAG_WORDS, RequestInput, RequestSpec, WorkloadPlan
from .presets import apply_preset, preset_workload, presets
from .tokenizer import (
    Encoded,
    EngineTokenizer,
    LocalTokenizer,
    PromptTokenizer,
    engine_tokenizer,
    lead_of_token_string,
    local_tokenizer,
)

__all__ = [
    "TAG_BASE",
    "TAG_WORDS",
    "CorpusTokens",
    "Dataset",
    "DatasetRecord",
    "Encoded",
    "EngineTokenizer",
    "LocalTokenizer",
    "PromptTokenizer",
    "RequestInput",
    "RequestSpec",
    "WorkloadPlan",
    "apply_preset",
    "corpus_text",
    "draw_length",
    "engine_tokenizer",
    "gguf_tokenizer",
    "lead_of_token_string",
    "local_tokenizer",
    "open_dataset",
    "preset_workload",
    "presets",
    "read_gguf_metadata",
    "rng_for",
    "tokenize_corpus",
]
