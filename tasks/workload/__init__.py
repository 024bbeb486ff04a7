"""Workload shapes: the measured model's tokenizer, the shipped corpus, length distributions, datasets, presets,
and the per-request plan (a pure function of seed and request index).

The names load on first use (PEP 562): a module that needs one of them (``accuracy``'s name rule, read by compare)
does not import the tokenizers, the HTTP client and the corpus with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcobench import lazy

if TYPE_CHECKING:
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

_HOMES = {
    "CorpusTokens": "corpus",
    "TAG_BASE": "corpus",
    "corpus_text": "corpus",
    "tokenize_corpus": "corpus",
    "Dataset": "dataset",
    "DatasetRecord": "dataset",
    "open_dataset": "dataset",
    "gguf_tokenizer": "gguf_vocab",
    "read_gguf_metadata": "gguf_vocab",
    "draw_length": "lengths",
    "rng_for": "lengths",
    "RequestInput": "plan",
    "RequestSpec": "plan",
    "TAG_WORDS": "plan",
    "WorkloadPlan": "plan",
    "apply_preset": "presets",
    "preset_workload": "presets",
    "presets": "presets",
    "Encoded": "tokenizer",
    "EngineTokenizer": "tokenizer",
    "LocalTokenizer": "tokenizer",
    "PromptTokenizer": "tokenizer",
    "engine_tokenizer": "tokenizer",
    "lead_of_token_string": "tokenizer",
    "local_tokenizer": "tokenizer",
}

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


__getattr__, __dir__ = lazy.names(__name__, _HOMES, __all__)
lazy.keep_functions(__name__, _HOMES)
