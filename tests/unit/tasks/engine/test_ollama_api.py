"""Parsing Ollama's management API (pull progress, errors, /api/ps) with httpx.MockTransport."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tcobench.errors import EngineError
from tcobench.tasks.engine import EngineEvent
from tcobench.tasks.engine.ollama_api import load_model, loaded_model, pull_model

BASE = "http://ollama.test"


def _ndjson(*objs: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def _transport(status: int, body: bytes) -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: httpx.Response(status, content=body))


def test_pull_reports_progress_and_needs_success() -> None:
    events: list[EngineEvent] = []
    body = _ndjson(
        {"status": "pulling manifest"},
        {"status": "pulling abc", "digest": "sha256:abc", "total": 100, "completed": 40},
        {"status": "pulling abc", "digest": "sha256:abc", "total": 100, "completed": 100},
        {"status": "success"},
    )
    pull_model(BASE, "m", events.append, transport=_transport(200, body))
    assert [(e.completed, e.total) for e in events] == [(None, None), (40, 100), (100, 100), (None, None)]
    assert events[0].message == "pull m: pulling manifest"
    with pytest.raises(EngineError, match="ended without success"):
        pull_model(BASE, "m", transport=_transport(200, _ndjson({"status": "pulling manifest"})))


def test_pull_errors_name_the_model_and_server() -> None:
    with pytest.raises(EngineError, match="pull of 'nope' from http://ollama.test/api/pull failed: file does not"):
        pull_model(BASE, "nope", transport=_transport(200, _ndjson({"error": "file does not exist"})))
    with pytest.raises(EngineError, match="HTTP 500"):
        pull_model(BASE, "m", transport=_transport(500, b'{"error": "boom"}'))
    with pytest.raises(EngineError, match="malformed"):
        pull_model(BASE, "m", transport=_transport(200, b"{not json\n"))


def test_load_sends_the_run_context_length() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json={"done": True, "done_reason": "load"})

    load_model(BASE, "m", 4096, "-1", transport=httpx.MockTransport(handler))
    assert seen == [{"model": "m", "prompt": "", "stream": False, "keep_alive": "-1", "options": {"num_ctx": 4096}}]
    with pytest.raises(EngineError, match="HTTP 404"):
        load_model(BASE, "m", 4096, "-1", transport=_transport(404, b"model not found"))


def test_ps_flags_cpu_offload() -> None:
    listing = {
        "models": [
            {
                "name": "llama3.2:latest",
                "model": "llama3.2:latest",
                "size": 1000,
                "size_vram": 600,
                "context_length": 4096,
            },
            {"name": "full:latest", "model": "full:latest", "size": 1000, "size_vram": 1000},
        ]
    }
    transport = _transport(200, json.dumps(listing).encode())
    partial = loaded_model(BASE, "llama3.2", transport=transport)
    assert partial is not None and partial.cpu_offload and partial.context_length == 4096
    assert partial.as_settings() == {
        "ps_size_bytes": 1000,
        "ps_size_vram_bytes": 600,
        "ps_context_length": 4096,
        "cpu_offload": True,
    }
    full = loaded_model(BASE, "full:latest", transport=transport)
    assert full is not None and not full.cpu_offload
    assert loaded_model(BASE, "absent", transport=transport) is None
    with pytest.raises(EngineError, match="is this an Ollama server"):
        loaded_model(BASE, "m", transport=_transport(404, b"404 page not found"))
