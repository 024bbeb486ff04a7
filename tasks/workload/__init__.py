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
    from tcobench.tasks.workload.plan import TAG_SPACE, TAG_WORDS, RequestInput, RequestSpec, WorkloadPlan, tag_words
    from tcobench.tasks.workload.presets import apply_preset, preset_workload, presets
    from tcobench.tasks.workload.profile_trace import TRACE_COLUMNS, profile_trace, trace_batches
    from tcobench.tasks.workload.read_trace import Trace, file_sha256, open_trace
    from tcobench.tasks.workload.tokenizer import (
        Encoded,
        EngineTokenizer,
        LocalTokenizer,
        PromptTokenizer,
        engine_tokenizer,
        lead_of_token_string,
        local_tokenizer,
    )
    from tcobench.tasks.workload.trace_prompts import TracePrompts

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
    "TAG_SPACE": "plan",
    "TAG_WORDS": "plan",
    "tag_words": "plan",
    "TRACE_COLUMNS": "profile_trace",
    "profile_trace": "profile_trace",
    "trace_batches": "profile_trace",
    "Trace": "read_trace",
    "file_sha256": "read_trace",
    "open_trace": "read_trace",
    "TracePrompts": "trace_prompts",
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
    "TAG_SPACE",
    "TAG_WORDS",
    "TRACE_COLUMNS",
    "CorpusTokens",
    "Dataset",
    "DatasetRecord",
    "Encoded",
    "EngineTokenizer",
    "LocalTokenizer",
    "PromptTokenizer",
    "RequestInput",
    "RequestSpec",
    "Trace",
    "TracePrompts",
    "WorkloadPlan",
    "apply_preset",
    "corpus_text",
    "draw_length",
    "engine_tokenizer",
    "file_sha256",
    "gguf_tokenizer",
    "lead_of_token_string",
    "local_tokenizer",
    "open_dataset",
    "open_trace",
    "preset_workload",
    "presets",
    "profile_trace",
    "read_gguf_metadata",
    "rng_for",
    "tag_words",
    "tokenize_corpus",
    "trace_batches",
]


__getattr__, __dir__ = lazy.names(__name__, _HOMES, __all__)
lazy.keep_functions(__name__, _HOMES)
