"""A real HTTP server on 127.0.0.1 that replays Ollama's documented API (docs/api.md), for tests.

No Ollama binary can be installed on our build machines, so the Ollama adapter is exercised
against this stand-in: the mock server (bench/mock_engine.py) on an ephemeral port, run in a thread,
playing these recorded answers in the documented wire format:

- ``GET /api/version`` -> ``{"version": "0.x.y"}``;
- ``GET /api/tags`` -> ``{"models": [{"name", "model", "digest", ...}]}``;
- ``POST /api/generate`` and ``POST /api/chat`` -> NDJSON, one JSON object per line, written as
  HTTP/1.1 chunks with real pauses between lines (so a client sees them arrive over time); the
  last object has ``done: true``, ``done_reason`` and the counters (durations in ns).

The requested model name selects the scenario:

- ``normal``: ``len(TOKENS)`` token objects, then a final object with every counter;
- ``midstream-error``: two tokens, then ``{"error": ...}`` inside the HTTP 200 stream;
- ``missing-metrics``: tokens, then a final object with ``eval_count`` and ``done_reason`` only;
- ``no-counters``: tokens, then a final object with ``done_reason`` and no counter at all (a server or proxy that
  strips them: token counts must come from the model's tokenizer);
- ``truncated``: tokens, then half a JSON line, then the connection closes without ending the
  chunked body (what a client sees when the server dies mid-stream);
- ``truncated-close``: the same, with the body delimited by ``Connection: close`` instead of chunks,
  so the half line does reach the client's line reader;
- ``http-500``: HTTP 500 with ``{"error": ...}``;
- ``offload``: like ``normal``, but ``/api/ps`` reports half of it in VRAM (``size_vram < size``: partly on CPU);
- any other name: HTTP 404 ``{"error": "model '...' not found"}``, as Ollama answers.
``llama3.2:latest`` is listed by ``/api/tags`` and behaves like ``normal``.

Model management (what tcobench does before measuring an Ollama container):

- ``POST /api/pull`` -> NDJSON status objects: ``pulling manifest``, one ``pulling <digest>`` per
  layer with ``digest``/``total``/``completed`` bytes (``PULL_STEPS`` updates of ``PULL_TOTAL``),
  ``verifying sha256 digest``, ``writing manifest``, ``success``; an unknown model gets
  ``{"error": "pull model manifest: file does not exist"}`` inside the HTTP 200 stream;
- ``POST /api/generate`` with an empty prompt and ``stream: false`` -> loads the model: one JSON object
  with ``done_reason: "load"``; the model (and the ``options.num_ctx`` it was loaded with) joins ``/api/ps``;
- ``GET /api/ps`` -> ``{"models": [{"name", "model", "size", "size_vram", "context_length", ...}]}``.

Every request is recorded (method, path, parsed JSON body) so tests can assert what the client sent.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.mock_server import Options, Reply, Request, Running, start

__all__ = [
    "COUNTERS",
    "DONE_REASON",
    "ERROR_MESSAGE",
    "FIRST_TOKEN_DELAY_S",
    "HTTP_500_MESSAGE",
    "LISTED_MODELS",
    "MIDSTREAM_TOKENS",
    "PS_SIZE",
    "PULL_ERROR",
    "PULL_STEPS",
    "PULL_TOTAL",
    "SCENARIOS",
    "TOKEN_GAP_S",
    "TOKENS",
    "VERSION",
    "OllamaReplay",
    "Received",
    "digest_of",
    "ollama_replay",
]

VERSION = "0.12.6"
SCENARIOS = (
    "normal",
    "midstream-error",
    "missing-metrics",
    "no-counters",
    "truncated",
    "truncated-close",
    "http-500",
    "offload",
)
LISTED_MODELS = ("llama3.2:latest", *(f"{name}:latest" for name in SCENARIOS))
TOKENS = ("The", " sky", " is", " blue", ".")
MIDSTREAM_TOKENS = 2  # tokens sent before the in-stream error and before the truncation
FIRST_TOKEN_DELAY_S = 0.02  # pause before the first line (the "prefill")
TOKEN_GAP_S = 0.01  # pause before every later line
DONE_REASON = "stop"
ERROR_MESSAGE = "an error was encountered while running the model: unexpected EOF"
HTTP_500_MESSAGE = "llama runner process has terminated: exit status 2"
# Counters of the final object: distinct values, so a test can tell one from another.
COUNTERS: dict[str, int] = {
    "total_duration": 123_456_789,
    "load_duration": 1_234_567,
    "prompt_eval_count": 26,
    "prompt_eval_duration": 45_678_901,
    "eval_count": len(TOKENS),
    "eval_duration": 67_890_123,
}
_CREATED_AT = "2026-01-01T00:00:00.000000Z"
PULL_TOTAL = 2_019_393_189  # bytes of the one layer a pull reports
PULL_STEPS = 4  # progress updates of that layer (completed = total * i / PULL_STEPS)
PULL_ERROR = "pull model manifest: file does not exist"
PS_SIZE = 3_355_443_200  # bytes /api/ps reports for a loaded model


def digest_of(name: str) -> str:
    """The digest /api/tags reports for a listed model (sha256 hex of its name)."""
    return hashlib.sha256(name.encode()).hexdigest()


@dataclass(frozen=True)
class Received:
    """One request the server received."""

    method: str
    path: str
    body: dict[str, Any] | None


def _tags() -> dict[str, Any]:
    return {
        "models": [
            {
                "name": name,
                "model": name,
                "modified_at": _CREATED_AT,
                "size": 2_019_393_189,
                "digest": digest_of(name),
                "details": {
                    "format": "gguf",
                    "family": "llama",
                    "parameter_size": "3.2B",
                    "quantization_level": "Q4_K_M",
                },
            }
            for name in LISTED_MODELS
        ]
    }


def _token(model: str, chat: bool, text: str) -> dict[str, Any]:
    obj: dict[str, Any] = {"model": model, "created_at": _CREATED_AT}
    if chat:
        obj["message"] = {"role": "assistant", "content": text}
    else:
        obj["response"] = text
    obj["done"] = False
    return obj


def _final(model: str, chat: bool, counters: dict[str, int]) -> dict[str, Any]:
    obj = _token(model, chat, "")
    obj.update(done=True, done_reason=DONE_REASON, **counters)
    if not chat:
        obj["context"] = [1, 2, 3]
    return obj


def _lines(scenario: str, model: str, chat: bool) -> list[bytes]:
    """Complete NDJSON lines of a streamed answer (the truncated scenarios add their half line)."""
    tokens = TOKENS if scenario in ("normal", "missing-metrics", "no-counters") else TOKENS[:MIDSTREAM_TOKENS]
    objs = [_token(model, chat, text) for text in tokens]
    if scenario == "normal":
        objs.append(_final(model, chat, COUNTERS))
    elif scenario == "missing-metrics":
        objs.append(_final(model, chat, {"eval_count": COUNTERS["eval_count"]}))
    elif scenario == "no-counters":
        objs.append(_final(model, chat, {}))
    elif scenario == "midstream-error":
        objs.append({"error": ERROR_MESSAGE})
    return [json.dumps(obj).encode() + b"\n" for obj in objs]


def _scenario(model: str) -> str | None:
    name = model.removesuffix(":latest")
    if name == "llama3.2":
        return "normal"
    return name if name in SCENARIOS else None


def _pull_lines(model: str) -> list[bytes]:
    if _scenario(model) is None:
        return [json.dumps({"error": PULL_ERROR}).encode() + b"\n"]
    digest = f"sha256:{digest_of(model)}"
    objs: list[dict[str, Any]] = [{"status": "pulling manifest"}]
    objs += [
        {
            "status": f"pulling {digest[7:19]}",
            "digest": digest,
            "total": PULL_TOTAL,
            "completed": PULL_TOTAL * i // PULL_STEPS,
        }
        for i in range(1, PULL_STEPS + 1)
    ]
    objs += [{"status": "verifying sha256 digest"}, {"status": "writing manifest"}, {"status": "success"}]
    return [json.dumps(obj).encode() + b"\n" for obj in objs]


def _ps_entry(model: str, num_ctx: int | None) -> dict[str, Any]:
    name = model if ":" in model else f"{model}:latest"
    vram = PS_SIZE // 2 if _scenario(model) == "offload" else PS_SIZE
    return {
        "name": name,
        "model": name,
        "size": PS_SIZE,
        "digest": digest_of(name),
        "details": {"format": "gguf", "family": "llama", "quantization_level": "Q4_K_M"},
        "expires_at": "2026-01-01T01:00:00.000000Z",
        "size_vram": vram,
        "context_length": num_ctx,
    }


def _json(status: int, obj: Any) -> Reply:
    return Reply(status, obj, content_type="application/json; charset=utf-8")


def _ndjson(lines: list[bytes], first_delay: float = TOKEN_GAP_S, **how: Any) -> Reply:
    """Lines streamed with real pauses: ``first_delay`` before the first one, ``TOKEN_GAP_S`` before the others."""
    frames = [(first_delay if i == 0 else TOKEN_GAP_S, line) for i, line in enumerate(lines)]
    return Reply(frames=frames, content_type="application/x-ndjson", **how)


def _is_load(path: str, body: dict[str, Any]) -> bool:
    """Ollama loads without generating when the prompt is empty (and no messages are sent)."""
    return path == "/api/generate" and not body.get("prompt") and body.get("stream") is False


class OllamaReplay:
    """The running server: its base URL and what it received. Use through ``ollama_replay()``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded: dict[str, int | None] = {}  # model -> num_ctx it was loaded with
        self._running: Running | None = None
        self.url = ""

    @property
    def received(self) -> list[Received]:
        assert self._running is not None
        return [Received(r.method, r.path, r.body) for r in self._running.requests]

    @property
    def max_streaming(self) -> int:
        """Most generation streams served at once."""
        assert self._running is not None
        return self._running.engine.max_active

    def generations(self) -> list[Received]:
        """POSTs to /api/generate or /api/chat, in arrival order."""
        return [r for r in self.received if r.method == "POST" and r.path in ("/api/generate", "/api/chat")]

    def load(self, model: str, num_ctx: int | None) -> None:
        with self._lock:
            self._loaded[model] = num_ctx

    def loaded_models(self) -> list[dict[str, Any]]:
        """What /api/ps answers: every model loaded through an empty-prompt generate."""
        with self._lock:
            return [_ps_entry(model, num_ctx) for model, num_ctx in self._loaded.items()]

    def _generate(self, request: Request) -> Reply:
        body = request.body or {}
        model = str(body.get("model", ""))
        scenario = _scenario(model)
        chat = request.path == "/api/chat"
        if scenario is not None and _is_load(request.path, body):
            self.load(model, (body.get("options") or {}).get("num_ctx"))
            return _json(
                200, {"model": model, "created_at": _CREATED_AT, "response": "", "done": True, "done_reason": "load"}
            )
        if scenario is None:
            return _json(404, {"error": f"model '{model}' not found"})
        if scenario == "http-500":
            return _json(500, {"error": HTTP_500_MESSAGE})
        lines = _lines(scenario, model, chat)
        if not scenario.startswith("truncated"):
            return _ndjson(lines, FIRST_TOKEN_DELAY_S)
        lines.append(json.dumps(_final(model, chat, COUNTERS)).encode()[:25])  # half a line, no newline
        framing = "close" if scenario == "truncated-close" else "chunked"  # close: the body ends with the connection
        return _ndjson(lines, FIRST_TOKEN_DELAY_S, framing=framing, end="cut")

    def options(self) -> Options:
        """The mock server's options: no built-in route, Ollama's answers replayed."""
        routes: dict[tuple[str, str], Callable[[Request], Reply]] = {
            ("GET", "/api/version"): lambda r: _json(200, {"version": VERSION}),
            ("GET", "/api/tags"): lambda r: _json(200, _tags()),
            ("GET", "/api/ps"): lambda r: _json(200, {"models": self.loaded_models()}),
            ("POST", "/api/pull"): lambda r: _ndjson(
                _pull_lines(str((r.body or {}).get("model", ""))), in_flight=False
            ),
            ("POST", "/api/generate"): self._generate,
            ("POST", "/api/chat"): self._generate,
        }
        return Options(wire="none", routes=routes, record=True)

    def start(self) -> None:
        self._running = start(self.options())
        self.url = self._running.url

    def stop(self) -> None:
        assert self._running is not None
        self._running.stop()


@contextmanager
def ollama_replay() -> Iterator[OllamaReplay]:
    """Start the replay server; it is always shut down (and its thread joined) on exit."""
    replay = OllamaReplay()
    replay.start()
    try:
        yield replay
    finally:
        replay.stop()
