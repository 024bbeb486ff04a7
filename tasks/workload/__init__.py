"""Workload shapes: the measured model's tokenizer, the shipped corpus, length distributions, datasets, presets,
and the per-request plan (a pure function of seed and request index)."""

from __future__ import annotations

from tcobench.tasks.workload.corpus import TAG_BASE, CorpusTokens, corpus_text, tokenize_corpus
from tcobench.tasks.workload.dataset import Dataset, DatasetRecord, open_dataset
from tcobench.tasks.workload.gguf_vocab import gguf_tokenizer, read_gguf_metadata
from tcobench.tasks.workload.lengths import draw_length, rng_for
from tcobench.tasks.workload.plan import TAG_WORDS, RequestInput, RequestSpec, WorkloadPlan
from tcobench.tasks.workload.presets import apply_preset, preset_workload, presets
from tcobench.tasks.workload.tokenizer import (
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
