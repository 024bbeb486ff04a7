"""WorkloadPlan: synthetic prompts are token-exact in the model's tokenizer, reproducible from the seed, never
repeated; shared prefixes and conversations are built as specified. The tokenizer is a small BPE trained on the
corpus (tests/small_tokenizer.py), a vocabulary unlike Gemma's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import Phase, WorkloadConfig
from tcobench.tasks.workload import (
    TAG_WORDS,
    CorpusTokens,
    LocalTokenizer,
    WorkloadPlan,
    local_tokenizer,
    tokenize_corpus,
)
from tests.small_tokenizer import train_tokenizer


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> LocalTokenizer:
    return local_tokenizer(train_tokenizer(tmp_path_factory.mktemp("tok")), None)


@pytest.fixture(scope="module")
def corpus(tokenizer: LocalTokenizer) -> CorpusTokens:
    return tokenize_corpus(tokenizer)


def plan(corpus: CorpusTokens, overhead: int = 1, **workload: Any) -> WorkloadPlan:
    config = WorkloadConfig.model_validate_json(json.dumps({"num_ctx": 16384, **workload}))
    return WorkloadPlan(config, tokenizer=corpus.tokenizer, corpus=corpus, overhead=overhead, overhead_source="test")


def test_prompts_have_the_exact_token_count(corpus: CorpusTokens) -> None:
    p = plan(corpus, input_tokens="uniform:40-3000", output_tokens=64)
    for i in range(200):
        spec = p.spec(Phase.measure, i)
        given = p.request_input(spec, [])
        assert spec.input_tokens is not None and 40 <= spec.input_tokens <= 3000
        # the server adds `overhead` (here BOS, 1 token) to what the tokenizer counts of the text
        assert corpus.tokenizer.count(given.text) + p.overhead == spec.input_tokens == given.requested_input_tokens
        assert given.max_tokens == 64 and given.messages == [{"role": "user", "content": given.text}]


def test_same_seed_same_bytes_other_seed_other_prompts(corpus: CorpusTokens) -> None:
    a, b = plan(corpus, input_tokens=256), plan(corpus, input_tokens=256)
    texts = [a.request_input(a.spec(Phase.measure, i), []).text for i in range(50)]
    assert texts == [b.request_input(b.spec(Phase.measure, i), []).text for i in range(50)]
    other = plan(corpus, input_tokens=256, seed=7)
    assert not set(texts) & {other.request_input(other.spec(Phase.measure, i), []).text for i in range(50)}


def test_no_prompt_repeats_across_indices_phases_and_levels(corpus: CorpusTokens) -> None:
    base = plan(corpus, input_tokens=24)  # short prompts: windows collide often, the tag keeps them apart
    seen: set[str] = set()
    count = 0
    for level in (1, 2):
        p = base.for_run(level)
        for phase, n in ((Phase.warmup, 50), (Phase.measure, 3000)):
            for i in range(n):
                seen.add(p.request_input(p.spec(phase, i), []).text)
                count += 1
    assert len(seen) == count


def test_shared_prefix_is_the_same_k_tokens_for_every_request(corpus: CorpusTokens) -> None:
    p = plan(corpus, input_tokens=300, shared_prefix_tokens=100)
    systems = set()
    for i in range(20):
        spec = p.spec(Phase.measure, i)
        given = p.request_input(spec, [])
        assert spec.system is not None and corpus.tokenizer.count(spec.system) == 100
        assert given.messages[0] == {"role": "system", "content": spec.system}
        assert given.text.startswith(spec.system)
        assert corpus.tokenizer.count(given.text) + 1 == 300
        systems.add(spec.system)
    assert len(systems) == 1


def test_a_conversation_carries_earlier_turns_and_answers(corpus: CorpusTokens) -> None:
    p = plan(corpus, input_tokens=100, turns=3)
    first, second = p.spec(Phase.measure, 3), p.spec(Phase.measure, 4)  # conversation 1, turns 0 and 1
    assert (first.conversation, first.turn, second.conversation, second.turn) == (1, 0, 1, 1)
    history: list[tuple[str, str, int | None]] = [(first.user, " An answer of five tokens.", 5)]
    given = p.request_input(second, history)
    assert [m["role"] for m in given.messages] == ["user", "assistant", "user"]
    assert given.messages[1]["content"] == " An answer of five tokens."
    assert given.text == (first.user + " An answer of five tokens." + second.user).lstrip()
    # the first turn's 100 tokens (overhead included) + the answer's 5 + the second turn's own 100
    assert given.requested_input_tokens == 100 + 5 + 100


def test_too_short_for_the_tag_is_refused(corpus: CorpusTokens) -> None:
    with pytest.raises(ValueError, match="too short for shared_prefix_tokens 10"):
        WorkloadConfig.model_validate_json(json.dumps({"input_tokens": 20, "shared_prefix_tokens": 10}))
    p = plan(corpus, overhead=30, input_tokens="uniform:20-40")
    assert p.passage_tokens(20) == 20 - 30 - TAG_WORDS  # prepare_workload refuses this with a ConfigError


def test_passages_longer_than_the_corpus_are_refused(corpus: CorpusTokens) -> None:
    p = plan(corpus, input_tokens=len(corpus.ids) + 100, num_ctx=1_000_000)
    with pytest.raises(ConfigError, match="longer than the corpus"):
        p.spec(Phase.measure, 0)


def test_prompt_list_workloads_keep_their_old_behaviour(corpus: CorpusTokens) -> None:
    p = WorkloadPlan(WorkloadConfig.model_validate_json('{"prompts": ["a", "b", "c"]}'))
    specs = [p.spec(Phase.measure, i) for i in range(5)]
    assert [s.prompt_index for s in specs] == [0, 1, 2, 0, 1]
    assert [s.seed for s in specs] == [42, 43, 44, 45, 46]
    assert p.spec(Phase.warmup, 0).seed == 1_000_042
    given = p.request_input(specs[1], [])
    assert (given.text, given.max_tokens, given.requested_input_tokens) == ("b", 64, None)


def test_tokenizer_file_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        local_tokenizer(tmp_path / "missing.json", None)
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{}", "utf-8")
    with pytest.raises(ConfigError, match="is not a tokenizer.json"):
        local_tokenizer(bad, None)
