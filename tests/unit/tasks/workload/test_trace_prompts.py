"""TracePrompts: a trace request's synthetic prompt has exactly its input length, and requests that name the same
``hash_ids`` blocks share exactly those blocks' tokens (and no more). The tokenizer is the small BPE trained on the
corpus (tests/small_tokenizer.py)."""

from __future__ import annotations

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import MOONCAKE_BLOCK_TOKENS, TraceRequest
from tcobench.tasks.workload import TAG_WORDS, CorpusTokens, TracePrompts, local_tokenizer, tokenize_corpus
from tests.small_tokenizer import train_tokenizer

BLOCK = MOONCAKE_BLOCK_TOKENS


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> CorpusTokens:
    return tokenize_corpus(local_tokenizer(train_tokenizer(tmp_path_factory.mktemp("tok")), None))


def request(line: int, length: int, hash_ids: tuple[int, ...] = ()) -> TraceRequest:
    return TraceRequest(line=line, at_ns=0, input_tokens=length, output_tokens=8, hash_ids=hash_ids)


def ids(corpus: CorpusTokens, text: str) -> list[int]:
    return corpus.tokenizer.encode(text).ids


@pytest.mark.parametrize("length", [TAG_WORDS + 1, 9, 200, BLOCK, BLOCK + 1, 3 * BLOCK + 17])
def test_prompts_have_the_exact_token_count(corpus: CorpusTokens, length: int) -> None:
    prompts = TracePrompts(corpus, overhead=1, seed=42)
    blocks = tuple(range(-(-length // BLOCK)))
    for index, r in enumerate([request(1, length, blocks), request(2, length)]):  # Mooncake-like, Azure-like
        assert corpus.tokenizer.count(prompts.text(r, index)) + 1 == length


def test_shared_blocks_share_exactly_their_tokens(corpus: CorpusTokens) -> None:
    prompts = TracePrompts(corpus, overhead=0, seed=42)
    a = ids(corpus, prompts.text(request(1, 3 * BLOCK + 100, (7, 8, 9, 10)), 0))
    b = ids(corpus, prompts.text(request(2, 2 * BLOCK + 300, (7, 8, 11)), 1))
    c = ids(corpus, prompts.text(request(3, 2 * BLOCK, (12, 8)), 2))
    assert (len(a), len(b), len(c)) == (3 * BLOCK + 100, 2 * BLOCK + 300, 2 * BLOCK)
    assert a[: 2 * BLOCK] == b[: 2 * BLOCK]  # blocks 7 and 8
    assert a[2 * BLOCK : 2 * BLOCK + TAG_WORDS] != b[2 * BLOCK : 2 * BLOCK + TAG_WORDS]  # 9 and 11 differ at once
    assert a[:TAG_WORDS] != c[:TAG_WORDS]  # the same block 8 after another first block shares no prefix


def test_requests_without_blocks_share_no_prefix(corpus: CorpusTokens) -> None:
    prompts = TracePrompts(corpus, overhead=1, seed=42)
    texts = [ids(corpus, prompts.text(request(i + 1, 300), i)) for i in range(50)]
    assert len({tuple(t[:TAG_WORDS]) for t in texts}) == 50


def test_same_seed_same_prompt_other_seed_other_passages(corpus: CorpusTokens) -> None:
    r = request(1, 2 * BLOCK, (1, 2))
    assert TracePrompts(corpus, 1, 42).text(r, 0) == TracePrompts(corpus, 1, 42).text(r, 5)  # blocks, not index
    assert TracePrompts(corpus, 1, 42).text(r, 0) != TracePrompts(corpus, 1, 7).text(r, 0)


def test_a_prompt_too_short_for_its_tag_is_refused(corpus: CorpusTokens) -> None:
    with pytest.raises(ConfigError, match=r"trace line 4: input length 5 leaves 4 tokens"):
        TracePrompts(corpus, overhead=1, seed=42).text(request(4, 5), 0)
