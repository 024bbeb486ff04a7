"""http1: a lean HTTP/1.1 client on raw asyncio streams, for the load generator's streaming requests.

httpx costs about 0.5 ms of CPU per request and more per chunk (httpcore's pool, h11, anyio; docs/performance.md,
issue 15): that is the client's ceiling. This client does only what a streamed POST to one origin needs:

- one ``Connection`` per request slot, kept alive between requests (HTTP/1.1), opened on demand, TLS for
  ``https`` URLs with the caller's SSL context, never through a proxy;
- the request head is built once per connection but for the target and ``Content-Length``; the request goes out
  in one write, and ``Connection.sent_ns`` is the perf counter read just before it;
- the body is framed by chunked transfer-encoding, ``Content-Length`` or the connection's close, and is handed on
  as it arrives (a chunk's payload is not waited for whole);
- each read notes when the kernel received the last of its bytes (``SO_TIMESTAMPNS`` on Linux, converted to the
  perf counter): ``Response.arrival_ns`` is that instant, so a chunk is timed when it reached the host, not when
  a busy event loop got round to it (elsewhere, or if the kernel gives no stamp, it is the perf counter now);
- a connection is reused only when its last response was read to its end, HTTP/1.1 without ``Connection:
  close``; one the server closed while idle is replaced before sending when that is already visible, and a
  request that meets a closed connection before any response byte raises ``RemoteProtocolError`` with
  ``nothing_received`` (the caller resends it once, as ``tasks.measure`` does).

Errors carry httpx's class names (``ConnectError``, ``ConnectTimeout``, ``RemoteProtocolError``, ``ReadError``,
``WriteError``): request rows name them, as they did with httpx. Timeouts other than connecting are the caller's
(``asyncio.timeout`` around the whole request).
"""

from __future__ import annotations

import asyncio
import contextlib
import platform
import socket
import ssl
import struct
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
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

READ_BYTES = 256 * 1024  # one read from the socket's buffer
MAX_HEAD_BYTES = 64 * 1024  # a response's status line and headers (and a chunked body's trailers)
MAX_SIZE_LINE = 1024  # a chunk-size line (with extensions)
# Linux's SO_TIMESTAMPNS (35 in asm-generic/socket.h, which x86-64 and arm64 use; Python's socket module does not
# name it): a struct timespec of CLOCK_REALTIME, two longs, comes with every read. Other platforms: no stamps.
SO_TIMESTAMPNS = 35
_STAMPED = sys.platform == "linux" and platform.machine() in ("x86_64", "aarch64") and struct.calcsize("l") == 8
_TIMESPEC = struct.Struct("qq")
_ANCILLARY = socket.CMSG_SPACE(_TIMESPEC.size) if _STAMPED else 0


class _StampedSocket(socket.socket):
    """A TCP socket whose every read notes ``arrival_ns``: when the kernel received the last of the bytes read
    (its SO_TIMESTAMPNS stamp, CLOCK_REALTIME, moved onto the perf counter at that read); 0 until one came.
    asyncio's transport reads through ``recv`` (and ``recv_into`` under TLS)."""

    arrival_ns = 0

    def _note(self, ancillary: list[tuple[int, int, bytes]]) -> None:
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


class Response:
    """A response's status and headers (names lower-case); ``aiter_raw`` yields its body as it arrives, once."""

    def __init__(self, conn: Connection, version: bytes, status_code: int, headers: dict[str, str]) -> None:
        self.status_code = status_code
        self.headers = headers
        self._conn = conn
        self.complete = False  # the body was read to its end
        encoding = headers.get("transfer-encoding", "").lower()
        self._chunked = "chunked" in encoding
        length = headers.get("content-length")
        self._length = None if self._chunked or length is None else _length(length)
        to_close = self._length is None and not self._chunked  # the body ends when the connection does
        self.keep_alive = version == b"HTTP/1.1" and "close" not in headers.get("connection", "").lower()
        self.keep_alive = self.keep_alive and not to_close

    def arrival_ns(self) -> int:
        """When the last bytes ``aiter_raw`` yielded reached the host (perf counter, ns): the kernel's stamp of the
        read that brought them, or now when there is none."""
        return self._conn.arrival_ns()

    def aiter_raw(self) -> AsyncIterator[bytes]:
        if self._chunked:
            return self._chunked_body()
        if self._length is not None:
            return self._sized_body(self._length)
        return self._body_to_close()

    async def _sized_body(self, length: int) -> AsyncIterator[bytes]:
        read, left = self._conn.reader.read, length
        while left > 0:
            data = await _read(read, min(READ_BYTES, left))
            if not data:
                raise RemoteProtocolError(f"peer closed connection without sending complete message body: "
                                          f"received {length - left} bytes, expected {length}")  # fmt: skip
            left -= len(data)
            yield data
        self.complete = True

    async def _body_to_close(self) -> AsyncIterator[bytes]:
        read = self._conn.reader.read
        while data := await _read(read, READ_BYTES):
            yield data
        self.complete = True

    async def _chunked_body(self) -> AsyncIterator[bytes]:
        """Chunked transfer-encoding: each read's payload bytes, partial chunks included."""
        read = self._conn.reader.read
        buf = bytearray()
        left = -1  # payload bytes left in this chunk; -1: a size line is next, -2: the CRLF after a payload
        trailers = False
        while True:
            pos, out = 0, []
            while True:
                if left > 0:
                    if pos == len(buf):
                        break
                    end = min(len(buf), pos + left)
                    out.append(buf[pos:end])
                    left -= end - pos
                    pos = end
                    if left:
                        break
                    left = -2
                if left == -2:
                    if len(buf) - pos < 2:
                        break
                    if buf[pos : pos + 2] != b"\r\n":
                        raise RemoteProtocolError("malformed chunked encoding: no CRLF after a chunk")
                    pos += 2
                    left = -1
                if trailers:  # the last chunk came: an empty line, or trailer lines and an empty line, end the body
                    if buf[pos : pos + 2] == b"\r\n":
                        end = pos + 2
                    else:
                        found = buf.find(b"\r\n\r\n", pos)
                        end = found + 4 if found >= 0 else -1
                    if end < 0:
                        if len(buf) - pos > MAX_HEAD_BYTES:
                            raise RemoteProtocolError(f"chunked trailers over {MAX_HEAD_BYTES} bytes")
                        break
                    if out:
                        yield b"".join(out)
                    if len(buf) > end:  # bytes after the response: the connection's state is unknown
                        self.keep_alive = False
                    self.complete = True
                    return
                i = buf.find(b"\r\n", pos)
                if i < 0:
                    if len(buf) - pos > MAX_SIZE_LINE:
                        raise RemoteProtocolError("malformed chunked encoding: no chunk size line")
                    break
                size = _chunk_size(bytes(buf[pos:i]))
                pos = i + 2
                if size == 0:
                    trailers = True
                    continue
                left = size
            del buf[:pos]
            if out:
                yield b"".join(out)
            data = await _read(read, READ_BYTES)
            if not data:
                raise RemoteProtocolError("peer closed connection without sending complete message body: "
                                          "incomplete chunked read")  # fmt: skip
            buf += data


async def _read(read: Callable[[int], Awaitable[bytes]], size: int) -> bytes:
    try:
        return await read(size)
    except OSError as exc:  # reset mid-response
        raise ReadError(str(exc) or type(exc).__name__) from exc


def _length(value: str) -> int:
    try:
        length = int(value)
    except ValueError:
        length = -1
    if length < 0:
        raise RemoteProtocolError(f"malformed Content-Length: {value[:40]!r}")
    return length


def _chunk_size(line: bytes) -> int:
    try:
        size = int(line.split(b";", 1)[0], 16)
    except ValueError:
        size = -1
    if size < 0:
        raise RemoteProtocolError(f"malformed chunk size line: {line[:40]!r}")
    return size


class Connection:
    """One keep-alive connection to ``origin``, opened on demand, carrying one request at a time.

    ``headers`` are sent with every request (Host, Content-Type and Content-Length are added here).
    """

    def __init__(self, origin: Origin, headers: dict[str, str], ssl_context: ssl.SSLContext | None,
                 connect_timeout_s: float) -> None:  # fmt: skip
        self.origin = origin
        self._ssl = ssl_context if origin.tls else None
        if origin.tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        self._connect_timeout_s = connect_timeout_s
        lines = [f"Host: {origin.host_header}", "Accept: */*", "Connection: keep-alive", "User-Agent: tcobench",
                 "Content-Type: application/json", *(f"{k}: {v}" for k, v in headers.items())]  # fmt: skip
        self._head = ("\r\n".join(lines) + "\r\nContent-Length: ").encode("latin-1")
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._sock: socket.socket | None = None
        self.sent_ns = 0  # perf counter just before the last request's bytes were written; 0 if they were not

    @property
    def reader(self) -> asyncio.StreamReader:
        assert self._reader is not None
        return self._reader

    async def _open(self) -> asyncio.StreamWriter:
        host, port = self.origin.host, self.origin.port
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                sock = await _connected(host, port)
                try:
                    self._reader, self._writer = await asyncio.open_connection(
                        sock=sock, ssl=self._ssl, server_hostname=host if self._ssl else None, limit=MAX_HEAD_BYTES
                    )
                except BaseException:
                    sock.close()
                    raise
                self._sock = sock
        except TimeoutError as exc:
            raise ConnectTimeout(f"no connection to {host}:{port} within {self._connect_timeout_s:g} s") from exc
        except OSError as exc:  # refused, unreachable, name not resolved, TLS handshake or certificate
            raise ConnectError(str(exc) or type(exc).__name__) from exc
        return self._writer

    def arrival_ns(self) -> int:
        """The kernel's receive stamp of the connection's last read (perf counter, ns), if it is one of this
        request's (not before it was sent) and not in the future; otherwise the perf counter now."""
        now = time.perf_counter_ns()
        stamp = getattr(self._sock, "arrival_ns", 0)
        return stamp if self.sent_ns and self.sent_ns <= stamp <= now else now

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
        self._sock = None

    async def aclose(self) -> None:
        writer = self._writer
        self.close()
        if writer is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await writer.wait_closed()

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
        writer = self._writer
        if writer is not None and (self.reader.at_eof() or writer.is_closing()):
            self.close()  # the server closed it while it was idle
            writer = None
        if writer is None:
            writer = await self._open()
        data = b"POST %s HTTP/1.1\r\n%s%d\r\n\r\n%s" % (target, self._head, len(body), body)
        self.sent_ns = time.perf_counter_ns()
        try:
            writer.write(data)
            await writer.drain()
        except OSError as exc:
            raise WriteError(str(exc) or type(exc).__name__) from exc
        while True:
            version, status, headers = await self._read_head()
            if not 100 <= status < 200 or status == 101:
                return Response(self, version, status, headers)

    async def _read_head(self) -> tuple[bytes, int, dict[str, str]]:
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise RemoteProtocolError("peer closed connection in the middle of the response head") from exc
            raise RemoteProtocolError("Server disconnected without sending a response.", True) from exc
        except asyncio.LimitOverrunError as exc:
            raise RemoteProtocolError(f"response head over {MAX_HEAD_BYTES} bytes") from exc
        except OSError as exc:  # reset: whether any byte came first is unknown, and nothing usable did
            raise RemoteProtocolError(f"connection lost before the response: {exc or type(exc).__name__}",
                                      True) from exc  # fmt: skip
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise RemoteProtocolError(f"malformed status line: {lines[0][:80]!r}")
        headers = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if colon:
                headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
        return parts[0], int(parts[1]), headers
