"""TracePrompts: the token-exact synthetic prompt of a trace request that records lengths (Mooncake, Azure), with
the prefix blocks its ``hash_ids`` name shared exactly between the requests that name them: blocks of
MOONCAKE_BLOCK_TOKENS tokens, each a unique tag spelling its hash id (or the request's own number) and a corpus
passage chosen from the workload seed and that id.

Design notes: docs/dev/architecture/workloads.md#tasks-workload-trace-prompts.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcobench.errors import ConfigError
from tcobench.schemas import MOONCAKE_BLOCK_TOKENS, TraceRequest
from tcobench.tasks.workload.corpus import CorpusTokens
from tcobench.tasks.workload.lengths import rng_for
from tcobench.tasks.workload.plan import TAG_SPACE, TAG_WORDS, tag_words

__all__ = ["TracePrompts"]

_OWN = TAG_SPACE // 2  # tag numbers below: hash ids; from here on: requests' own blocks (by request index)


@dataclass(frozen=True)
class TracePrompts:
    """Prompts for the requests of one trace, for one engine (its tokenizer's corpus, its prompt overhead)."""

    corpus: CorpusTokens
    overhead: int
    seed: int
    block_tokens: int = MOONCAKE_BLOCK_TOKENS

    def text(self, request: TraceRequest, index: int) -> str:
        """The prompt of ``request`` (the ``index``-th of the replay): ``input_tokens`` tokens with the overhead."""
        total = request.input_tokens
        if total is None:
            raise ConfigError(f"trace line {request.line}: the request records no input length to build a prompt of")
        content = total - self.overhead
        if content < TAG_WORDS:
            raise ConfigError(
                f"trace line {request.line}: input length {total} leaves {content} tokens after the {self.overhead} "
                f"the server adds, fewer than the {TAG_WORDS} of a prompt's tag"
            )
        if not 0 <= index < TAG_SPACE - _OWN:
            raise ConfigError(f"trace request index {index} exceeds the {TAG_SPACE - _OWN} prompts a replay can tag")
        blocks = -(-content // self.block_tokens)
        pieces = [
            self._block(request, index, j, min(self.block_tokens, content - j * self.block_tokens))
            for j in range(blocks)
        ]
        return "".join(pieces).lstrip()

    def _block(self, request: TraceRequest, index: int, j: int, size: int) -> str:
        if j < len(request.hash_ids):
            number = request.hash_ids[j]
            if not 0 <= number < _OWN:
                raise ConfigError(f"trace line {request.line}: hash id {number} is outside 0 ... {_OWN - 1}")
            key: tuple[object, ...] = (self.seed, "trace-block", number)
        else:
            number, key = _OWN + index, (self.seed, "trace-request", index, j)
        tag = tag_words(self.corpus, number)[: min(size, TAG_WORDS)]
        text = " " + "".join(tag)
        passage = size - TAG_WORDS
        if passage > 0:
            wanted = rng_for(*key).randrange(len(self.corpus.ids))
            text += self.corpus.window(self.corpus.window_start(wanted, passage), passage)
        return text
