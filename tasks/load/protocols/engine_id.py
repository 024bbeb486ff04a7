"""detect_engine: which engine serves an OpenAI-compatible endpoint, told from what the engine itself serves.

Evidence, strongest first: ``GET /props``, the model's ``owned_by``, the ``/metrics`` prefix, the ``Server``
header; then the version from where that engine serves it. Otherwise ``openai-compatible``.

Design notes: docs/dev/architecture/load.md#tasks-protocols-engine-id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from tcobench.errors import EngineError
from tcobench.tasks.load.protocols._http import get_json

__all__ = ["OWNED_BY", "Detected", "detect_engine", "engine_from_metrics"]

UNKNOWN = "openai-compatible"
OWNED_BY: dict[str, str] = {"vllm": "vllm", "sglang": "sglang", "tensorrt_llm": "tensorrt-llm", "llamacpp": "llama.cpp"}
_METRIC_PREFIXES = {"vllm:": "vllm", "sglang:": "sglang"}
_VERSION_PATHS: dict[str, tuple[str, ...]] = {
    "vllm": ("/version",),
    "tensorrt-llm": ("/version",),
    "sglang": ("/get_server_info", "/server_info", "/version"),
    UNKNOWN: ("/version",),
}


@dataclass(frozen=True)
class Detected:
    """Who the engine is (``name``, ``version``) and from what that was read (``detected_from``)."""

    name: str
    version: str
    detected_from: str
    context_tokens: int | None = None


def engine_from_metrics(text: str) -> str | None:
    """The engine whose metric prefix a Prometheus text carries (first sample line), or None."""
    for line in text.splitlines():
        if line and not line.startswith("#"):
            for prefix, name in _METRIC_PREFIXES.items():
                if line.startswith(prefix):
                    return name
    return None


async def _get(client: httpx.AsyncClient, url: str) -> httpx.Response | None:
    try:
        return await client.get(url)
    except httpx.HTTPError:
        return None


async def _llama_cpp(client: httpx.AsyncClient, base_url: str, context: int | None) -> Detected | None:
    status, props = await get_json(client, f"{base_url}/props")
    if status != 200 or not isinstance(props, dict) or "build_info" not in props:
        return None
    settings = props.get("default_generation_settings")
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    context = n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else context
    return Detected("llama.cpp", str(props["build_info"]), "/props build_info", context)


async def _name(client: httpx.AsyncClient, base_url: str, entry: dict[str, Any]) -> tuple[str, str]:
    """(engine name, evidence) from owned_by, the /metrics prefix or the Server header."""
    owner = entry.get("owned_by")
    if isinstance(owner, str) and owner in OWNED_BY:
        return OWNED_BY[owner], f"/v1/models owned_by={owner}"
    metrics = await _get(client, f"{base_url}/metrics")
    if metrics is not None and metrics.status_code == 200:
        name = engine_from_metrics(metrics.text)
        if name is not None:
            return name, f"/metrics {name}: prefix"
    header = metrics.headers.get("server", "") if metrics is not None else ""
    if "llama.cpp" in header.lower():
        return "llama.cpp", f"server header {header!r}"
    return UNKNOWN, "nothing recognisable (/props, /v1/models owned_by, /metrics, server header)"


async def _version(client: httpx.AsyncClient, base_url: str, name: str) -> tuple[str, str | None]:
    for path in _VERSION_PATHS.get(name, ("/version",)):
        try:
            status, body = await get_json(client, f"{base_url}{path}")
        except EngineError:
            continue
        if status == 200 and isinstance(body, dict) and isinstance(body.get("version"), str | int | float):
            return str(body["version"]), path
    return "unknown", None


async def detect_engine(
    client: httpx.AsyncClient, base_url: str, entry: dict[str, Any], context: int | None = None
) -> Detected:
    """Who serves ``base_url``; ``entry`` is the model's /v1/models entry, ``context`` its context length."""
    found = await _llama_cpp(client, base_url, context)
    if found is not None:
        return found
    name, evidence = await _name(client, base_url, entry)
    version, where = await _version(client, base_url, name)
    detected_from = f"{evidence}; version {where}" if where else evidence
    return Detected(name, version, detected_from, context)
