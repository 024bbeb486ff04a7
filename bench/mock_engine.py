"""The one mock inference server of the tests and benches: an asyncio HTTP/1.1 server whose behaviours are options.

Real engines (vLLM, Ollama, a webhook receiver, a server that misbehaves on demand) cannot run on our build machines,
so tests and benches talk to this server, configured by ``Options``: the wire (OpenAI SSE, Ollama NDJSON), the
latency (fixed TTFT and ITL, or ITL = a + b x streams in flight), faults (HTTP status codes, stalls, endless or
malformed streams), a bearer token, webhooks, replay ``routes`` (recorded answers played on time) and recording.
The defaults are the zero-cost endpoint (it measures the client, not an engine): pre-encoded frames, timers on the
event loop, no per-request work beyond parsing. This one file needs only tcobench installed (the fleet's smoke
night ships it as ``zero_endpoint.py``).

Options and users: docs/dev/mock-server.md. Design notes: docs/dev/architecture/bench-and-build.md#bench-zero-endpoint.
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal

from tcobench.tasks.analysis.quantile import quantile

__all__ = [
    "Engine",
    "EndpointConfig",
    "Fault",
    "Options",
    "Reply",
    "Request",
    "Running",
    "Stats",
    "ZeroProtocol",
    "loop_factory",
    "main",
    "mock_engine",
    "run_forever",
    "serve",
    "start",
    "start_in_thread",
]

TOKEN_TEXT = " tok"
CREATED_AT = "2026-01-01T00:00:00Z"
OPENAI_ROUTES = ("/v1/completions", "/v1/chat/completions")
OLLAMA_ROUTES = ("/api/generate", "/api/chat")


@dataclass(frozen=True)
class Request:
    """One request as the server received it (``body``: its JSON, None when it has none)."""

    method: str
    path: str
    query: str
    headers: Mapping[str, str]  # names in lower case
    body: Any


@dataclass(frozen=True)
class Reply:
    """An answer of a replay route: a JSON ``body`` (Content-Length), or ``frames`` streamed one by one, each
    written ``delay`` seconds after the previous one (chunks, or a body that ends when the connection closes:
    ``framing="close"``). ``end``: ``finish`` ends the body; ``cut`` closes the connection without ending it;
    ``hang`` keeps it open until the server stops; ``endless`` repeats the last frame forever."""

    status: int = 200
    body: Any = None
    frames: Sequence[tuple[float, bytes]] | None = None
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    framing: Literal["chunked", "close"] = "chunked"
    end: Literal["finish", "cut", "hang", "endless"] = "finish"
    in_flight: bool = True  # a stream that counts in Engine.active while it plays
    raw: bytes | None = None  # a body sent as is (instead of ``body`` as JSON)


Route = Callable[[Request], Reply]


@dataclass(frozen=True)
class Fault:
    """What a misbehaving server does to a POST (replay routes and webhooks aside) instead of answering it.

    ``kind``: ``status`` (answer ``status`` with ``body``), ``hang`` (accept, never answer), ``endless`` (tokens
    every 10 ms, never a finish), ``malformed`` (a stream whose one frame is not JSON), ``no_newline`` (8 MiB
    that never end a line, then silence), ``echo_auth`` (``status`` with the Authorization header in the body).
    Which requests: the first ``first_attempts`` attempts of each seed (0: all of them), or, with
    ``seed_multiple``, the requests whose seed is a multiple of it."""

    kind: Literal["status", "hang", "endless", "malformed", "no_newline", "echo_auth"] = "status"
    status: int = 500
    body: Any = None
    retry_after: str | None = None
    first_attempts: int = 0
    seed_multiple: int | None = None

    def applies(self, body: Any, attempt: int) -> bool:
        if self.seed_multiple is not None:
            seed = int(body.get("seed", 1)) if isinstance(body, dict) else 1
            return seed % self.seed_multiple == 0
        return self.first_attempts == 0 or attempt <= self.first_attempts


@dataclass(frozen=True)
class Options:
    """Every behaviour of the mock server (the defaults: the zero-cost endpoint)."""

    ttft_s: float = 0.0
    itl_s: float = 0.0
    tokens: int = 16  # output tokens when the request asks none (or always, with fixed_tokens)
    fixed_tokens: bool = False
    model: str = "zero"
    itl_per_active_s: float = 0.0  # b of ITL = itl_s + b x streams in flight
    ttft_for: Callable[[Any], float] | None = None  # per request TTFT, from its body
    token_text: str = TOKEN_TEXT
    natural_stop: int | None = None  # the model stops after this many tokens unless the request says ignore_eos
    honours_ignore_eos: bool = True
    usage: bool = True  # the OpenAI stream's final usage chunk
    prompt_tokens: Callable[[Any], int] | None = None  # the server's own prompt count (default: words)
    max_model_len: int | None = None  # listed by /v1/models (vLLM does)
    framing: Literal["chunked", "close"] = "chunked"  # close: HTTP/1.0-style, one request a connection
    wire: Literal["both", "openai", "ollama", "none"] = "both"  # the built-in routes served (none: routes only)
    fault: Fault | None = None
    bearer: str | None = None  # requests must carry `Authorization: Bearer <bearer>` (401 otherwise)
    webhook_status: int | None = None  # POST /hooks/...: recorded, answered with this status
    routes: Mapping[tuple[str, str], Route] = field(default_factory=dict)
    record: bool = False


EndpointConfig = Options  # the zero endpoint's name for it


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


def _head(status: int, headers: Sequence[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _json_response(status: int, obj: Any, close: bool = False) -> bytes:
    """A JSON answer; ``close``: it says so (a client must not send another request on the connection)."""
    body = obj if isinstance(obj, bytes) else _dumps(obj)
    base = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    return _head(status, [*base, *((("Connection", "close"),) if close else ())]) + body


class Wire:
    """Pre-encoded frames of one route: head, token frame, and the tail for a given token count."""

    def __init__(self, route: str, options: Options) -> None:
        self.route = route
        self.model = options.model
        self.text = options.token_text
        self.usage = options.usage
        self.sse = route.startswith("/v1/")
        self.chunked = options.framing == "chunked"
        ctype = "text/event-stream" if self.sse else "application/x-ndjson"
        framing = ("Transfer-Encoding", "chunked") if self.chunked else ("Connection", "close")
        self.head = _head(200, [("Content-Type", ctype), ("Cache-Control", "no-cache"), framing])
        self.token = self.frame(self._encode(self._token_obj()))
        self._tails: dict[tuple[int, int, str], bytes] = {}

    def frame(self, payload: bytes) -> bytes:
        return _chunk(payload) if self.chunked else payload

    def _encode(self, obj: Any) -> bytes:
        return b"data: " + _dumps(obj) + b"\n\n" if self.sse else _dumps(obj) + b"\n"

    def _token_obj(self) -> dict[str, Any]:
        if self.route == "/v1/completions":
            return {
                "id": "cmpl-zero",
                "object": "text_completion",
                "created": 0,
                "model": self.model,
                "choices": [{"index": 0, "text": self.text, "finish_reason": None}],
            }
        if self.route == "/v1/chat/completions":
            return {
                "id": "chatcmpl-zero",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": self.model,
                "choices": [{"index": 0, "delta": {"content": self.text}, "finish_reason": None}],
            }
        if self.route == "/api/chat":
            return {
                "model": self.model,
                "created_at": CREATED_AT,
                "message": {"role": "assistant", "content": self.text},
                "done": False,
            }
        return {"model": self.model, "created_at": CREATED_AT, "response": self.text, "done": False}

    def tail(self, prompt_tokens: int, tokens: int, ttft_ns: int, itl_ns: int, finish: str = "length") -> bytes:
        key = (prompt_tokens, tokens, finish)
        if key not in self._tails:
            self._tails[key] = self._tail(prompt_tokens, tokens, ttft_ns, itl_ns, finish)
        return self._tails[key]

    def _tail(self, prompt_tokens: int, tokens: int, ttft_ns: int, itl_ns: int, finish: str) -> bytes:
        if self.sse:
            last = self._token_obj()
            choice = last["choices"][0]
            choice.update({"text": ""} if "text" in choice else {"delta": dict[str, str]()})
            choice["finish_reason"] = finish
            body = self._encode(last)
            if self.usage:
                usage = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": tokens,
                    "total_tokens": prompt_tokens + tokens,
                }
                final = {"id": last["id"], "object": last["object"], "created": 0, "model": self.model}
                body += self._encode({**final, "choices": [], "usage": usage})
            body += b"data: [DONE]\n\n"
        else:
            done = self._token_obj()
            done.update(
                {
                    "done": True,
                    "done_reason": finish,
                    "total_duration": ttft_ns + itl_ns * tokens,
                    "load_duration": 0,
                    "prompt_eval_count": prompt_tokens,
                    "prompt_eval_duration": ttft_ns,
                    "eval_count": tokens,
                    "eval_duration": itl_ns * max(tokens - 1, 0),
                }
            )
            if "message" in done:
                done["message"] = {"role": "assistant", "content": ""}
            else:
                done["response"] = ""
            body = self._encode(done)
        return self.frame(body) + (b"0\r\n\r\n" if self.chunked else b"")


class Engine:
    """State shared by every connection: options, pre-encoded wires, stats, what was received."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.config = options  # the zero endpoint's name
        self.stats = Stats()
        served = {"both": (*OPENAI_ROUTES, *OLLAMA_ROUTES), "openai": OPENAI_ROUTES, "ollama": OLLAMA_ROUTES}
        self.wires = {r: Wire(r, options) for r in served.get(options.wire, ())}
        self.ttft_ns = round(options.ttft_s * 1e9)
        self.itl_ns = round(options.itl_s * 1e9)
        self.active = 0  # streams in flight
        self.max_active = 0
        self.requests: list[Request] = []
        self.attempts: dict[Any, int] = {}
        self.stopped = asyncio.Event()
        self.connections: set[ZeroProtocol] = set()
        self.static = self._static(options)
        self.close = options.framing == "close"  # one request a connection, every answer saying so
        o = options  # an option that needs a look at each request before the zero endpoint's routes
        self.special = bool(o.record or o.routes or o.fault or o.bearer is not None or o.webhook_status is not None)

    @staticmethod
    def _static(options: Options) -> dict[str, bytes]:
        entry: dict[str, Any] = {"id": options.model, "object": "model", "created": 0, "owned_by": "tcobench-bench"}
        if options.max_model_len is not None:
            entry["max_model_len"] = options.max_model_len
        model = options.model if ":" in options.model else f"{options.model}:latest"
        close = options.framing == "close"
        openai = {"/v1/models": _json_response(200, {"object": "list", "data": [entry]}, close)}
        tags = {"models": [{"name": model, "model": model, "digest": "0" * 64, "size": 0}]}
        ollama = {
            "/api/version": _json_response(200, {"version": "0.0.0-zero"}, close),
            "/api/tags": _json_response(200, tags, close),
        }
        served = {"both": {**openai, **ollama}, "openai": openai, "ollama": ollama}.get(options.wire, {})
        return {**served, "/health": _json_response(200, {"status": "ok"}, close)}

    def started(self) -> None:
        self.active += 1
        self.max_active = max(self.max_active, self.active)


Server = Engine  # the zero endpoint's name for it


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


def _parse_head(head: str) -> tuple[str, str, dict[str, str]]:
    request_line, *header_lines = head.split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    method, target, *_ = request_line.split(" ")
    return method, target, headers


class ZeroProtocol(asyncio.Protocol):
    """One client connection: parse HTTP/1.1 requests, answer with timed pre-encoded frames (or a played Reply)."""

    def __init__(self, server: Engine) -> None:
        self.server = server
        self.buffer = b""
        self.busy = False
        self.streaming = False  # a stream counted in server.active
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()
        self.handle: asyncio.TimerHandle | None = None
        self.task: asyncio.Task[None] | None = None
        self.ttft = server.options.ttft_s
        self.due = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.handle is not None:
            self.handle.cancel()
        if self.task is not None:
            self.task.cancel()
        if self.streaming:  # a stream cut short is no longer in flight
            self.streaming = False
            self.server.active -= 1
        self.transport = None
        self.server.connections.discard(self)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.busy:
            self._next_request()

    def _next_request(self) -> None:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0 or self.transport is None:
            return
        method, target, headers = _parse_head(self.buffer[:end].decode("latin-1"))
        length = int(headers.get("content-length") or 0)
        if len(self.buffer) < end + 4 + length:
            return
        body = self.buffer[end + 4 : end + 4 + length]
        self.buffer = self.buffer[end + 4 + length :]
        self._dispatch(method, target, body, headers)

    def _dispatch(self, method: str, target: str, body: bytes, headers: dict[str, str] | None = None) -> None:
        assert self.transport is not None
        path, _, query = target.partition("?")
        server = self.server
        if server.special and self._special(method, path, query, body, headers or {}):
            return
        if method == "POST" and path in server.wires:
            self._stream(server.wires[path], body)
            return
        if path == "/stats":
            self._write(_json_response(200, server.stats.as_dict(), server.close))
            if "reset=1" in query:
                server.stats = Stats()
        elif method == "GET" and path in server.static:
            self._write(server.static[path])
        else:
            self._write(_json_response(404, {"error": f"no route {method} {path}"}, server.close))
        self._done()

    def _write(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)

    def _done(self) -> None:
        """A request answered: the next one on this connection, or the end of it (framing close)."""
        if self.server.options.framing == "close":
            if self.transport is not None:
                self.transport.close()
            return
        self._next_request()

    def _special(self, method: str, path: str, query: str, raw: bytes, headers: dict[str, str]) -> bool:
        """Recording, replay routes, webhooks, auth and faults; True when the request is answered."""
        server, options = self.server, self.server.options
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = Request(method, path, query, headers, body)
        attempt = 0
        if options.record:
            server.requests.append(request)
            if method == "POST":
                seed = body.get("seed") if isinstance(body, dict) else None
                attempt = server.attempts[seed] = server.attempts.get(seed, 0) + 1
        route = options.routes.get((method, path))
        if route is not None:
            self._play(route(request))
            return True
        if options.webhook_status is not None and method == "POST" and path.startswith("/hooks/"):
            self._play(Reply(options.webhook_status, raw=b"ok", content_type="text/plain"))
            return True
        if options.bearer is not None and headers.get("authorization") != f"Bearer {options.bearer}":
            got = headers.get("authorization")
            self._play(
                Reply(401, {"error": f"bad token {got}" if method == "POST" else "missing or wrong bearer token"})
            )
            return True
        fault = options.fault
        if fault is not None and method == "POST" and fault.applies(body, attempt):  # every POST, as a broken server
            self._play(self._fault_reply(fault, headers))
            return True
        return False

    def _fault_reply(self, fault: Fault, headers: dict[str, str]) -> Reply:
        sse = "text/event-stream"
        tok = b'data: {"choices": [{"index": 0, "text": " tok", "finish_reason": null}]}\n\n'
        if fault.kind == "hang":
            return Reply(frames=(), end="hang", content_type=sse)
        if fault.kind == "endless":
            return Reply(frames=((0.0, tok), (0.01, tok)), end="endless", content_type=sse)
        if fault.kind == "malformed":
            return Reply(frames=((0.0, b"data: {not json at all\n\n"),), content_type=sse)
        if fault.kind == "no_newline":
            return Reply(frames=[(0.0, b"x" * 65536)] * 128, end="hang", content_type=sse)
        if fault.kind == "echo_auth":
            return Reply(fault.status, {"error": f"rejected credentials {headers.get('authorization')}"})
        retry = (("Retry-After", fault.retry_after),) if fault.retry_after is not None else ()
        return Reply(fault.status, fault.body if fault.body is not None else {"error": "fault"}, headers=retry)

    def _play(self, reply: Reply) -> None:
        """Answer with a Reply: at once when it is a body, else as a task that writes its frames on time."""
        close = reply.framing == "close" or self.server.options.framing == "close"
        if reply.frames is None:
            raw = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()  # as servers write it
            headers = [("Content-Type", reply.content_type), ("Content-Length", str(len(raw))), *reply.headers]
            self._write(_head(reply.status, [*headers, *((("Connection", "close"),) if close else ())]) + raw)
            self._done()
            return
        self.busy = True
        self.task = self.loop.create_task(self._frames(reply, close))

    async def _frames(self, reply: Reply, close: bool) -> None:
        server = self.server
        framing = ("Connection", "close") if close else ("Transfer-Encoding", "chunked")
        if reply.end == "hang" and not reply.frames:  # accepted, never answered
            await server.stopped.wait()
            return
        self._write(_head(reply.status, [("Content-Type", reply.content_type), *reply.headers, framing]))
        if reply.in_flight:
            server.started()
            self.streaming = True
        frames = list(reply.frames or ())
        i = 0
        while i < len(frames) or (reply.end == "endless" and frames):
            delay, data = frames[min(i, len(frames) - 1)]
            if delay:
                await asyncio.sleep(delay)
            if self.transport is None or server.stopped.is_set():
                return
            self._write(data if close else _chunk(data))
            i += 1
        if reply.end == "hang":
            await server.stopped.wait()
            return
        if self.streaming:
            self.streaming = False
            server.active -= 1
        if reply.end == "cut" or close:
            assert self.transport is not None
            self.transport.close()
            return
        self._write(b"0\r\n\r\n")
        self.busy = False
        self.task = None
        self._next_request()

    def _stream(self, wire: Wire, raw: bytes) -> None:
        server = self.server
        options = server.options
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            self._write(_json_response(400, {"error": "body is not JSON"}, server.close))
            return
        tokens = options.tokens if options.fixed_tokens else _tokens_asked(body, options.tokens)
        finish = "length"
        if options.natural_stop is not None and not (body.get("ignore_eos") and options.honours_ignore_eos):
            finish = "length" if tokens <= options.natural_stop else "stop"
            tokens = min(tokens, options.natural_stop)
        prompt = options.prompt_tokens(body) if options.prompt_tokens is not None else _prompt_tokens(body)
        self.ttft = options.ttft_for(body) if options.ttft_for is not None else options.ttft_s
        ttft_ns = round(self.ttft * 1e9)
        tail = wire.tail(prompt, tokens, ttft_ns, server.itl_ns, finish)
        server.stats.requests += 1
        server.stats.tokens += tokens
        server.started()
        self.streaming = True
        self.busy = True
        start = self.loop.time()
        self.due = start
        if ttft_ns == 0 and server.itl_ns == 0 and options.itl_per_active_s == 0:
            self._write(wire.head + wire.token * tokens + tail)
            self._finish()
            return
        self._write(wire.head)
        self._schedule(wire, tokens, tail, start, 0)

    def _schedule(self, wire: Wire, tokens: int, tail: bytes, start: float, sent: int) -> None:
        options = self.server.options
        if options.itl_per_active_s:  # one step after the previous one was due, its cost set by the batch now
            self.due += (options.itl_s if sent else self.ttft) + options.itl_per_active_s * self.server.active
            when = self.due
        else:
            when = start + self.ttft + sent * options.itl_s
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
        elif self.server.options.itl_s == 0 and not self.server.options.itl_per_active_s:
            self.transport.write(wire.token * (tokens - sent + 1) + tail)
            self._finish()
        else:
            self.transport.write(wire.token)
            self._schedule(wire, tokens, tail, start, sent)

    def _finish(self) -> None:
        if self.streaming:
            self.streaming = False
            self.server.active -= 1
        self.busy = False
        if self.server.options.framing == "close":
            self._done()
        elif self.buffer:
            self._next_request()


def loop_factory(selector: str) -> Callable[[], asyncio.AbstractEventLoop]:
    def make() -> asyncio.AbstractEventLoop:
        sel = selectors.SelectSelector() if selector == "select" else selectors.DefaultSelector()
        return asyncio.SelectorEventLoop(sel)

    return make


async def serve(
    config: Options, host: str = "127.0.0.1", port: int = 0, engine: Engine | None = None
) -> asyncio.Server:
    """Start listening; the caller keeps the loop running."""
    state = engine if engine is not None else Engine(config)
    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: ZeroProtocol(state), host, port, backlog=4096)


@dataclass
class Running:
    """A mock server running on its own loop in a daemon thread: its URL and engine (what it received)."""

    url: str
    engine: Engine
    stop: Callable[[], None]

    @property
    def requests(self) -> list[Request]:
        return list(self.engine.requests)

    @property
    def attempts(self) -> dict[Any, int]:
        return dict(self.engine.attempts)


def start(options: Options, selector: str = "select", host: str = "127.0.0.1") -> Running:
    """Run the server on its own loop in a daemon thread. ``stop()`` releases stalled answers, closes every
    connection and joins the thread."""
    loop = loop_factory(selector)()
    box: list[tuple[str, Engine]] = []
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        engine = loop.run_until_complete(_engine(options))
        server = loop.run_until_complete(serve(options, host, 0, engine))
        box.append((f"http://{host}:{server.sockets[0].getsockname()[1]}", engine))
        started.set()
        loop.run_forever()
        server.close()
        for conn in list(engine.connections):
            if conn.transport is not None:
                conn.transport.close()
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(server.wait_closed())
        loop.close()

    thread = threading.Thread(target=run, name="mock-engine", daemon=True)
    thread.start()
    started.wait(10)
    url, engine = box[0]

    def stop() -> None:
        if not thread.is_alive():
            return
        loop.call_soon_threadsafe(engine.stopped.set)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    return Running(url, engine, stop)


async def _engine(options: Options) -> Engine:
    return Engine(options)  # made on the loop (its asyncio.Event belongs there)


def start_in_thread(config: Options, selector: str = "select") -> tuple[str, Callable[[], None]]:
    """Run the endpoint on its own loop in a daemon thread: (base URL, stop function). For tests."""
    running = start(config, selector)
    return running.url, running.stop


@contextlib.contextmanager
def mock_engine(options: Options) -> Iterator[Running]:
    """The mock server on a free port of 127.0.0.1, stopped on exit."""
    running = start(options)
    try:
        yield running
    finally:
        running.stop()


def main(argv: list[str] | None = None, description: str | None = None) -> None:
    parser = argparse.ArgumentParser(description=description or __doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port (printed on start)")
    parser.add_argument("--ttft-ms", type=float, default=0.0)
    parser.add_argument("--itl-ms", type=float, default=0.0)
    parser.add_argument("--b-ms", type=float, default=0.0, help="ITL = itl + b x streams in flight (and TTFT too)")
    parser.add_argument("--tokens", type=int, default=16, help="output tokens when the request asks none")
    parser.add_argument("--fixed-tokens", action="store_true", help="ignore max_tokens / num_predict")
    parser.add_argument("--model", default="zero")
    parser.add_argument("--selector", choices=("select", "epoll"), default="select")
    args = parser.parse_args(argv)
    config = Options(args.ttft_ms / 1e3, args.itl_ms / 1e3, args.tokens, args.fixed_tokens, args.model, args.b_ms / 1e3)
    run_forever(config, args.host, args.port, args.selector)


def run_forever(config: Options, host: str, port: int, selector: str = "select") -> None:
    """Listen until interrupted; print the URL first (a caller reads it from the first line)."""
    loop = loop_factory(selector)()
    server = loop.run_until_complete(serve(config, host, port))
    sys.stdout.write(f"listening on http://{host}:{server.sockets[0].getsockname()[1]} pid {os.getpid()}\n")
    sys.stdout.flush()
    with contextlib.suppress(KeyboardInterrupt):
        loop.run_forever()


if __name__ == "__main__":
    main()
