"""A streaming endpoint that costs (almost) nothing: measures the client, not an engine.

Speaks OpenAI SSE (``/v1/completions``, ``/v1/chat/completions``, ``/v1/models``; ``usage`` in the final
data chunk, then ``[DONE]``) and Ollama NDJSON (``/api/generate``, ``/api/chat``, ``/api/version``,
``/api/tags``; the final ``done: true`` object carries Ollama's counters in ns). Every response streams
``tokens`` chunks of one token each (the text `` tok``), the first one ``ttft`` after the request arrived
and the next ones every ``itl``, on an absolute schedule (no drift accumulates). A request's ``max_tokens``
(or ``num_predict``) sets its length unless ``--fixed-tokens``.

Design notes: docs/dev/architecture/bench-and-build.md#bench-zero-endpoint.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import selectors
import statistics
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tcobench.tasks.analysis.quantile import quantile

__all__ = ["EndpointConfig", "Stats", "ZeroProtocol", "main", "serve", "start_in_thread"]

TOKEN_TEXT = " tok"
CREATED_AT = "2026-01-01T00:00:00Z"


@dataclass(frozen=True)
class EndpointConfig:
    ttft_s: float = 0.0
    itl_s: float = 0.0
    tokens: int = 16
    fixed_tokens: bool = False
    model: str = "zero"


@dataclass
class Stats:
    requests: int = 0
    tokens: int = 0
    lateness_ns: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        late = self.lateness_ns
        mean = statistics.fmean(late) if late else None
        return {
            "requests": self.requests,
            "tokens": self.tokens,
            "timed_writes": len(late),
            "lateness_ns": {
                "p50": quantile(late, 0.5),
                "p99": quantile(late, 0.99),
                "max": max(late) if late else None,
                "mean": mean,
            },
        }


def _chunk(payload: bytes) -> bytes:
    """One HTTP/1.1 chunked-encoding frame."""
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


class Wire:
    """Pre-encoded frames of one route: head, token frame, and the tail for a given token count."""

    def __init__(self, route: str, model: str) -> None:
        self.route = route
        self.model = model
        self.sse = route.startswith("/v1/")
        ctype = b"text/event-stream" if self.sse else b"application/x-ndjson"
        self.head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" % ctype
        )
        self.token = _chunk(self._encode(self._token_obj()))
        self._tails: dict[tuple[int, int], bytes] = {}

    def _encode(self, obj: Any) -> bytes:
        return b"data: " + _dumps(obj) + b"\n\n" if self.sse else _dumps(obj) + b"\n"

    def _token_obj(self) -> dict[str, Any]:
        if self.route == "/v1/completions":
            return {
                "id": "cmpl-zero",
                "object": "text_completion",
                "created": 0,
                "model": self.model,
                "choices": [{"index": 0, "text": TOKEN_TEXT, "finish_reason": None}],
            }
        if self.route == "/v1/chat/completions":
            return {
                "id": "chatcmpl-zero",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": self.model,
                "choices": [{"index": 0, "delta": {"content": TOKEN_TEXT}, "finish_reason": None}],
            }
        if self.route == "/api/chat":
            return {
                "model": self.model,
                "created_at": CREATED_AT,
                "message": {"role": "assistant", "content": TOKEN_TEXT},
                "done": False,
            }
        return {"model": self.model, "created_at": CREATED_AT, "response": TOKEN_TEXT, "done": False}

    def tail(self, prompt_tokens: int, tokens: int, ttft_ns: int, itl_ns: int) -> bytes:
        key = (prompt_tokens, tokens)
        if key not in self._tails:
            self._tails[key] = self._tail(prompt_tokens, tokens, ttft_ns, itl_ns)
        return self._tails[key]

    def _tail(self, prompt_tokens: int, tokens: int, ttft_ns: int, itl_ns: int) -> bytes:
        if self.sse:
            usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": tokens,
                "total_tokens": prompt_tokens + tokens,
            }
            finish = self._token_obj()
            choice = finish["choices"][0]
            choice.update({"text": ""} if "text" in choice else {"delta": dict[str, str]()})
            choice["finish_reason"] = "length"
            final = {
                "id": finish["id"],
                "object": finish["object"],
                "created": 0,
                "model": self.model,
                "choices": [],
                "usage": usage,
            }
            body = self._encode(finish) + self._encode(final) + b"data: [DONE]\n\n"
        else:
            last = self._token_obj()
            last.update(
                {
                    "done": True,
                    "done_reason": "length",
                    "total_duration": ttft_ns + itl_ns * tokens,
                    "load_duration": 0,
                    "prompt_eval_count": prompt_tokens,
                    "prompt_eval_duration": ttft_ns,
                    "eval_count": tokens,
                    "eval_duration": itl_ns * max(tokens - 1, 0),
                }
            )
            if "message" in last:
                last["message"] = {"role": "assistant", "content": ""}
            else:
                last["response"] = ""
            body = self._encode(last)
        return _chunk(body) + b"0\r\n\r\n"


def _json_response(status: str, obj: Any) -> bytes:
    body = _dumps(obj)
    return b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        status.encode(),
        len(body),
        body,
    )


class Server:
    """State shared by every connection: config, pre-encoded wires, stats."""

    def __init__(self, config: EndpointConfig) -> None:
        self.config = config
        self.stats = Stats()
        routes = ("/v1/completions", "/v1/chat/completions", "/api/generate", "/api/chat")
        self.wires = {r: Wire(r, config.model) for r in routes}
        self.ttft_ns = round(config.ttft_s * 1e9)
        self.itl_ns = round(config.itl_s * 1e9)
        model = config.model if ":" in config.model else f"{config.model}:latest"
        self.static = {
            "/v1/models": _json_response(
                "200 OK",
                {
                    "object": "list",
                    "data": [{"id": config.model, "object": "model", "created": 0, "owned_by": "tcobench-bench"}],
                },
            ),
            "/api/version": _json_response("200 OK", {"version": "0.0.0-zero"}),
            "/api/tags": _json_response(
                "200 OK", {"models": [{"name": model, "model": model, "digest": "0" * 64, "size": 0}]}
            ),
            "/health": _json_response("200 OK", {"status": "ok"}),
        }


def _tokens_asked(body: dict[str, Any], default: int) -> int:
    for value in (
        body.get("max_tokens"),
        body.get("max_completion_tokens"),
        (body.get("options") or {}).get("num_predict"),
    ):
        if isinstance(value, int) and value > 0:
            return value
    return default


def _prompt_tokens(body: dict[str, Any]) -> int:
    if isinstance(body.get("prompt"), str):
        return len(body["prompt"].split())
    messages = body.get("messages") or []
    return sum(len(str(m.get("content", "")).split()) for m in messages if isinstance(m, dict))


class ZeroProtocol(asyncio.Protocol):
    """One client connection: parse HTTP/1.1 requests, answer with timed pre-encoded frames."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.buffer = b""
        self.busy = False
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()
        self.handle: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        if self.handle is not None:
            self.handle.cancel()
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.busy:
            self._next_request()

    def _next_request(self) -> None:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0 or self.transport is None:
            return
        head = self.buffer[:end].decode("latin-1")
        request_line, *header_lines = head.split("\r\n")
        length = 0
        for line in header_lines:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if len(self.buffer) < end + 4 + length:
            return
        body = self.buffer[end + 4 : end + 4 + length]
        self.buffer = self.buffer[end + 4 + length :]
        method, target, *_ = request_line.split(" ")
        self._dispatch(method, target, body)

    def _dispatch(self, method: str, target: str, body: bytes) -> None:
        assert self.transport is not None
        path, _, query = target.partition("?")
        server = self.server
        if method == "POST" and path in server.wires:
            self._stream(server.wires[path], body)
            return
        if path == "/stats":
            self.transport.write(_json_response("200 OK", server.stats.as_dict()))
            if "reset=1" in query:
                server.stats = Stats()
        elif method == "GET" and path in server.static:
            self.transport.write(server.static[path])
        else:
            self.transport.write(_json_response("404 Not Found", {"error": f"no route {method} {path}"}))
        self._next_request()

    def _stream(self, wire: Wire, raw: bytes) -> None:
        assert self.transport is not None
        server = self.server
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            self.transport.write(_json_response("400 Bad Request", {"error": "body is not JSON"}))
            return
        tokens = server.config.tokens if server.config.fixed_tokens else _tokens_asked(body, server.config.tokens)
        tail = wire.tail(_prompt_tokens(body), tokens, server.ttft_ns, server.itl_ns)
        server.stats.requests += 1
        server.stats.tokens += tokens
        self.busy = True
        start = self.loop.time()
        if server.ttft_ns == 0 and server.itl_ns == 0:
            self.transport.write(wire.head + wire.token * tokens + tail)
            self._finish()
            return
        self.transport.write(wire.head)
        self._schedule(wire, tokens, tail, start, 0)

    def _schedule(self, wire: Wire, tokens: int, tail: bytes, start: float, sent: int) -> None:
        config = self.server.config
        when = start + config.ttft_s + sent * config.itl_s
        self.handle = self.loop.call_at(when, self._emit, wire, tokens, tail, start, sent, when)

    def _emit(self, wire: Wire, tokens: int, tail: bytes, start: float, sent: int, when: float) -> None:
        self.handle = None
        if self.transport is None:
            return
        self.server.stats.lateness_ns.append(round((self.loop.time() - when) * 1e9))
        sent += 1
        if sent >= tokens:
            self.transport.write(wire.token + tail)
            self._finish()
        elif self.server.config.itl_s == 0:
            self.transport.write(wire.token * (tokens - sent + 1) + tail)
            self._finish()
        else:
            self.transport.write(wire.token)
            self._schedule(wire, tokens, tail, start, sent)

    def _finish(self) -> None:
        self.busy = False
        if self.buffer:
            self._next_request()


def loop_factory(selector: str) -> Callable[[], asyncio.AbstractEventLoop]:
    def make() -> asyncio.AbstractEventLoop:
        sel = selectors.SelectSelector() if selector == "select" else selectors.DefaultSelector()
        return asyncio.SelectorEventLoop(sel)

    return make


async def serve(config: EndpointConfig, host: str = "127.0.0.1", port: int = 0) -> asyncio.Server:
    """Start listening; the caller keeps the loop running."""
    state = Server(config)
    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: ZeroProtocol(state), host, port, backlog=4096)


def start_in_thread(config: EndpointConfig, selector: str = "select") -> tuple[str, Callable[[], None]]:
    """Run the endpoint on its own loop in a daemon thread: (base URL, stop function). For tests."""
    loop = loop_factory(selector)()
    ready: list[str] = []
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        server = loop.run_until_complete(serve(config))
        ready.append(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}")
        started.set()
        loop.run_forever()
        server.close()
        loop.run_until_complete(server.wait_closed())
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(10)

    def stop() -> None:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    return ready[0], stop


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port (printed on start)")
    parser.add_argument("--ttft-ms", type=float, default=0.0)
    parser.add_argument("--itl-ms", type=float, default=0.0)
    parser.add_argument("--tokens", type=int, default=16, help="output tokens when the request asks none")
    parser.add_argument("--fixed-tokens", action="store_true", help="ignore max_tokens / num_predict")
    parser.add_argument("--model", default="zero")
    parser.add_argument("--selector", choices=("select", "epoll"), default="select")
    args = parser.parse_args(argv)
    config = EndpointConfig(args.ttft_ms / 1e3, args.itl_ms / 1e3, args.tokens, args.fixed_tokens, args.model)
    loop = loop_factory(args.selector)()
    server = loop.run_until_complete(serve(config, args.host, args.port))
    port = server.sockets[0].getsockname()[1]
    sys.stdout.write(f"listening on http://{args.host}:{port} pid {os.getpid()}\n")
    sys.stdout.flush()
    with contextlib.suppress(KeyboardInterrupt):
        loop.run_forever()


if __name__ == "__main__":
    main()
