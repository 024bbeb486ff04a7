"""open_workload_dataset / prepare_workload: everything a workload needs from the files and the engine, checked
before the first request is sent, so bad input stops the batch with one line and nothing stored.

1. ``open_workload_dataset``, ``open_workload_trace`` (before the engine starts): read the file once, checking it all.
2. ``prepare_workload`` (engine up): resolve the tokenizer (``workload.tokenizer``), cut the corpus into the
   model's tokens (synthetic prompts), measure the prompt overhead, and check the longest request fits the
   engine's context.

Prompt overhead: the tokens a server adds to the text it is sent (BOS, chat template). A probe request (one
output token, not stored) with a synthetic prompt of known length P returns the server's ``prompt_tokens`` N;
the overhead is N - P. Without a count from the server it is the tokenizer's special tokens (BOS), and the run
row says so (``prompt_overhead_source``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tcobench.errors import ConfigError
from tcobench.schemas import BenchmarkConfig, EngineKind, LengthDist, Phase, Protocol
from tcobench.tasks.engine.base import RunningEngine
from tcobench.tasks.engine.endpoint import target_of
from tcobench.tasks.load.stream import probe_prompt_tokens
from tcobench.tasks.workload import (
    TAG_BASE,
    TAG_WORDS,
    Dataset,
    PromptTokenizer,
    TracePrompts,
    WorkloadPlan,
    engine_tokenizer,
    local_tokenizer,
    open_dataset,
    tokenize_corpus,
)
from tcobench.tasks.workload.replay import Replay, read_replay

__all__ = ["engine_context", "open_workload_dataset", "open_workload_trace", "prepare_workload", "resolve_tokenizer"]

_PROBE_PASSAGE = 32  # passage tokens of the probe prompt


def open_workload_dataset(config: BenchmarkConfig) -> Dataset | None:
    """The workload's dataset, validated in one streamed pass; None when the workload has none."""
    w = config.workload
    return open_dataset(w.dataset, w.turns, w.num_ctx) if w.dataset is not None else None


def open_workload_trace(config: BenchmarkConfig) -> Replay | None:
    """The requests of the workload's trace (its window), read and checked in one pass; None without a trace."""
    trace = config.workload.trace
    return read_replay(trace) if trace is not None else None


def _local_model_file(config: BenchmarkConfig, engine: RunningEngine) -> Path | None:
    """The GGUF file the engine serves, when tcobench knows it (embedded engine, llama.cpp container)."""
    path = engine.settings.get("model_path")
    if config.engine.kind is EngineKind.endpoint or path is None:
        return None
    return Path(str(path)) if Path(str(path)).is_file() else None


def resolve_tokenizer(config: BenchmarkConfig, engine: RunningEngine, cache_dir: Path) -> PromptTokenizer | None:
    """The tokenizer ``workload.tokenizer`` asks for (see tasks.workload.tokenizer); None when auto finds none."""
    choice = config.workload.tokenizer
    if choice not in ("auto", "engine"):
        return local_tokenizer(Path(choice).expanduser(), cache_dir)
    if config.engine.protocol is Protocol.openai:
        # a probe waits at most the request timeout, and 10 s: a server that hangs on it must not stall the run
        found = engine_tokenizer(engine.base_url, config.model.name, min(10.0, config.workload.request_timeout_s))
        if found is not None:
            return found
    if choice == "engine":
        raise ConfigError(
            f"workload.tokenizer: the engine at {engine.base_url} offers no POST /tokenize (llama.cpp or vLLM form); "
            "give a local tokenizer.json or .gguf path instead"
        )
    model_file = _local_model_file(config, engine)
    return local_tokenizer(model_file, cache_dir) if model_file is not None else None


def engine_context(config: BenchmarkConfig, engine: RunningEngine) -> tuple[int | None, str]:
    """(tokens of context per sequence, where that figure comes from)."""
    if engine.info.context_tokens:
        return engine.info.context_tokens, f"{engine.info.name} at {engine.base_url}"
    if config.engine.protocol is Protocol.ollama:
        return config.workload.num_ctx, "num_ctx sent to Ollama"
    return None, "unknown"


def _check_context(config: BenchmarkConfig, engine: RunningEngine) -> None:
    w = config.workload
    context, source = engine_context(config, engine)
    if context is None or w.input_tokens is None:
        if context is not None and w.longest_output > context:
            raise ConfigError(
                f"workload: outputs of up to {w.longest_output} tokens exceed the engine's context of "
                f"{context} tokens per sequence ({source})"
            )
        return
    need = w.longest_input + w.longest_output
    if need > context:
        raise ConfigError(
            f"workload.input_tokens: prompts of up to {w.longest_input} + outputs of up to {w.longest_output} = "
            f"{need} tokens exceed the engine's context of {context} tokens per sequence ({source}); shorten the "
            "lengths or give the engine more context (num_ctx)"
        )


def _probe_overhead(config: BenchmarkConfig, engine: RunningEngine, plan: WorkloadPlan) -> WorkloadPlan:
    w = config.workload
    own = w.shared_prefix_tokens + TAG_WORDS + _PROBE_PASSAGE
    shape = w.model_copy(
        update={"input_tokens": LengthDist(value=own), "turns": 1, "output_tokens": None, "max_tokens": 1}
    )
    probe = replace(plan, workload=shape, overhead=0)
    spec = probe.spec(Phase.warmup, TAG_BASE**4 - 1)  # a tag no measured or warm-up request uses
    counted = probe_prompt_tokens(target_of(config, engine.base_url), probe, probe.request_input(spec, []))
    if counted is not None and counted >= own:
        return replace(plan, overhead=counted - own, overhead_source="probe")
    assert plan.tokenizer is not None
    note = "tokenizer (BOS only: the server reported no prompt count; a chat template is not counted)"
    return replace(plan, overhead=plan.tokenizer.special_tokens(), overhead_source=note)


def _check_room(plan: WorkloadPlan) -> None:
    w = plan.workload
    if w.input_tokens is None:
        return
    room = plan.passage_tokens(w.input_tokens.lower)
    if room < 1:
        raise ConfigError(
            f"workload.input_tokens: a prompt of {w.input_tokens.lower} tokens leaves no room for text: the server "
            f"adds {plan.overhead} (BOS, chat template), the shared prefix takes {w.shared_prefix_tokens} and the "
            f"unique tag {TAG_WORDS}"
        )


def _check_trace_fits(config: BenchmarkConfig, engine: RunningEngine, plan: WorkloadPlan, replay: Replay) -> None:
    """Every replayed request leaves room for its tag after the server's overhead, and fits the engine's context."""
    context, source = engine_context(config, engine)
    for request in replay.requests:
        if request.input_tokens is None:
            continue
        if request.input_tokens - plan.overhead < TAG_WORDS:
            raise ConfigError(
                f"trace {replay.config.path}: line {request.line}: input length {request.input_tokens} leaves "
                f"{request.input_tokens - plan.overhead} tokens after the {plan.overhead} the server adds, fewer "
                f"than the {TAG_WORDS} of a prompt's tag"
            )
        output = request.output_tokens or config.workload.max_tokens
        if context is not None and request.input_tokens + output > context:
            raise ConfigError(
                f"trace {replay.config.path}: line {request.line}: input {request.input_tokens} + output {output} "
                f"tokens exceed the engine's context of {context} tokens per sequence ({source})"
            )


def _prepare_replay(config: BenchmarkConfig, engine: RunningEngine, plan: WorkloadPlan, replay: Replay) -> WorkloadPlan:
    """The plan with the replay's requests; a trace that records lengths gets token-exact prompts (tokenizer, corpus
    and the server's prompt overhead, as synthetic prompts)."""
    if not replay.synthetic:
        return replace(plan, replay=replay)
    if plan.tokenizer is None:
        raise ConfigError(
            f"trace {replay.config.path}: its requests record lengths, and building prompts of those lengths needs "
            f"the model's tokenizer: the engine at {engine.base_url} offers no POST /tokenize and no local model file "
            "is known; set workload.tokenizer (--tokenizer) to the model's tokenizer.json or .gguf"
        )
    plan = _probe_overhead(config, engine, replace(plan, corpus=tokenize_corpus(plan.tokenizer)))
    assert plan.corpus is not None
    replay = replay.with_prompts(TracePrompts(plan.corpus, plan.overhead, config.workload.seed))
    _check_trace_fits(config, engine, plan, replay)
    return replace(plan, replay=replay)


def prepare_workload(
    config: BenchmarkConfig,
    engine: RunningEngine,
    cache_dir: Path,
    dataset: Dataset | None = None,
    replay: Replay | None = None,
) -> WorkloadPlan:
    """The run's WorkloadPlan for this engine; ConfigError (nothing sent but one probe) when it cannot be built."""
    w = config.workload
    _check_context(config, engine)
    tokenizer = resolve_tokenizer(config, engine, cache_dir)
    plan = WorkloadPlan(w, tokenizer=tokenizer, dataset=dataset)
    if replay is not None:
        return _prepare_replay(config, engine, plan, replay)
    if w.input_tokens is None:
        return plan
    if tokenizer is None:
        raise ConfigError(
            f"workload.input_tokens needs the model's tokenizer: the engine at {engine.base_url} offers no POST "
            "/tokenize and no local model file is known; set workload.tokenizer (--tokenizer) to the model's "
            "tokenizer.json or .gguf"
        )
    plan = _probe_overhead(config, engine, replace(plan, corpus=tokenize_corpus(tokenizer)))
    _check_room(plan)
    return plan
