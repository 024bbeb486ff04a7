"""Ollama's management API (docs/api.md): pull a model with progress, load it, and ask where it sits.

- ``POST /api/pull`` streams NDJSON status objects (``status``, and for layers ``digest``, ``total``,
  ``completed`` in bytes) ending with ``{"status": "success"}``; a failure is an ``{"error": ...}`` object,
  possibly inside an HTTP 200 stream.
- ``POST /api/generate`` with an empty prompt loads the model and returns at once; the load must use
  the run's ``num_ctx``, or the first measured request would reload the model with another context.
- ``GET /api/ps`` lists loaded models with ``size`` and ``size_vram`` (bytes): ``size_vram < size``
  means part of the model runs on the CPU, which a GPU comparison must flag.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from tcobench.errors import EngineError
from tcobench.tasks.engine.base import EngineEvent, OnEvent
from tcobench.tasks.tls import tls_context

__all__ = ["LoadedModel", "load_model", "loaded_model", "pull_model"]


@dataclass(frozen=True)
class LoadedModel:
    """One entry of /api/ps: where the model's bytes live."""

    name: str
    size: int
    size_vram: int
    context_length: int | None

    @property
    def cpu_offload(self) -> bool:
        return self.size_vram < self.size

    def as_settings(self) -> dict[str, Any]:
        return {
            "ps_size_bytes": self.size,
            "ps_size_vram_bytes": self.size_vram,
            "ps_context_length": self.context_length,
            "cpu_offload": self.cpu_offload,
        }


def _client(timeout_s: float, transport: httpx.BaseTransport | None) -> httpx.Client:
    return httpx.Client(
        timeout=httpx.Timeout(timeout_s, connect=5.0), trust_env=False, verify=tls_context(), transport=transport
    )


def _pull_event(model: str, obj: dict[str, Any]) -> EngineEvent:
    status = str(obj.get("status", ""))
    total, completed = obj.get("total"), obj.get("completed")
    if isinstance(total, int) and total > 0:
        done = completed if isinstance(completed, int) else 0
        return EngineEvent(f"pull {model}: {status[:40]}", completed=done, total=total)
    return EngineEvent(f"pull {model}: {status}")


def pull_model(
    base_url: str,
    model: str,
    on_event: OnEvent | None = None,
    timeout_s: float = 3600.0,
    transport: httpx.BaseTransport | None = None,
) -> None:
    """Pull ``model`` into the server, reporting each status line; EngineError naming the model and server."""
    url = f"{base_url}/api/pull"
    last = ""
    try:
        with (
            _client(timeout_s, transport) as client,
            client.stream("POST", url, json={"model": model, "stream": True}) as response,
        ):
            if response.status_code != 200:
                body = response.read().decode("utf-8", "replace").strip()
                raise EngineError(f"pull of {model!r} from {url} answered HTTP {response.status_code}: {body[:200]}")
            for line in response.iter_lines():
                if not line.strip():
                    continue
                obj = json.loads(line)
                if "error" in obj:
                    raise EngineError(f"pull of {model!r} from {url} failed: {obj['error']}")
                last = str(obj.get("status", ""))
                if on_event is not None:
                    on_event(_pull_event(model, obj))
    except httpx.HTTPError as exc:
        raise EngineError(f"pull of {model!r} from {url} failed: {type(exc).__name__}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise EngineError(f"pull of {model!r} from {url}: malformed status line ({exc})") from exc
    if last != "success":
        raise EngineError(f"pull of {model!r} from {url} ended without success (last status: {last or 'none'})")


def load_model(
    base_url: str,
    model: str,
    num_ctx: int,
    keep_alive: str,
    timeout_s: float = 600.0,
    transport: httpx.BaseTransport | None = None,
) -> None:
    """Load ``model`` with the run's context length (an empty prompt loads without generating)."""
    url = f"{base_url}/api/generate"
    body = {"model": model, "prompt": "", "stream": False, "keep_alive": keep_alive, "options": {"num_ctx": num_ctx}}
    try:
        with _client(timeout_s, transport) as client:
            response = client.post(url, json=body)
    except httpx.HTTPError as exc:
        raise EngineError(f"loading {model!r} at {url} failed: {type(exc).__name__}: {exc}") from exc
    if response.status_code != 200:
        raise EngineError(f"loading {model!r} at {url} answered HTTP {response.status_code}: {response.text[:200]}")


def _matches(entry: dict[str, Any], model: str) -> bool:
    names = {entry.get("name"), entry.get("model")}
    return model in names or f"{model}:latest" in names


def loaded_model(base_url: str, model: str, transport: httpx.BaseTransport | None = None) -> LoadedModel | None:
    """The /api/ps entry of ``model``, or None when it is not loaded."""
    url = f"{base_url}/api/ps"
    try:
        with _client(10.0, transport) as client:
            response = client.get(url)
            listing = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError) as exc:
        raise EngineError(f"cannot read {url}: {exc}") from exc
    if not isinstance(listing, dict):
        raise EngineError(f"{url} answered HTTP {response.status_code}; is this an Ollama server?")
    for entry in listing.get("models") or []:
        if isinstance(entry, dict) and _matches(entry, model):
            ctx = entry.get("context_length")
            return LoadedModel(
                name=str(entry.get("name")),
                size=int(entry.get("size") or 0),
                size_vram=int(entry.get("size_vram") or 0),
                context_length=int(ctx) if isinstance(ctx, int) else None,
            )
    return None
