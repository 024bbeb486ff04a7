"""Small fake OpenAI-compatible servers on 127.0.0.1 that break the streaming contract on purpose.

A real server (llama.cpp) cannot be made to hang, stream forever, answer 429 with Retry-After or send malformed
SSE on demand, so these faults come from a plain HTTP server speaking the documented wire format
(``/v1/models``, ``/v1/completions`` as ``text/event-stream``: ``data: {json}`` lines, ``usage`` in the last
chunk, ``data: [DONE]``). Every behaviour is a function of (handler, attempt number) chosen per server; each
request is answered by its own thread, and ``stop`` ends them all.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Behaviour", "FakeServer", "fake_server", "BEHAVIOURS"]

MODEL = "fake-model"


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one request per connection; the body ends when the connection closes

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/v1/models":
            if not self.server.fake.authorised(self.headers.get("Authorization")):
                self._json(401, {"error": "missing or wrong bearer token"})
                return
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.body: dict[str, Any] = body
        fake = self.server.fake
        attempt = fake.count(body.get("seed"))
        fake.seen_auth.append(self.headers.get("Authorization"))
        if not fake.authorised(self.headers.get("Authorization")):
            self._json(401, {"error": f"bad token {self.headers.get('Authorization')}"})
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up: fine
            fake.behaviour(self, attempt)

    # helpers for behaviours
    def start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

    def data(self, obj: Any) -> None:
        self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
        self.wfile.flush()

    def good_stream(self, tokens: int = 4) -> None:
        self.start_stream()
        for _ in range(tokens):
            self.data({"choices": [{"index": 0, "text": " tok", "finish_reason": None}]})
        self.data({"choices": [{"index": 0, "text": "", "finish_reason": "length"}]})
        self.data(
            {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": tokens, "total_tokens": 5 + tokens}}
        )
        self.wfile.write(b"data: [DONE]\n\n")

    def wait_until_stopped(self, seconds: float = 600) -> None:
        self.server.fake.stopped.wait(seconds)


Behaviour = Callable[[_Handler, int], None]


def ok(h: _Handler, attempt: int) -> None:
    h.good_stream()


def slow_ok(h: _Handler, attempt: int) -> None:
    """A good stream that takes about 1.5 s: time for a signal to arrive mid-run."""
    h.start_stream()
    for _ in range(3):
        h.data({"choices": [{"index": 0, "text": " tok", "finish_reason": None}]})
        time.sleep(0.5)
    h.data({"choices": [{"index": 0, "text": "", "finish_reason": "length"}]})
    h.data({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})
    h.wfile.write(b"data: [DONE]\n\n")


def hang(h: _Handler, attempt: int) -> None:
    """Accepts the request and never answers."""
    h.wait_until_stopped()


def endless(h: _Handler, attempt: int) -> None:
    """Streams content forever (well-formed lines, never a finish)."""
    h.start_stream()
    while not h.server.fake.stopped.is_set():
        h.data({"choices": [{"index": 0, "text": " tok", "finish_reason": None}]})
        time.sleep(0.01)


def http_500(h: _Handler, attempt: int) -> None:
    h._json(500, {"error": {"message": "internal boom"}})


def throttled_then_ok(h: _Handler, attempt: int) -> None:
    """429 with Retry-After: 1 on the first two attempts of each request, then a good stream."""
    if attempt <= 2:
        h._json(429, {"error": "slow down"}, {"Retry-After": "1"})
    else:
        h.good_stream()


def throttled_forever(h: _Handler, attempt: int) -> None:
    h._json(503, {"error": "overloaded"}, {"Retry-After": "0"})


def malformed(h: _Handler, attempt: int) -> None:
    h.start_stream()
    h.wfile.write(b"data: {not json at all\n\n")


def no_newline(h: _Handler, attempt: int) -> None:
    """Streams bytes without ever ending a line (8 MiB at most, then waits)."""
    h.start_stream()
    chunk = b"x" * 65536
    for _ in range(128):
        if h.server.fake.stopped.is_set():
            return
        h.wfile.write(chunk)
    h.wait_until_stopped()


def every_fourth_fails(h: _Handler, attempt: int) -> None:
    """HTTP 500 for the requests whose seed is a multiple of 4 (a quarter of them), good streams otherwise."""
    if int(h.body.get("seed", 1)) % 4 == 0:
        http_500(h, attempt)
    else:
        h.good_stream()


def echo_auth_500(h: _Handler, attempt: int) -> None:
    """An error body that repeats the Authorization header it was sent (servers do)."""
    h._json(500, {"error": f"rejected credentials {h.headers.get('Authorization')}"})


BEHAVIOURS: dict[str, Behaviour] = {
    "ok": ok,
    "slow_ok": slow_ok,
    "hang": hang,
    "endless": endless,
    "http_500": http_500,
    "throttled_then_ok": throttled_then_ok,
    "throttled_forever": throttled_forever,
    "malformed": malformed,
    "no_newline": no_newline,
    "echo_auth_500": echo_auth_500,
    "every_fourth_fails": every_fourth_fails,
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeServer


@dataclass
class FakeServer:
    behaviour: Behaviour
    token: str | None = None  # when set, requests must carry `Authorization: Bearer <token>`
    stopped: threading.Event = field(default_factory=threading.Event)
    attempts: dict[Any, int] = field(default_factory=dict)
    seen_auth: list[str | None] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _httpd: _Server | None = None

    def count(self, key: Any) -> int:
        """Attempt number of the request with this key (its seed): 1, 2, ..."""
        with self._lock:
            self.attempts[key] = self.attempts.get(key, 0) + 1
            return self.attempts[key]

    def authorised(self, header: str | None) -> bool:
        return self.token is None or header == f"Bearer {self.token}"

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> None:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        threading.Thread(target=self._httpd.serve_forever, name="fake-server", daemon=True).start()

    def stop(self) -> None:
        self.stopped.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


@contextmanager
def fake_server(behaviour: str | Behaviour, token: str | None = None) -> Iterator[FakeServer]:
    """A fake server with this behaviour, stopped afterwards (its hanging handlers released)."""
    server = FakeServer(BEHAVIOURS[behaviour] if isinstance(behaviour, str) else behaviour, token)
    server.start()
    try:
        yield server
    finally:
        server.stop()
