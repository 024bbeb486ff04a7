"""http1: a lean HTTP/1.1 client on raw asyncio streams, for the load generator's streaming requests.

httpx's CPU cost per request and per chunk (httpcore's pool, h11, anyio; docs/dev/performance.md#httpx-cost,
issue 15): that is the client's ceiling. This client does only what a streamed POST to one origin needs:

Design notes: docs/dev/architecture/load.md#tasks-http1.
"""

from __future__ import annotations

import asyncio
import contextlib
import platform
import re
import socket
import ssl
import struct
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "ConnectError",
    "ConnectTimeout",
    "Connection",
    "HttpError",
    "Origin",
    "ReadError",
    "RemoteProtocolError",
    "Response",
    "WriteError",
    "request_target",
]

MAX_BUFFERED_BYTES = 256 * 1024  # received bytes held for a reader that is behind: reading pauses over this
MAX_HEAD_BYTES = 64 * 1024  # a response's status line and headers (and a chunked body's trailers)
MAX_SIZE_LINE = 1024  # a chunk-size line (with extensions)
# RFC 9112's grammar, as h11 (httpx's parser) reads it: a status line, a header line (name, colon, a value of any
# byte but NUL, CR, LF, VT and FF), an obsolete folded continuation line, a chunk-size line with its extensions.
_STATUS_LINE = re.compile(rb"HTTP/([0-9]\.[0-9]) ([0-9]{3})(?: [^\x00\n\r\x0b\x0c]*)?")
_HEADER_LINE = re.compile(rb"([-!#$%&'*+.^_`|~0-9a-zA-Z]+):[^\x00\n\r\x0b\x0c]*")
_FOLDED_LINE = re.compile(rb"[ \t][^\x00\n\r\x0b\x0c]*")
_PARTIAL_STATUS = re.compile(
    rb"H(?:T(?:T(?:P(?:/(?:[0-9](?:\.(?:[0-9](?: (?:[0-9]{0,2}|[0-9]{3}"
    rb"(?: [^\x00\n\r\x0b\x0c]*)?))?)?)?)?)?)?)?)?\r?"  # a non-empty prefix of a status line (a lone CR is not)
)
_PARTIAL_HEADER = re.compile(
    rb"(?:[-!#$%&'*+.^_`|~0-9a-zA-Z]+(?::[^\x00\n\r\x0b\x0c]*)?|[ \t][^\x00\n\r\x0b\x0c]*)?\r?"
)
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;[^\n]*)?[ \t]*")
_PARTIAL_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{0,20}(?:;[^\n]*)?[ \t]*\r?")
_DIGITS = re.compile(rb"[0-9]{1,20}")  # h11's bound: 20 digits
# Linux's SO_TIMESTAMPNS (35 in asm-generic/socket.h, which x86-64 and arm64 use; Python's socket module does not
# name it): a struct timespec of CLOCK_REALTIME, two longs, comes with every read. Other platforms: no stamps.
SO_TIMESTAMPNS = 35
_STAMPED = sys.platform == "linux" and platform.machine() in ("x86_64", "aarch64") and struct.calcsize("l") == 8
_TIMESPEC = struct.Struct("qq")
_ANCILLARY = socket.CMSG_SPACE(_TIMESPEC.size) if _STAMPED else 0


class _StampedSocket(socket.socket):
    """A TCP socket whose every read notes ``arrival_ns``: when the kernel received the last of the bytes read
    (its SO_TIMESTAMPNS stamp, CLOCK_REALTIME, moved onto the perf counter at that read); 0 when that read brought none.
    asyncio's transport reads through ``recv`` (and ``recv_into`` under TLS)."""

    arrival_ns = 0

    def _note(self, ancillary: list[tuple[int, int, bytes]]) -> None:
        self.arrival_ns = 0  # a read without a stamp: none (not the last read's)
        for level, kind, raw in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(raw) >= _TIMESPEC.size:
                sec, nsec = _TIMESPEC.unpack_from(raw)
                self.arrival_ns = sec * 1_000_000_000 + nsec - (time.time_ns() - time.perf_counter_ns())

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        data, ancillary, _, _ = self.recvmsg(bufsize, _ANCILLARY, flags)
        self._note(ancillary)
        return data

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        view = memoryview(buffer).cast("B")
        n, ancillary, _, _ = self.recvmsg_into([view[:nbytes] if nbytes else view], _ANCILLARY, flags)
        self._note(ancillary)
        return n


def _literal(host: str, port: int) -> list[tuple[int, int, int, str, tuple[str, int]]]:
    """``host`` as its one address when it is an IP literal (as asyncio does: no resolver thread for it), else
    empty."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except OSError:
            continue
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port))]
    return []


async def _connected(host: str, port: int) -> socket.socket:
    """A non-blocking TCP socket connected to ``host``:``port`` (each resolved address in turn), kernel receive
    stamps on where the platform has them."""
    loop = asyncio.get_running_loop()
    failure: OSError | None = None
    for family, kind, proto, _, address in _literal(host, port) or await loop.getaddrinfo(
        host, port, type=socket.SOCK_STREAM
    ):
        sock = _StampedSocket(family, kind, proto) if _STAMPED else socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            if _STAMPED:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            await loop.sock_connect(sock, address)
            return sock
        except OSError as exc:
            sock.close()
            failure = exc
        except BaseException:
            sock.close()
            raise
    raise failure or OSError(f"no address for {host}:{port}")


class HttpError(Exception):
    """A transport failure (connecting, sending, reading, or a response that breaks HTTP/1.1)."""


class ConnectError(HttpError):
    pass


class ConnectTimeout(HttpError):
    pass


class WriteError(HttpError):
    pass


class ReadError(HttpError):
    pass


class RemoteProtocolError(HttpError):
    def __init__(self, message: str, nothing_received: bool = False) -> None:
        super().__init__(message)
        self.nothing_received = nothing_received  # the connection closed before any byte of a response


@dataclass(frozen=True)
class Origin:
    """Where a connection goes: scheme, host and port of a URL."""

    host: str
    port: int
    tls: bool

    @classmethod
    def of(cls, url: str) -> Origin:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        tls = parts.scheme == "https"
        return cls(parts.hostname, parts.port or (443 if tls else 80), tls)

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == (443 if self.tls else 80) else f"{host}:{self.port}"


def request_target(url: str) -> bytes:
    """The request line's target of ``url``: its path and query."""
    parts = urlsplit(url)
    return ((parts.path or "/") + (f"?{parts.query}" if parts.query else "")).encode("ascii")


class _Inbox(asyncio.Protocol):
    """One connection's received bytes as they came: each piece (one read of the socket, or what TLS decrypted
    from it) with when it reached the host, for one reader at a time. No stream buffer: a reader takes whole
    pieces, so bytes of two reads are never merged under one stamp however late the reader is."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._loop = asyncio.get_running_loop()
        self.pieces: deque[tuple[bytes, int]] = deque()
        self.size = 0  # bytes held in ``pieces``
        self.closed = False  # the peer's EOF or the connection's loss came
        self.error: BaseException | None = None  # why the connection was lost, if not a clean close
        self.transport: asyncio.Transport | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._reading_paused = False
        self._drain: asyncio.Future[None] | None = None  # while the transport's write buffer is over its limit
        self.lost: asyncio.Future[None] = self._loop.create_future()
        self.push: Callable[[bytes, int], None] | None = None  # set while a reader takes pieces as they come

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter_ns()
        stamp = getattr(self._sock, "arrival_ns", 0)
        stamp = stamp if 0 < stamp <= now else now
        if self.push is not None:  # a reader takes each piece in this callback
            self.push(data, stamp)
            return
        self.pieces.append((data, stamp))
        self.size += len(data)
        if self.size > MAX_BUFFERED_BYTES and not self._reading_paused and self.transport is not None:
            self._reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.closed = True
        self._wake()
        if self.push is not None:
            self.push(b"", time.perf_counter_ns())
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.error = exc
        self._wake()
        if self.push is not None:
            self.push(b"", time.perf_counter_ns())
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)
        if not self.lost.done():
            self.lost.set_result(None)

    def pause_writing(self) -> None:
        self._drain = self._loop.create_future()

    def resume_writing(self) -> None:
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)
        self._drain = None

    async def drained(self) -> None:
        if self._drain is not None:
            await self._drain
        if self.closed and self.error is not None:
            raise self.error

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def take(self) -> tuple[bytes, int]:
        """The next piece and its arrival (perf counter, ns); ``b""`` once the peer closed. A connection lost to
        an error raises it (OSError) once the pieces before it are taken."""
        while not self.pieces:
            if self.closed:
                if self.error is not None:
                    raise self.error
                return b"", time.perf_counter_ns()
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        data, stamp = self.pieces.popleft()
        self.size -= len(data)
        if self._reading_paused and self.size <= MAX_BUFFERED_BYTES // 2 and self.transport is not None:
            self._reading_paused = False
            self.transport.resume_reading()
        return data, stamp

    def hand_to(self, push: Callable[[bytes, int], None]) -> None:
        """Give ``push`` the pieces held (and ``b""`` if the peer already closed), then each piece as it comes:
        nothing is held any more, so reading resumes if it paused."""
        self.push = push
        while self.pieces:
            data, stamp = self.pieces.popleft()
            self.size -= len(data)
            push(data, stamp)
        if self.closed:
            push(b"", time.perf_counter_ns())
        if self._reading_paused and self.transport is not None:
            self._reading_paused = False
            self.transport.resume_reading()

    def put_back(self, data: bytes, stamp: int) -> None:
        """Return the unread end of a piece: the next ``take`` gets it first."""
        self.pieces.appendleft((data, stamp))
        self.size += len(data)


class _Sized:
    """A ``Content-Length`` body, fed bytes as they come (the framings share this shape: ``feed`` returns the
    payload bytes of what came, ``done`` once the body is whole, ``extra`` the bytes after it, ``at_eof`` when the
    peer closed)."""

    def __init__(self, length: int) -> None:
        self.length = self._left = length
        self.done = length == 0
        self.extra = b""

    def feed(self, data: bytes) -> list[bytes]:
        left = self._left
        if len(data) >= left:
            self.extra, data, self.done = data[left:], data[:left], True
        self._left = left - len(data)
        return [data] if data else []

    def at_eof(self) -> None:
        if not self.done:
            raise RemoteProtocolError(
                f"peer closed connection without sending complete message body: "
                f"received {self.length - self._left} bytes, expected {self.length}"
            )


class _ToClose:
    """A body that ends when the connection does (HTTP/1.0, no length)."""

    done = False
    extra = b""

    def feed(self, data: bytes) -> list[bytes]:
        return [data]

    def at_eof(self) -> None:
        self.done = True


class _HeadLines:
    """The lines of a response head (or of a chunked body's trailers), fed bytes as they come and checked as they
    come: a line ended by a bare LF (no CR), a complete line that breaks the grammar, or an incomplete one that
    already cannot become valid raises RemoteProtocolError at once, never after waiting for more bytes. ``done``
    once the empty line came, ``extra`` the bytes after it."""

    def __init__(self, what: str, status: bool) -> None:
        self._what = what  # "response head" or "chunked trailers", for messages
        self._status = status  # the first line is a status line
        self._buf = b""
        self._pos = 0  # where the line being received starts in ``_buf``
        self.lines: list[bytes] = []
        self.done = False
        self.extra = b""

    @property
    def started(self) -> bool:
        return bool(self._buf)

    def feed(self, data: bytes) -> None:
        buf, pos = self._buf + data, self._pos
        while True:
            i = buf.find(b"\n", pos)
            if i < 0:
                break
            if i == pos or buf[i - 1] != 0x0D:
                raise RemoteProtocolError(
                    f"malformed {self._what}: line {len(self.lines) + 1} ends in a bare LF "
                    "(LF without CR); HTTP/1.1 ends lines with CRLF"
                )
            line, pos = buf[pos : i - 1], i + 1
            if not line and (self.lines or not self._status):
                self.done, self.extra, self._buf = True, buf[pos:], b""
                return
            self._check(line)
            self.lines.append(line)
        if len(buf) > MAX_HEAD_BYTES:
            raise RemoteProtocolError(f"{self._what} over {MAX_HEAD_BYTES} bytes")
        rest = buf[pos:]
        partial = _PARTIAL_STATUS if self._status and not self.lines else _PARTIAL_HEADER
        if rest and partial.fullmatch(rest) is None:
            self._check(rest)  # raises, naming the line
        self._buf, self._pos = buf, pos

    def _check(self, line: bytes) -> None:
        if self._status and not self.lines:
            if _STATUS_LINE.fullmatch(line) is None:
                raise RemoteProtocolError(f"malformed status line: {line[:80]!r}")
        elif line[:1] in (b" ", b"\t"):
            if len(self.lines) == int(self._status) or _FOLDED_LINE.fullmatch(line) is None:
                raise RemoteProtocolError(f"malformed {self._what}: continuation line {line[:80]!r}")
        elif _HEADER_LINE.fullmatch(line) is None:
            raise RemoteProtocolError(f"malformed {self._what}: header line {line[:80]!r}")

    def fields(self) -> list[tuple[str, str]]:
        """(name lower-case, value without surrounding blanks) of each header line, folded lines joined."""
        out: list[tuple[bytes, bytes]] = []
        for line in self.lines[int(self._status) :]:
            if line[:1] in (b" ", b"\t"):
                name, value = out[-1]
                out[-1] = (name, value + b" " + line.lstrip(b" \t"))
            else:
                name, _, value = line.partition(b":")
                out.append((name, value))
        return [(name.lower().decode("ascii"), value.strip(b" \t").decode("latin-1")) for name, value in out]

    def response_head(self) -> tuple[bytes, int, dict[str, str]]:
        """(version, status, headers) of a complete response head; the framing headers are checked as h11 checks
        them: Content-Length digits only, one value however often repeated; Transfer-Encoding only ``chunked``."""
        match = _STATUS_LINE.fullmatch(self.lines[0])
        assert match is not None  # checked as it came
        headers: dict[str, str] = {}
        for name, value in self.fields():
            if name == "content-length":
                lengths = {v.strip(" \t") for v in value.split(",")}
                single = lengths.pop() if len(lengths) == 1 else None
                if single is None or headers.get(name, single) != single:
                    raise RemoteProtocolError(f"conflicting Content-Length headers: {value[:40]!r}")
                _length(value := single)
            elif name == "transfer-encoding":
                if name in headers:
                    raise RemoteProtocolError("multiple Transfer-Encoding headers")
                if value.lower() != "chunked":
                    raise RemoteProtocolError(f"unsupported Transfer-Encoding: {value[:40]!r} (only chunked)")
            headers[name] = f"{headers[name]}, {value}" if name in headers and name != "content-length" else value
        return b"HTTP/" + match[1], int(match[2]), headers


class _Dechunker:
    """Chunked transfer-encoding, fed bytes as they come: ``feed`` returns the payload bytes they complete or
    continue (partial chunks included); ``done`` once the last chunk and its trailers are in, ``extra`` the
    bytes after them. A size line that breaks the grammar (or ends in a bare LF) raises at once."""

    def __init__(self) -> None:
        self._held = b""  # bytes of a size line or a CRLF not yet whole
        self._left = -1  # payload bytes left in this chunk; -1: a size line is next, -2: the CRLF after a payload
        self._trailers: _HeadLines | None = None  # after the last chunk
        self.done = False
        self.extra = b""

    def feed(self, data: bytes) -> list[bytes]:
        buf = self._held + data if self._held else data
        pos, end = 0, len(buf)
        out: list[bytes] = []
        while pos < end:
            if self._trailers is not None:  # the last chunk came: trailer lines (or none) and an empty line
                self._trailers.feed(buf[pos:])
                self.done, self.extra, self._held = self._trailers.done, self._trailers.extra, b""
                return out
            left = self._left
            if left > 0:
                stop = min(end, pos + left)
                out.append(buf[pos:stop])
                self._left = left = left - (stop - pos)
                pos = stop
                if left:
                    break
                self._left = left = -2
            if left == -2:
                if end - pos < 2:
                    if buf[pos:end] not in (b"", b"\r"):
                        raise RemoteProtocolError("malformed chunked encoding: no CRLF after a chunk")
                    break
                if buf[pos : pos + 2] != b"\r\n":
                    raise RemoteProtocolError("malformed chunked encoding: no CRLF after a chunk")
                pos += 2
                self._left = -1
                continue
            i = buf.find(b"\n", pos)
            if i < 0:
                if end - pos > MAX_SIZE_LINE or _PARTIAL_CHUNK_SIZE.fullmatch(buf, pos) is None:
                    raise RemoteProtocolError(f"malformed chunk size line: {buf[pos : pos + 40]!r}")
                break
            if i == pos or buf[i - 1] != 0x0D:
                raise RemoteProtocolError(
                    "malformed chunked encoding: a chunk size line ends in a bare LF (LF "
                    "without CR); HTTP/1.1 ends lines with CRLF"
                )
            size = _chunk_size(buf[pos : i - 1])
            pos = i + 1
            if size == 0:
                self._trailers = _HeadLines("chunked trailers", status=False)
            else:
                self._left = size
        self._held = buf[pos:]
        return out

    def at_eof(self) -> None:
        if not self.done:
            raise RemoteProtocolError(
                "peer closed connection without sending complete message body: incomplete chunked read"
            )


class Response:
    """A response's status and headers (names lower-case); ``aiter_raw`` yields its body as it arrives, once:
    one item per piece the connection received, so ``arrival_ns`` after an item is when that item reached the
    host."""

    def __init__(self, conn: Connection, version: bytes, status_code: int, headers: dict[str, str]) -> None:
        self.status_code = status_code
        self.headers = headers
        self._conn = conn
        self._arrival = 0
        self.complete = False  # the body was read to its end
        self._chunked = "transfer-encoding" in headers  # checked: chunked is the only one (_HeadLines)
        length = headers.get("content-length")
        self._length = None if self._chunked or length is None else _length(length)
        if status_code in (204, 304):  # no body, whatever the headers say (RFC 9112 6.3)
            self._chunked, self._length = False, 0
        to_close = self._length is None and not self._chunked  # the body ends when the connection does
        self.keep_alive = version == b"HTTP/1.1" and "close" not in headers.get("connection", "").lower()
        self.keep_alive = self.keep_alive and not to_close

    def arrival_ns(self) -> int:
        """When the bytes ``aiter_raw`` last yielded reached the host (perf counter, ns): the kernel's stamp of
        the read that brought them if it is one of this request's (not before it was sent), else the perf counter
        when they were read."""
        return self._timed(self._arrival)

    def _timed(self, stamp: int) -> int:
        """``stamp`` if it is one of this request's (not before it was sent), else the perf counter now."""
        return stamp if stamp >= self._conn.sent_ns else time.perf_counter_ns()

    def _framing(self) -> _Sized | _ToClose | _Dechunker:
        if self._chunked:
            return _Dechunker()
        return _ToClose() if self._length is None else _Sized(self._length)

    def _ended(self, body: _Sized | _ToClose | _Dechunker) -> None:
        if body.extra:  # bytes after the response: the connection's state is unknown
            self.keep_alive = False
        self.complete = True

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body's payload bytes, one item per piece the connection received (``arrival_ns`` after an item is
        when it reached the host)."""
        body = self._framing()
        while not body.done:
            data, self._arrival = await self._conn.take()
            if not data:
                body.at_eof()
            else:
                out = body.feed(data)
                if out:
                    yield out[0] if len(out) == 1 else b"".join(out)
        self._ended(body)

    async def stream(self, sink: Callable[[bytes, int], bool]) -> None:
        """Hand the body's payload to ``sink(payload, arrival_ns)`` piece by piece, each as soon as the connection
        receives it: inside the connection's receive callback, so no task wakes per piece (the cheap path of a
        token stream). Returns once the body ended, or ``sink`` returned True (stop: the connection is then not
        reused); raises what the framing or ``sink`` raised, and ReadError if the connection broke."""
        body, inbox = self._framing(), self._conn.inbox
        if body.done:  # an empty body (Content-Length: 0, 204, 304): no piece will come to end it
            self._ended(body)
            return
        finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def take(data: bytes, stamp: int) -> None:
            if finished.done():
                return
            try:
                if not data:
                    if inbox.error is not None:
                        raise _read_error(inbox.error) from inbox.error
                    body.at_eof()
                else:
                    out = body.feed(data)
                    if out and sink(out[0] if len(out) == 1 else b"".join(out), self._timed(stamp)):
                        finished.set_result(None)
                        return
                if body.done:
                    self._ended(body)
                    finished.set_result(None)
            except BaseException as exc:  # to the reader, not into the transport's callback
                finished.set_exception(exc)

        inbox.hand_to(take)
        try:
            await finished
        finally:
            inbox.push = None


def _read_error(exc: BaseException) -> ReadError:
    """A connection broken mid-response (reset, ...), named as httpx names it."""
    return ReadError(str(exc) or type(exc).__name__)


def _length(value: str) -> int:
    if _DIGITS.fullmatch(value.encode("latin-1")) is None:
        raise RemoteProtocolError(f"malformed Content-Length: {value[:40]!r}")
    return int(value)


def _chunk_size(line: bytes) -> int:
    match = _CHUNK_SIZE.fullmatch(line)
    if match is None:
        raise RemoteProtocolError(f"malformed chunk size line: {line[:40]!r}")
    return int(match[1], 16)


class Connection:
    """One keep-alive connection to ``origin``, opened on demand, carrying one request at a time.

    ``headers`` are sent with every request (Host, Content-Type and Content-Length are added here).
    """

    def __init__(
        self, origin: Origin, headers: dict[str, str], ssl_context: ssl.SSLContext | None, connect_timeout_s: float
    ) -> None:
        self.origin = origin
        self._ssl = ssl_context if origin.tls else None
        if origin.tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        self._connect_timeout_s = connect_timeout_s
        lines = [
            f"Host: {origin.host_header}",
            "Accept: */*",
            "Connection: keep-alive",
            "User-Agent: tcobench",
            "Content-Type: application/json",
            *(f"{k}: {v}" for k, v in headers.items()),
        ]
        self._head = ("\r\n".join(lines) + "\r\nContent-Length: ").encode("latin-1")
        self._inbox: _Inbox | None = None
        self.sent_ns = 0  # perf counter just before the last request's bytes were written; 0 if they were not

    @property
    def is_open(self) -> bool:
        """A connection is open (it may still have been closed by the server while idle: ``peer_closed``)."""
        return self._inbox is not None

    @property
    def peer_closed(self) -> bool:
        """The open connection's peer closed it or it was lost (visible once the event reached this loop)."""
        inbox = self._inbox
        return inbox is not None and (inbox.closed or inbox.transport is None or inbox.transport.is_closing())

    @property
    def inbox(self) -> _Inbox:
        assert self._inbox is not None
        return self._inbox

    async def take(self) -> tuple[bytes, int]:
        """The next piece of the response and when it reached the host; ``b""`` once the peer closed."""
        assert self._inbox is not None
        try:
            return await self._inbox.take()
        except OSError as exc:  # reset mid-response
            raise _read_error(exc) from exc

    async def _open(self) -> _Inbox:
        host, port = self.origin.host, self.origin.port
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                sock = await _connected(host, port)
                try:
                    _, inbox = await loop.create_connection(
                        lambda: _Inbox(sock), sock=sock, ssl=self._ssl, server_hostname=host if self._ssl else None
                    )
                except BaseException:
                    sock.close()
                    raise
        except TimeoutError as exc:
            raise ConnectTimeout(f"no connection to {host}:{port} within {self._connect_timeout_s:g} s") from exc
        except OSError as exc:  # refused, unreachable, name not resolved, TLS handshake or certificate
            raise ConnectError(str(exc) or type(exc).__name__) from exc
        self._inbox = inbox
        return inbox

    def close(self) -> None:
        if self._inbox is not None and self._inbox.transport is not None:
            self._inbox.transport.close()
        self._inbox = None

    async def aclose(self) -> None:
        inbox = self._inbox
        self.close()
        if inbox is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await inbox.lost

    @asynccontextmanager
    async def post(self, target: bytes, body: bytes) -> AsyncIterator[Response]:
        """Send ``body`` to ``target`` and yield the response once its head is in; the connection is kept for the
        next request only if the response was read to its end and may be kept."""
        response: Response | None = None
        try:
            response = await self._send(target, body)
            yield response
        finally:
            if response is None or not (response.complete and response.keep_alive):
                self.close()

    async def _send(self, target: bytes, body: bytes) -> Response:
        self.sent_ns = 0
        if self.peer_closed:
            self.close()  # the server closed it while it was idle
        inbox = self._inbox or await self._open()
        data = b"POST %s HTTP/1.1\r\n%s%d\r\n\r\n%s" % (target, self._head, len(body), body)
        transport = inbox.transport
        assert transport is not None
        self.sent_ns = time.perf_counter_ns()
        try:
            transport.write(data)
            await inbox.drained()
        except OSError as exc:
            raise WriteError(str(exc) or type(exc).__name__) from exc
        while True:
            version, status, headers = await self._read_head(inbox)
            if not 100 <= status < 200 or status == 101:
                return Response(self, version, status, headers)

    async def _read_head(self, inbox: _Inbox) -> tuple[bytes, int, dict[str, str]]:
        head = _HeadLines("response head", status=True)
        while not head.done:
            try:
                data, stamp = await inbox.take()
            except OSError as exc:  # reset: whether any byte came first is unknown, and nothing usable did
                raise RemoteProtocolError(
                    f"connection lost before the response: {exc or type(exc).__name__}", True
                ) from exc
            if not data:
                if head.started:
                    raise RemoteProtocolError("peer closed connection in the middle of the response head")
                raise RemoteProtocolError("Server disconnected without sending a response.", True)
            head.feed(data)
        if head.extra:
            inbox.put_back(head.extra, stamp)
        return head.response_head()
