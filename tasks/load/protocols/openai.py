"""OpenAI-compatible streaming: /v1/completions and /v1/chat/completions over SSE.

Token counts come from the server's ``usage`` (asked for with ``stream_options.include_usage``)
or, failing that, from llama.cpp's ``timings`` object in the final chunk; never from chunk counts.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from tcobench.errors import EngineError
from tcobench.schemas import Protocol, WorkloadConfig
from tcobench.tasks.load.protocols._http import get_json
from tcobench.tasks.load.protocols.base import Adapter, EngineInfo, LineEvent, register
from tcobench.tasks.load.protocols.engine_id import detect_engine
from tcobench.tasks.workload.plan import RequestInput

__all__ = ["OpenAIAdapter"]

_MS_TO_NS = 1_000_000


def _count(value: Any) -> int | None:
    """A token count as the server sent it, or None for anything that is not a whole number (a hostile server)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage_fields(usage: dict[str, Any]) -> dict[str, Any]:
    details = usage.get("prompt_tokens_details")
    return {
        "prompt_tokens": _count(usage.get("prompt_tokens")),
        "output_tokens": _count(usage.get("completion_tokens")),
        "cached_tokens": _count(details.get("cached_tokens")) if isinstance(details, dict) else None,
        "token_count_source": "usage",
    }


def _timings_fields(timings: dict[str, Any]) -> dict[str, Any]:
    """llama.cpp's per-request timings (ms) as raw counters (ns)."""

    def ns(key: str) -> int | None:
        value = timings.get(key)
        if not isinstance(value, int | float) or isinstance(value, bool) or not abs(value) < 1e12:
            return None  # absent, not a number, or not a finite duration
        return round(float(value) * _MS_TO_NS)

    return {
        "prompt_eval_count": _count(timings.get("prompt_n")),
        "prompt_eval_ns": ns("prompt_ms"),
        "eval_count": _count(timings.get("predicted_n")),
        "eval_ns": ns("predicted_ms"),
        "cached_tokens": _count(timings.get("cache_n")),
    }


@register(Protocol.openai)
class OpenAIAdapter(Adapter):
    probe_path = "/v1/models"

    def path(self, chat: bool) -> str:
        return "/v1/chat/completions" if chat else "/v1/completions"

    output_enforcement = "ignore_eos + max_tokens (llama.cpp, vLLM, SGLang)"

    def payload(self, model: str, given: RequestInput, workload: WorkloadConfig, chat: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": given.max_tokens,
            "temperature": workload.temperature,
            "seed": given.seed,
        }
        if chat:
            body["messages"] = given.messages
        else:
            body["prompt"] = given.text
        if workload.ignore_eos:
            body["ignore_eos"] = True
        return body

    def parse_line(self, line: str, chat: bool) -> LineEvent | None:
        line = line.strip()
        if not line.startswith("data:"):
            return None  # blank separators, ": keep-alive" comments, event: lines
        data = line[5:].strip()
        if data == "[DONE]":
            return LineEvent(done=True)
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError:
            return LineEvent(error=f"malformed SSE data line: {data[:120]!r}")
        if not isinstance(chunk, dict):
            return LineEvent(error=f"SSE data is not a JSON object: {data[:120]!r}")
        if "error" in chunk:
            err = chunk["error"]
            message = err.get("message", err) if isinstance(err, dict) else err
            return LineEvent(error=f"server error in stream: {message}")
        fields: dict[str, Any] = {}
        content = False
        text = ""
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict):
                continue
            if chat:
                delta = choice.get("delta")
                delta = delta if isinstance(delta, dict) else {}
                piece = delta.get("content") or delta.get("reasoning_content") or ""
            else:
                piece = choice.get("text") or ""
            piece = piece if isinstance(piece, str) else ""
            text += piece
            content = content or bool(piece)
            if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
                fields["finish_reason"] = choice["finish_reason"]
        if isinstance(chunk.get("timings"), dict):
            fields.update(_timings_fields(chunk["timings"]))
        usage = chunk.get("usage")
        if usage and isinstance(usage, dict):  # usage wins over timings where both count the same (and usage has it)
            fields.update({k: v for k, v in _usage_fields(usage).items() if v is not None})
        return LineEvent(content=content, text=text, fields=fields)

    async def preflight(self, client: httpx.AsyncClient, base_url: str, model: str) -> EngineInfo:
        status, listing = await get_json(client, f"{base_url}/v1/models")
        if status != 200 or not isinstance(listing, dict):
            raise EngineError(f"{base_url}/v1/models answered HTTP {status}; is this an OpenAI-compatible server?")
        entries = [m for m in listing.get("data") or [] if isinstance(m, dict)]
        served = [str(m.get("id")) for m in entries]
        if model not in served:
            raise EngineError(f"model {model!r} is not served by {base_url}; it serves: {', '.join(served) or 'none'}")
        return await self._identify(client, base_url, entries[served.index(model)])

    async def _identify(self, client: httpx.AsyncClient, base_url: str, entry: dict[str, Any]) -> EngineInfo:
        context = entry.get("max_model_len") if isinstance(entry.get("max_model_len"), int) else None  # vLLM
        found = await detect_engine(client, base_url, entry, context)
        return EngineInfo(
            found.name, found.version, None, context_tokens=found.context_tokens, detected_from=found.detected_from
        )
