"""A real HTTP server on 127.0.0.1 speaking the OpenAI streaming API with *its own* tokenizer, for tests.

What it stands in for: an OpenAI-compatible engine (vLLM, SGLang, ...) serving a model whose tokenizer is not
Gemma's. It follows the documented wire formats:

- ``GET /v1/models`` -> ``{"data": [{"id", "max_model_len"}]}`` (vLLM lists the context length there);
  ``GET /version`` -> ``{"version": ...}``;
- ``POST /tokenize`` and ``POST /detokenize`` in vLLM's form (``{"model", "prompt", "add_special_tokens",
  "return_token_strs"}`` -> ``{"count", "max_model_len", "tokens", "token_strs"}``; ``{"model", "tokens"}`` ->
  ``{"prompt"}``), only when ``tokenize_endpoint`` is on;
- ``POST /v1/completions`` and ``/v1/chat/completions`` with ``stream: true``: SSE chunks of one token each,
  then (with ``usage`` on) a final chunk whose ``usage.prompt_tokens`` is the server's own count: the tokenizer's
  ids of the prompt with special tokens (BOS); for chat, of a simple template ``<|role|>\\n{content}\\n`` per message
  plus ``<|assistant|>\\n``; then ``data: [DONE]``.

Output length: ``max_tokens`` tokens when the request has ``ignore_eos: true`` (and ``honours_ignore_eos``), else
the model "stops" after ``natural_stop`` tokens (finish_reason ``stop``). Each output token is the text
``ANSWER_WORD`` (one token of the tokenizer). The first token waits ``ttft_s(body)`` seconds (plantable per
request), the next ones ``token_gap_s``. Every request body is recorded for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ANSWER_WORD", "StubConfig", "StubServer", "openai_stub"]

ANSWER_WORD = " the"


@dataclass
class StubConfig:
    tokenizer: Any  # a tokenizers.Tokenizer (with a BOS post-processor)
    model: str = "stub-model"
    max_model_len: int = 4096
    tokenize_endpoint: bool = True
    usage: bool = True
    natural_stop: int = 5
    honours_ignore_eos: bool = True  # False: a server that ignores ignore_eos (its model stops at natural_stop)
    token_gap_s: float = 0.002
    ttft_s: Callable[[dict[str, Any]], float] = lambda body: 0.005


@dataclass
class StubServer:
    url: str
    config: StubConfig
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """The server's own count of a request's prompt (what it reports as usage.prompt_tokens)."""
        if "messages" in body:
            text = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in body["messages"]) + "<|assistant|>\n"
        else:
            text = body["prompt"]
        return len(self.config.tokenizer.encode(text, add_special_tokens=True).ids)


def _handler(server: StubServer) -> type[BaseHTTPRequestHandler]:
    cfg = server.config

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
            return None

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/v1/models":
                self._json(200, {"object": "list", "data": [{"id": cfg.model, "max_model_len": cfg.max_model_len}]})
            elif self.path == "/version":
                self._json(200, {"version": "stub-1"})
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            if self.path in ("/tokenize", "/detokenize") and cfg.tokenize_endpoint:
                self._tokenize(body) if self.path == "/tokenize" else self._detokenize(body)
            elif self.path in ("/v1/completions", "/v1/chat/completions"):
                server.bodies.append(body)
                self._stream(body, chat=self.path.endswith("chat/completions"))
            else:
                self._json(404, {"error": "not found"})

        def _tokenize(self, body: dict[str, Any]) -> None:
            if "prompt" not in body:
                self._json(400, {"error": "prompt is required"})
                return
            enc = cfg.tokenizer.encode(body["prompt"], add_special_tokens=bool(body.get("add_special_tokens", True)))
            strs = enc.tokens if body.get("return_token_strs") else None
            self._json(
                200, {"count": len(enc.ids), "max_model_len": cfg.max_model_len, "tokens": enc.ids, "token_strs": strs}
            )

        def _detokenize(self, body: dict[str, Any]) -> None:
            self._json(200, {"prompt": cfg.tokenizer.decode(body["tokens"], skip_special_tokens=False)})

        def _chunk(self, payload: Any) -> None:
            data = f"data: {json.dumps(payload) if not isinstance(payload, str) else payload}\n\n".encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _stream(self, body: dict[str, Any], chat: bool) -> None:
            want = int(body.get("max_tokens", 16))
            n = want if body.get("ignore_eos") and cfg.honours_ignore_eos else min(want, cfg.natural_stop)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            time.sleep(cfg.ttft_s(body))
            for i in range(n):
                if i:
                    time.sleep(cfg.token_gap_s)
                piece = {"delta": {"content": ANSWER_WORD}} if chat else {"text": ANSWER_WORD}
                self._chunk({"choices": [{"index": 0, **piece, "finish_reason": None}]})
            final: dict[str, Any] = {
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "length" if n == want else "stop",
                        **({"delta": {}} if chat else {"text": ""}),
                    }
                ]
            }
            if cfg.usage:
                prompt = server.prompt_tokens(body)
                final["usage"] = {"prompt_tokens": prompt, "completion_tokens": n, "total_tokens": prompt + n}
            self._chunk(final)
            self._chunk("[DONE]")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler


@contextmanager
def openai_stub(config: StubConfig) -> Iterator[StubServer]:
    """The stub on a free port of 127.0.0.1 (started in a thread, shut down on exit)."""
    server = StubServer("", config)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    httpd.daemon_threads = True
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)
