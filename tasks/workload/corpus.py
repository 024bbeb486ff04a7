"""The shipped public-domain corpus, cut into token-exact passages with the measured model's tokenizer.

Corpus: Ambrose Bierce, *The Devil's Dictionary* (1911; public domain, copyright expired), from Debian's
``dict-devil`` 1.0-13.1 (``devil.dict.dz``), hard line breaks joined into one line per paragraph
(``data/CORPUS.md``). About 355 kB; 82,000 Gemma 3 tokens.

Design notes: docs/dev/architecture/workloads.md#tasks-workload-corpus.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources

from tcobench.errors import ConfigError
from tcobench.tasks.workload.tokenizer import PromptTokenizer

__all__ = ["TAG_BASE", "CorpusTokens", "corpus_text", "tokenize_corpus"]

TAG_BASE = 64  # tag words: a unique tag of k words tells TAG_BASE**k prompts apart
_CHUNK_CHARS = 8000


@cache
def corpus_text() -> str:
    """The shipped corpus (package data ``tasks/workload/data/corpus.txt``)."""
    return resources.files("tcobench.tasks.workload").joinpath("data/corpus.txt").read_text("utf-8")


@dataclass(frozen=True)
class CorpusTokens:
    """The corpus in one tokenizer's tokens: where windows may start and end, and the tag words."""

    text: str
    ids: list[int]
    spans: list[tuple[int, int]] | None  # character span per token; None: cut by decoding
    starts: list[int]  # token positions that start with a space (a window may begin there)
    ends: frozenset[int]  # token positions a window may end before (space or newline first, or the end)
    tag_words: tuple[str, ...]  # TAG_BASE words, each " word" and one token
    lead: str  # a word that is one token with and without a leading space (written without it)
    tokenizer: PromptTokenizer

    def window(self, start: int, size: int) -> str:
        """Text of tokens [start, start + size)."""
        if self.spans is None:
            return self.tokenizer.decode(self.ids[start : start + size])
        first = self.spans[start][0]
        last = self.spans[start + size][0] if start + size < len(self.ids) else len(self.text)
        return self.text[first:last]

    def window_start(self, wanted: int, size: int) -> int:
        """The first position at or after ``wanted`` (wrapping) where a window of ``size`` tokens may be cut."""
        limit = len(self.ids) - size
        if limit < 0 or not self.starts:
            raise ConfigError(f"a passage of {size} tokens is longer than the corpus ({len(self.ids)} tokens)")
        at = bisect.bisect_left(self.starts, min(wanted, limit))
        for _ in range(2):  # from `wanted` to the end, then from the beginning
            for pos in self.starts[at:]:
                if pos > limit:
                    break
                if pos + size in self.ends:
                    return pos
            at = 0
        raise ConfigError(f"no passage of {size} tokens can be cut from the corpus with this tokenizer")


def _chunks(text: str) -> list[tuple[int, str]]:
    """(offset, chunk) pieces of about _CHUNK_CHARS, split after paragraph breaks."""
    out, at = [], 0
    while at < len(text):
        end = text.find("\n\n", at + _CHUNK_CHARS)
        end = len(text) if end < 0 else end + 2
        out.append((at, text[at:end]))
        at = end
    return out


def _pieces(corpus: CorpusTokens, tokenizer: PromptTokenizer, tokens: list[int]) -> list[str]:
    """The text of each of ``tokens`` (each starts with a space): cut from the corpus, or decoded in one call."""
    if corpus.spans is not None:
        return [corpus.window(corpus.ids.index(t), 1) for t in tokens]
    joined = tokenizer.decode(tokens)  # " w1 w2 ..." when every piece is one space and a word
    parts = [" " + p for p in joined.split(" ")[1:]]
    if joined.startswith(" ") and len(parts) == len(tokens):
        return parts
    return [tokenizer.decode([t]) for t in tokens]


def _words(corpus: CorpusTokens, tokenizer: PromptTokenizer) -> tuple[tuple[str, ...], str]:
    """(TAG_BASE tag words, the lead word): the corpus's most frequent one-token words, in a fixed order."""
    counts: Counter[int] = Counter(corpus.ids[pos] for pos in corpus.starts)
    ranked = [token for token, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[: 4 * TAG_BASE]]
    words = [w for w in _pieces(corpus, tokenizer, ranked) if w[1:].isalpha() and 2 <= len(w) - 1 <= 12]
    tags = tuple(w for w in words if w[1:].islower())[:TAG_BASE]
    lead = next((w[1:] for w in words if tokenizer.count(w[1:]) == 1), None)
    if len(tags) < TAG_BASE or lead is None:
        raise ConfigError(f"tokenizer {tokenizer.name}: too few one-token words in the corpus to tag prompts")
    return tags, lead


def tokenize_corpus(tokenizer: PromptTokenizer) -> CorpusTokens:
    """The corpus in ``tokenizer``'s tokens (one pass, chunked), with window boundaries and tag words."""
    text = corpus_text()
    ids: list[int] = []
    spans: list[tuple[int, int]] | None = []
    leads: list[str] | None = []
    for offset, chunk in _chunks(text):
        encoded = tokenizer.encode(chunk)
        ids.extend(encoded.ids)
        if spans is not None and encoded.spans is not None:
            spans.extend((offset + a, offset + b) for a, b in encoded.spans)
        else:
            spans = None
        if leads is not None and encoded.spans is not None:
            leads.extend(chunk[a : a + 1] for a, _ in encoded.spans)
        elif leads is not None and encoded.leads is not None:
            leads.extend(encoded.leads)
        else:
            leads = None
    if leads is None:
        raise ConfigError(
            f"tokenizer {tokenizer.name} tells neither where its tokens lie in the text nor how they are spelled; "
            "give workload.tokenizer a local tokenizer.json or .gguf of the model"
        )
    starts = [i for i, lead in enumerate(leads) if lead == " "]
    ends = frozenset([i for i, lead in enumerate(leads) if lead in (" ", "\n")] + [len(ids)])
    corpus = CorpusTokens(text, ids, spans, starts, ends, (), "", tokenizer)
    return CorpusTokens(text, ids, spans, starts, ends, *_words(corpus, tokenizer), tokenizer)
