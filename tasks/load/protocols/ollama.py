"""Ollama's native API: /api/generate and /api/chat, streamed as NDJSON.

Pitfalls handled here (Ollama docs/api.md):
- durations are nanoseconds; any counter of the final object may be missing;
- an error can arrive as ``{"error": ...}`` inside an HTTP 200 stream;
- ``prompt_eval_count`` includes cached prompt tokens but ``prompt_eval_duration`` covers only the
  uncached ones, so prefill rates look inflated on cache hits: every row says so in ``counter_note``;
- ``num_ctx`` defaults depend on the GPU's VRAM, so it is always sent, with num_predict, seed, temperature.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from tcobench.errors import EngineError
from tcobench.schemas import Protocol, WorkloadConfig
from tcobench.tasks.load.protocols._http import get_json
from tcobench.tasks.load.protocols.base import Adapter, EngineInfo, LineEvent, register
from tcobench.tasks.workload.plan import RequestInput

__all__ = ["CACHE_NOTE", "OllamaAdapter"]

CACHE_NOTE = "ollama: prompt_eval_duration excludes cached prompt tokens; prompt_eval_count includes them"

_COUNTERS = {
    "load_duration": "load_ns",
    "prompt_eval_count": "prompt_eval_count",
    "prompt_eval_duration": "prompt_eval_ns",
    "eval_count": "eval_count",
    "eval_duration": "eval_ns",
    "total_duration": "total_ns",
}


def _final_fields(obj: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {
        ours: obj[theirs]
        for theirs, ours in _COUNTERS.items()
        if type(obj.get(theirs)) is int  # not a bool
    }
    fields["finish_reason"] = obj["done_reason"] if isinstance(obj.get("done_reason"), str) else None
    fields["note"] = CACHE_NOTE
    if "eval_count" in fields:
        fields["output_tokens"] = fields["eval_count"]
        fields["token_count_source"] = "server_counters"
    if "prompt_eval_count" in fields:
        fields["prompt_tokens"] = fields["prompt_eval_count"]
    return fields


@register(Protocol.ollama)
class OllamaAdapter(Adapter):
    probe_path = "/api/version"

    def path(self, chat: bool) -> str:
        return "/api/chat" if chat else "/api/generate"

    output_enforcement = "num_predict only: Ollama has no ignore_eos, the model may stop before the requested length"

    def payload(self, model: str, given: RequestInput, workload: WorkloadConfig, chat: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "stream": True,
            "options": {
                "num_ctx": workload.num_ctx,
                "num_predict": given.max_tokens,
                "seed": given.seed,
                "temperature": workload.temperature,
            },
        }
        if chat:
            body["messages"] = given.messages
        else:
            body["prompt"] = given.text
        return body

    def parse_line(self, line: str, chat: bool) -> LineEvent | None:
        line = line.strip()
        if not line:
            return None
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            return LineEvent(error=f"malformed NDJSON line (truncated stream?): {line[:120]!r}")
        if not isinstance(obj, dict):
            return LineEvent(error=f"NDJSON line is not a JSON object: {line[:120]!r}")
        if "error" in obj:
            return LineEvent(error=f"server error in stream: {obj['error']}")
        source = (obj.get("message") or {}) if chat else obj
        source = source if isinstance(source, dict) else {}
        piece = source.get("content" if chat else "response") or source.get("thinking") or ""
        text = piece if isinstance(piece, str) else ""
        if obj.get("done") is True:
            return LineEvent(content=bool(piece), text=text, done=True, fields=_final_fields(obj))
        return LineEvent(content=bool(piece), text=text)

    async def preflight(self, client: httpx.AsyncClient, base_url: str, model: str) -> EngineInfo:
        status, version = await get_json(client, f"{base_url}/api/version")
        if status != 200 or not isinstance(version, dict) or "version" not in version:
            raise EngineError(f"{base_url}/api/version answered HTTP {status}; is this an Ollama server?")
        status, tags = await get_json(client, f"{base_url}/api/tags")
        models = tags.get("models", []) if status == 200 and isinstance(tags, dict) else []
        digests = {m.get("name"): m.get("digest") for m in models if isinstance(m, dict)}
        digests.update({m.get("model"): m.get("digest") for m in models if isinstance(m, dict)})
        candidates = {model, f"{model}:latest"}
        found = next((digests[c] for c in candidates if c in digests), None)
        if found is None:
            names = sorted(str(n) for n in digests if n)
            raise EngineError(
                f"model {model!r} is not available on {base_url} (pull it first); it has: {', '.join(names) or 'none'}"
            )
        return EngineInfo(name="ollama", version=str(version["version"]), model_digest=str(found))
