"""The interface every wire protocol implements, and the registry keyed by ``schemas.Protocol``.

An adapter knows three things: how to build a streaming request, how to read one line of the
streamed response, and how to ask a server who it is (preflight). Timing is not its business:
``tasks.load.measure`` stamps every line as it arrives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from tcobench.schemas import Protocol, WorkloadConfig
from tcobench.tasks._registry import Registry
from tcobench.tasks.workload.plan import RequestInput

__all__ = ["Adapter", "EngineInfo", "LineEvent", "ServerCounters", "adapter_for", "register"]


@dataclass(frozen=True)
class EngineInfo:
    """What a server says about itself and the model, found before measuring."""

    name: str
    version: str
    model_digest: str | None
    synthetic: bool = False  # the model file says it has random weights (tcobench models synth)
    context_tokens: int | None = (
        None  # context per sequence the server says it has (llama.cpp n_ctx, vLLM max_model_len)
    )
    detected_from: str | None = None  # what the name and version were read from (protocols.engine_id)


@dataclass
class ServerCounters:
    """Token counts and timings the server reported for one request (raw units: tokens, ns)."""

    prompt_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    token_count_source: str = "none"
    finish_reason: str | None = None
    load_ns: int | None = None
    prompt_eval_count: int | None = None
    prompt_eval_ns: int | None = None
    eval_count: int | None = None
    eval_ns: int | None = None
    total_ns: int | None = None
    note: str | None = None


@dataclass(frozen=True)
class LineEvent:
    """What one line of a stream meant."""

    content: bool = False  # carried generated text (a token or more)
    text: str = ""  # that text (the answer a later turn carries; counted when the server counts nothing)
    done: bool = False  # the stream's own end marker ([DONE] or done=true)
    error: str | None = None  # the server reported an error inside the stream
    fields: dict[str, Any] = field(default_factory=dict)  # counters to merge into ServerCounters


class Adapter(ABC):
    """One wire protocol."""

    protocol: Protocol
    probe_path: str  # a cheap GET that any server of this protocol answers (round-trip probes)

    @abstractmethod
    def path(self, chat: bool) -> str:
        """Endpoint path for streaming generation."""

    @abstractmethod
    def payload(self, model: str, given: RequestInput, workload: WorkloadConfig, chat: bool) -> dict[str, Any]:
        """JSON body of one streaming request: ``given.text`` (completion) or ``given.messages`` (chat), with
        ``given.max_tokens`` output tokens and ``given.seed``."""

    def request_body(self, model: str, given: RequestInput, workload: WorkloadConfig, chat: bool) -> dict[str, Any]:
        """``payload`` plus the workload's ``extra_body`` (engine extensions); an object-valued field the payload
        already has (Ollama's ``options``) gains the extra keys. The config refused keys that would replace ours."""
        body = self.payload(model, given, workload, chat)
        for key, value in workload.extra_body.items():
            mine = body.get(key)
            body[key] = {**mine, **value} if isinstance(mine, dict) and isinstance(value, dict) else value
        return body

    @abstractmethod
    def parse_line(self, line: str, chat: bool) -> LineEvent | None:
        """Interpret one line of the response; None for lines that carry nothing (blank, comments)."""

    output_enforcement: str = ""  # how this protocol asks for an exact output length (run rows say it)

    @abstractmethod
    async def preflight(self, client: httpx.AsyncClient, base_url: str, model: str) -> EngineInfo:
        """Check the server answers and serves ``model``; raise EngineError naming the problem."""


_REGISTRY: Registry[Protocol, Adapter] = Registry("protocol adapter")


def register(protocol: Protocol) -> Callable[[type[Adapter]], type[Adapter]]:
    return _REGISTRY.register(protocol, protocol=protocol)


def adapter_for(protocol: Protocol) -> Adapter:
    return _REGISTRY[protocol]
