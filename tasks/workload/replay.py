"""Replay: the measured requests of a replayed trace (``workload.trace``): request i of the run is the i-th request of
the trace (its window), sent at its offset on the replay's clock, with its recorded lengths or its own text.

A trace that records lengths (Mooncake, Azure) gets token-exact synthetic prompts (``TracePrompts``): requests that
name the same ``hash_ids`` block share those prefix tokens. A tcobench trace sends its own prompt or messages. The
output length is the recorded one (``ignore_eos`` is on by default with a trace), else ``workload.max_tokens``.

The requests are read (and checked) once, before the engine starts (``tasks.prepare.open_workload_trace``); they are
held in memory for the run, as the client processes rebuild their share of the schedule from them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tcobench.errors import ConfigError
from tcobench.schemas import Phase, TraceConfig, TraceRequest
from tcobench.tasks.workload.plan import RequestSpec
from tcobench.tasks.workload.read_trace import file_sha256, open_trace
from tcobench.tasks.workload.trace_prompts import TracePrompts

__all__ = ["Replay", "check_replay", "read_replay"]

_RUN_SEED_STRIDE = 1_000_003  # prompts of one concurrency level differ from the next one's (no cache across runs)


@dataclass(frozen=True)
class Replay:
    """The trace's requests for one run, and how their prompts are made (``prompts``: None until the engine's
    tokenizer and prompt overhead are known; only a trace that records lengths needs it)."""

    config: TraceConfig
    requests: tuple[TraceRequest, ...]
    sha256: str
    prompts: TracePrompts | None = None

    @property
    def synthetic(self) -> bool:
        """Whether any request records only its length (a synthetic prompt is built for it)."""
        return any(r.prompt is None and r.messages is None for r in self.requests)

    @property
    def offsets_ns(self) -> list[int]:
        """Each request's send time, ns after the replay's start."""
        return [r.at_ns for r in self.requests]

    @property
    def mean_rate(self) -> float | None:
        """Requests per second over the replay (requests / the last offset); None when they all share one instant."""
        last = self.requests[-1].at_ns
        return len(self.requests) / (last / 1e9) if last > 0 else None

    def with_prompts(self, prompts: TracePrompts) -> Replay:
        return replace(self, prompts=prompts)

    def for_run(self, run_key: int) -> Replay:
        """The same requests with prompts of this concurrency level (its own passages: no cache hits across runs)."""
        if self.prompts is None:
            return self
        return replace(self, prompts=replace(self.prompts, seed=self.prompts.seed + run_key * _RUN_SEED_STRIDE))

    def spec(self, index: int, seed: int, max_tokens: int) -> RequestSpec:
        """Measured request ``index``: the ``index``-th request of the trace."""
        request = self.requests[index]
        output = max(1, request.output_tokens) if request.output_tokens is not None else max_tokens
        if request.messages is not None:
            messages = tuple({"role": m.role, "content": m.content} for m in request.messages)
            return RequestSpec(Phase.measure, index, seed, index, output, messages=messages)
        if request.prompt is not None:
            return RequestSpec(Phase.measure, index, seed, index, output, user=request.prompt)
        if self.prompts is None:
            raise ConfigError(f"trace {self.config.path}: line {request.line}: no tokenizer to build its prompt with")
        text = self.prompts.text(request, index)
        return RequestSpec(Phase.measure, index, seed, index, output, request.input_tokens, user=text)


def _empty(config: TraceConfig) -> ConfigError:
    where = f"the window {config.window_s[0]:g},{config.window_s[1]:g}" if config.window_s else "the file"
    return ConfigError(f"trace {config.path}: {where} holds no requests to replay")


def read_replay(config: TraceConfig) -> Replay:
    """Every request of the trace's window, read and checked in one pass (ConfigError naming the file and line: a
    bad line, timestamps going backwards without sort, a negative length, more than max_requests); an empty window
    is an error too."""
    trace = open_trace(config)
    requests = tuple(trace.requests())
    if not requests:
        raise _empty(config)
    return Replay(config, requests, file_sha256(config.path))


def check_replay(config: TraceConfig) -> int:
    """The checks of ``read_replay`` without keeping the requests (a matrix's traces, before the night): the number
    of requests of the window, or the same ConfigError."""
    count = sum(1 for _ in open_trace(config).requests())
    if not count:
        raise _empty(config)
    return count
