"""WorkloadPlan: every request of a run as a pure function of (seed, run key, phase, request index).

``spec`` says what request i is (lengths, which corpus window, dataset record or prompt, conversation and turn);
``request_input`` turns a spec (plus the answers of earlier turns, for conversations) into what is sent. Nothing
depends on requests built before, so a multi-process load generator can rebuild any worker's slice from the
workload config and the tokenizer alone.

A synthetic prompt of L tokens (as the server counts it) is, in tokens:

    overhead (BOS, chat template: measured by a probe)  +  shared prefix (K)  +  unique tag (TAG_WORDS)  +  passage

Design notes: docs/dev/architecture/workloads.md#tasks-workload-plan.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tcobench.errors import ConfigError
from tcobench.schemas import Phase, WorkloadConfig
from tcobench.tasks.workload.corpus import TAG_BASE, CorpusTokens
from tcobench.tasks.workload.dataset import Dataset, DatasetRecord
from tcobench.tasks.workload.keys import replay_set_key, sha256_json
from tcobench.tasks.workload.lengths import draw_length, rng_for
from tcobench.tasks.workload.tokenizer import PromptTokenizer

if TYPE_CHECKING:
    from tcobench.tasks.workload.replay import Replay

__all__ = [
    "TAG_SPACE",
    "TAG_WORDS",
    "RequestInput",
    "RequestSpec",
    "WorkloadPlan",
    "replay_set_key",
    "sha256_json",
    "tag_words",
]

_DIGITS = 6  # TAG_BASE**6 = 68.7e9 distinct tags: (run key * 2 + phase) * TAG_BASE**4 + index
TAG_WORDS = 1 + _DIGITS  # the lead word, then the digits
_INDEX_SPACE = TAG_BASE**4
TAG_SPACE = TAG_BASE**_DIGITS  # distinct tags
_TAG_MIX = 0x9E3779B1  # odd: multiplying by it modulo 2**36 is a bijection (distinct numbers stay distinct)
_WARMUP_SEED_OFFSET = 1_000_000  # warm-up request i is sent with seed + 1,000,000 + i (as before presets)


def tag_words(corpus: CorpusTokens, number: int) -> list[str]:
    """The TAG_WORDS one-token words that spell ``number`` (0 <= number < TAG_SPACE; one tag per number): the lead
    word, then the digits in base TAG_BASE of the number mixed (varied words, still a bijection)."""
    number = number * _TAG_MIX % TAG_SPACE
    words = [corpus.lead]
    for _ in range(_DIGITS):
        number, digit = divmod(number, TAG_BASE)
        words.append(corpus.tag_words[digit])
    return words


@dataclass(frozen=True)
class RequestSpec:
    """What request ``index`` of a phase is; everything in it follows from the workload seed and the index."""

    phase: Phase
    index: int
    seed: int  # sent to the engine
    prompt_index: int  # prompt list index, dataset record, or the corpus window's first token
    output_tokens: int  # requested output tokens (max_tokens / num_predict)
    input_tokens: int | None = None  # synthetic: the requested prompt length of this turn's own text, as counted
    conversation: int | None = None
    turn: int | None = None
    user: str = ""  # this turn's user text
    system: str | None = None  # the shared prefix / the record's system prompt
    messages: tuple[dict[str, str], ...] | None = None  # a dataset record's own messages


@dataclass(frozen=True)
class RequestInput:
    """What goes into the request body: plain text (completion APIs) and the same as chat messages."""

    text: str
    messages: list[dict[str, str]]
    max_tokens: int
    seed: int
    requested_input_tokens: int | None

    @property
    def sha256(self) -> str:
        """The prompt's identity on request rows: sha256 of the JSON of [text, messages], computed once per distinct
        prompt (a run sends its prompts many times; the JSON of a long prompt and its hash cost tens of
        microseconds of the client's event loop per request)."""
        try:
            return _prompt_sha256(self.text, tuple(tuple(m.items()) for m in self.messages))
        except TypeError:  # a value that cannot be a cache key
            return _sha256_of(self.text, self.messages)


def _sha256_of(text: str, messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps([text, messages], ensure_ascii=False).encode()).hexdigest()


@functools.lru_cache(maxsize=256)  # long prompts: at most a few MB held
def _prompt_sha256(text: str, messages: tuple[tuple[tuple[str, str], ...], ...]) -> str:
    return _sha256_of(text, [dict(m) for m in messages])


@dataclass
class WorkloadPlan:
    """The requests of a workload, for one engine (its tokenizer, its prompt overhead) and one run key."""

    workload: WorkloadConfig
    tokenizer: PromptTokenizer | None = None
    corpus: CorpusTokens | None = None
    dataset: Dataset | None = None
    overhead: int = 0  # tokens the server adds to a prompt (synthetic lengths leave room for them)
    overhead_source: str | None = None
    run_key: int = 0  # the concurrency level: prompts differ between the runs of a sweep
    notes: list[str] = field(default_factory=list)
    replay: Replay | None = None  # a replayed trace: its requests are the measured ones

    def for_run(self, run_key: int) -> WorkloadPlan:
        replay = self.replay.for_run(run_key) if self.replay is not None else None
        return replace(self, run_key=run_key, replay=replay)

    @property
    def measured_requests(self) -> int:
        """Measured requests of a run without a duration: the replayed trace's, else workload.requests."""
        return len(self.replay.requests) if self.replay is not None else self.workload.requests

    @property
    def arrival_rate(self) -> float | None:
        """Mean arrivals per second of an open loop: a replay's (its requests over its length), else workload.rate."""
        return self.replay.mean_rate if self.replay is not None else self.workload.rate

    @property
    def offsets_ns(self) -> list[int]:
        """When each measured request is due, ns after the measured phase's start: a replay's recorded offsets."""
        if self.replay is None:
            raise ConfigError("workload.mode 'replay' needs workload.trace (--trace)")
        return self.replay.offsets_ns

    @property
    def blocking(self) -> bool:
        """Whether building a spec may call the tokenizer (cutting by decoding, counting dataset replies): such
        builds run in a thread, off the event loop that times the streams."""
        if self.dataset is not None:
            return self.tokenizer is not None
        return self.corpus is not None and self.corpus.spans is None

    # -- specs ------------------------------------------------------------------------------------------------
    def seed_of(self, phase: Phase, index: int) -> int:
        return self.workload.seed + (_WARMUP_SEED_OFFSET if phase is Phase.warmup else 0) + index

    def _output(self, phase: Phase, index: int, record_target: int | None = None) -> int:
        w = self.workload
        if record_target is not None:
            return record_target
        if w.output_tokens is None:
            return w.max_tokens
        return draw_length(w.output_tokens, w.seed, phase.value, index, "output")

    def spec(self, phase: Phase, index: int) -> RequestSpec:
        """Request ``index`` of ``phase``."""
        w = self.workload
        seed = self.seed_of(phase, index)
        conversation, turn = divmod(index, w.turns) if w.turns > 1 else (None, None)
        if self.replay is not None and phase is Phase.measure:
            return self.replay.spec(index, seed, w.max_tokens)
        if self.dataset is not None:
            return self._dataset_spec(phase, index, seed, conversation, turn)
        if self.corpus is not None and w.input_tokens is not None:
            return self._synthetic_spec(phase, index, seed, conversation, turn)
        prompt_index = index % len(w.prompts)
        return RequestSpec(
            phase,
            index,
            seed,
            prompt_index,
            self._output(phase, index),
            None,
            conversation,
            turn,
            user=w.prompts[prompt_index],
        )

    def _tag(self, phase: Phase, index: int) -> list[str]:
        assert self.corpus is not None
        if index >= _INDEX_SPACE:
            raise ConfigError(f"request index {index} exceeds the {_INDEX_SPACE} distinct prompts a run can tag")
        return tag_words(self.corpus, (self.run_key * 2 + (phase is Phase.warmup)) * _INDEX_SPACE + index)

    def passage_tokens(self, total: int) -> int:
        """Tokens of corpus passage in a synthetic prompt of ``total`` tokens (this turn's own share)."""
        return total - self.overhead - self.workload.shared_prefix_tokens - TAG_WORDS

    def _input_length(self, phase: Phase, index: int) -> int:
        assert self.workload.input_tokens is not None
        return draw_length(self.workload.input_tokens, self.workload.seed, phase.value, index, "input")

    def _synthetic_spec(self, phase: Phase, index: int, seed: int, conv: int | None, turn: int | None) -> RequestSpec:
        assert self.corpus is not None and self.workload.input_tokens is not None
        w = self.workload
        total = self._input_length(phase, index)
        size = self.passage_tokens(total) if not turn else total - TAG_WORDS
        wanted = rng_for(w.seed, self.run_key, phase.value, index, "window").randrange(len(self.corpus.ids))
        start = self.corpus.window_start(wanted, size)
        user = " " + "".join(self._tag(phase, index)) + self.corpus.window(start, size)
        return RequestSpec(
            phase,
            index,
            seed,
            start,
            self._output(phase, index),
            total,
            conv,
            turn,
            user=user,
            system=self.shared_prefix(),
        )

    def shared_prefix(self) -> str | None:
        """The system prompt of shared_prefix_tokens tokens every synthetic request starts with (same seed, same)."""
        k = self.workload.shared_prefix_tokens
        if not k or self.corpus is None:
            return None
        first = self.corpus.lead
        if k == 1:
            return first
        wanted = rng_for(self.workload.seed, "shared-prefix").randrange(len(self.corpus.ids))
        return first + self.corpus.window(self.corpus.window_start(wanted, k - 1), k - 1)

    def _dataset_spec(self, phase: Phase, index: int, seed: int, conv: int | None, turn: int | None) -> RequestSpec:
        assert self.dataset is not None
        w = self.workload
        position = self.dataset.pick(w.seed + (1 if phase is Phase.warmup else 0), conv if conv is not None else index)
        record = self.dataset.record(position)
        if record.user_turns:
            t = turn or 0
            user = record.user_turns[min(t, len(record.user_turns) - 1)]
            reply = record.replies[min(t, len(record.replies) - 1)]
            target = record.output_tokens or self._reply_tokens(reply)
            return RequestSpec(
                phase,
                index,
                seed,
                position,
                self._output(phase, index, target),
                None,
                conv,
                turn,
                user=user,
                system=record.system,
            )
        target = record.output_tokens
        return RequestSpec(
            phase,
            index,
            seed,
            position,
            self._output(phase, index, target),
            None,
            conv,
            turn,
            user=record.prompt or "",
            messages=record.messages,
        )

    def _reply_tokens(self, reply: str | None) -> int | None:
        if reply is None or self.tokenizer is None:
            return None
        return max(1, min(self.workload.max_tokens, self.tokenizer.count(reply)))

    def turns_of(self, spec: RequestSpec) -> int:
        """How many turns the conversation of ``spec`` has (a ShareGPT record may have fewer than workload.turns)."""
        if self.dataset is None or spec.conversation is None:
            return self.workload.turns
        record: DatasetRecord = self.dataset.record(spec.prompt_index)
        return min(self.workload.turns, len(record.user_turns))

    # -- bodies -----------------------------------------------------------------------------------------------
    def request_input(self, spec: RequestSpec, history: list[tuple[str, str, int | None]]) -> RequestInput:
        """What to send for ``spec``; ``history`` holds (user text, answer, answer tokens) of the earlier turns."""
        if spec.messages is not None:
            messages = [dict(m) for m in spec.messages]
            text = "\n\n".join(m["content"] for m in messages)
            return RequestInput(text, messages, spec.output_tokens, spec.seed, None)
        messages = [{"role": "system", "content": spec.system}] if spec.system else []
        pieces = [spec.system] if spec.system else []
        for user, answer, _ in history:
            messages += [{"role": "user", "content": user.lstrip()}, {"role": "assistant", "content": answer}]
            pieces += [user, answer]
        messages.append({"role": "user", "content": spec.user.lstrip()})
        pieces.append(spec.user)
        text = "".join(pieces).lstrip() if spec.input_tokens is not None else "\n\n".join(pieces)
        return RequestInput(text, messages, spec.output_tokens, spec.seed, self._requested(spec, history))

    def _requested(self, spec: RequestSpec, history: list[tuple[str, str, int | None]]) -> int | None:
        if spec.input_tokens is None:
            return None
        if not history:
            return spec.input_tokens
        earlier = 0
        for user_tokens, (_, _, answer_tokens) in zip(self._turn_lengths(spec), history, strict=False):
            earlier += user_tokens + (answer_tokens or 0)
        return earlier + spec.input_tokens

    def _turn_lengths(self, spec: RequestSpec) -> list[int]:
        """The requested own lengths of the earlier turns of spec's conversation (turn 0 carries the overhead)."""
        first = spec.index - (spec.turn or 0)
        return [self._input_length(spec.phase, first + t) for t in range(spec.turn or 0)]

    # -- counting ---------------------------------------------------------------------------------------------
    def count(self, text: str) -> int | None:
        """Tokens of ``text`` with the run's tokenizer; None without one."""
        return self.tokenizer.count(text) if self.tokenizer is not None else None

    def prompt_set_key(self) -> Any:
        """What identifies this workload's prompts across hosts and engines (run rows store its sha256): the prompt
        list; or the corpus, input shape, prefix, turns and seed; or the dataset file's sha256, order and seed."""
        w = self.workload
        if self.replay is not None:
            return replay_set_key(self.replay.sha256, self.replay.config.window_s, w.seed)
        if self.dataset is not None:
            order = w.dataset.order.value if w.dataset is not None else None
            return {"dataset_sha256": self.dataset.sha256, "order": order, "seed": w.seed}
        if w.input_tokens is not None:
            return {
                "corpus": "devils-dictionary",
                "input": w.input_tokens.describe(),
                "prefix": w.shared_prefix_tokens,
                "turns": w.turns,
                "seed": w.seed,
            }
        return list(w.prompts)
