"""tasks/load/http1.py, the load generator's lean HTTP/1.1 client, against small real servers on 127.0.0.1 (asyncio
servers in the test's own loop, scripted per test): body framings, keep-alive reuse, a connection the server
closed, malformed answers, TLS with a self-signed certificate made here. Bytes are written in odd pieces so that
frames straddle reads."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import json
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from tcobench.schemas import Protocol, WorkloadConfig
from tcobench.tasks.load import http1
from tcobench.tasks.load.protocols import adapter_for
from tcobench.tasks.load.stream import Clients, Target, _attempt

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]  # (..., connection number)


async def _request(reader: asyncio.StreamReader) -> tuple[bytes, dict[str, str], bytes] | None:
    """(request line, headers, body) of one request; None at EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    line, *rest = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in rest if h)}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return line.encode(), headers, body


async def _pieces(writer: asyncio.StreamWriter, data: bytes, size: int = 7) -> None:
    """Write ``data`` in ``size``-byte pieces, each flushed on its own."""
    for i in range(0, len(data), size):
        writer.write(data[i : i + size])
        await writer.drain()
        await asyncio.sleep(0)


def _chunked(*payloads: bytes, trailer: bytes = b"") -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in payloads) + b"0\r\n" + trailer + b"\r\n"


async def _serve(handler: Handler, tls: ssl.SSLContext | None = None) -> tuple[asyncio.Server, str, list[int]]:
    """A server running ``handler`` per connection; (server, base URL, connections accepted so far)."""
    accepted: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(len(accepted) + 1)
        try:
            await handler(reader, writer, len(accepted))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    return server, f"{'https' if tls else 'http'}://127.0.0.1:{port}", accepted


def _target_and_clients(url: str) -> tuple[Target, Clients]:
    """An OpenAI target at ``url`` and the lean client's connections for it (as measure makes them)."""
    target = Target(url, Protocol.openai, "m")
    return target, Clients(target, WorkloadConfig.model_validate_json(json.dumps({"prompts": ["a"]})), None)


def _conn(url: str, ssl_context: ssl.SSLContext | None = None) -> http1.Connection:
    return http1.Connection(http1.Origin.of(url), {"Authorization": "Bearer k"}, ssl_context, 2.0)


async def _post(conn: http1.Connection, body: bytes = b"{}") -> tuple[int, dict[str, str], bytes, bool]:
    """(status, headers, body, whether the connection is kept) of one POST /x."""
    async with conn.post(b"/x?y=1", body) as response:
        data = b"".join([piece async for piece in response.aiter_raw()])
    return response.status_code, response.headers, data, conn.is_open


def test_chunked_bodies_stream_and_keep_alive_reuses_the_connection() -> None:
    seen: list[tuple[bytes, dict[str, str], bytes]] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while (request := await _request(reader)) is not None:
            seen.append(request)
            head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n"
            await _pieces(writer, head + _chunked(b"data: 1\n\n", b"data: 22\n\n" * 40, trailer=b"X-T: 1\r\n"))

    async def main() -> None:
        server, url, accepted = await _serve(handler)
        conn = _conn(url)
        try:
            for _ in range(3):
                status, headers, body, kept = await _post(conn, b'{"a":1}')
                assert (status, headers["content-type"], kept) == (200, "text/event-stream", True)
                assert body == b"data: 1\n\n" + b"data: 22\n\n" * 40
                assert conn.sent_ns > 0
            assert accepted == [1]  # one connection for the three requests
        finally:
            await conn.aclose()
            server.close()

    asyncio.run(main())
    line, headers, body = seen[0]
    assert line == b"POST /x?y=1 HTTP/1.1" and body == b'{"a":1}'
    assert headers["host"].startswith("127.0.0.1:") and headers["authorization"] == "Bearer k"
    assert (headers["content-length"], headers["content-type"]) == ("7", "application/json")


def test_content_length_bodies_and_a_body_that_ends_with_the_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while await _request(reader) is not None:
            if n == 1:  # sized: kept alive
                await _pieces(writer, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            else:  # HTTP/1.0, no length: the body is all until the close; never reused
                await _pieces(writer, b"HTTP/1.0 200 OK\r\n\r\nuntil close")
                return

    async def main() -> None:
        server, url, accepted = await _serve(handler)
        conn = _conn(url)
        try:
            assert await _post(conn) == (200, {"content-length": "5"}, b"hello", True)
            assert (await _post(conn))[2:] == (b"hello", True)
            conn.close()
            assert (await _post(conn))[2:] == (b"until close", False)
            assert accepted == [1, 2]
        finally:
            await conn.aclose()
            server.close()

    asyncio.run(main())


def test_an_idle_connection_the_server_closed_is_replaced_and_a_dropped_request_is_resent_once() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        sse = b'data: {"choices":[{"text":"x","finish_reason":"length"}]}\n\ndata: [DONE]\n\n'
        await _request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(sse), sse))
        await writer.drain()
        if n == 2:  # the next request is read, then the connection closed without a byte of response
            await _request(reader)
        # connection 1 is closed once its answer is out, while idle (servers that close idle connections)

    async def main() -> None:
        server, url, accepted = await _serve(handler)
        target, clients = _target_and_clients(url)
        adapter = adapter_for(Protocol.openai)
        try:
            stream, t0, stale = await _attempt(clients, adapter, target, url + "/v1/completions", {}, 5.0)
            assert (stream.error, stream.status, stream.content_ns != [], stale) == (None, 200, True, False)
            idle = clients._idle[0]
            for _ in range(500):  # until the server's close has arrived (a loaded machine is slow)
                if idle.peer_closed:
                    break
                await asyncio.sleep(0.01)
            # the idle connection the server closed is replaced before sending: no error, no resend
            stream, t0_2, stale = await _attempt(clients, adapter, target, url + "/v1/completions", {}, 5.0)
            assert (stream.error, stale, t0_2 > t0) == (None, False, True)
            # the next request on connection 2 is read and dropped: nothing came back, so the caller may resend
            stream, _, stale = await _attempt(clients, adapter, target, url + "/v1/completions", {}, 5.0)
            assert stale and stream.status is None
            assert stream.error == "RemoteProtocolError: Server disconnected without sending a response."
            assert accepted == [1, 2]
        finally:
            await clients.aclose()
            server.close()

    asyncio.run(main())


@pytest.mark.parametrize(
    ("answer", "needle"),
    [
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "incomplete chunked read"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n", "malformed chunk size line"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX", "no CRLF after a chunk"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", "received 3 bytes, expected 9"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "malformed Content-Length"),
        (b"SMTP ready\r\n\r\n", "malformed status line"),
    ],
)
def test_broken_answers_are_protocol_errors(answer: bytes, needle: str) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await _request(reader)
        await _pieces(writer, answer, 3)

    async def main() -> None:
        server, url, _ = await _serve(handler)
        conn = _conn(url)
        try:
            with pytest.raises(http1.RemoteProtocolError, match=needle) as caught:
                await _post(conn)
            assert not caught.value.nothing_received and not conn.is_open  # closed: never reused
        finally:
            await conn.aclose()
            server.close()

    asyncio.run(main())


@pytest.mark.parametrize(
    ("answer", "needle"),
    [
        (b"HTTP/1.1 200 OK\nContent-Type: text/event-stream\n\ndata: [DONE]\n\n", "bare LF (LF without CR)"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\n", "bare LF (LF without CR)"),
        (b"HTTP/1.1 200 OK\r\nContent Type: text/plain\r\n", "malformed response head: header line"),
    ],
)
def test_an_unparseable_head_fails_at_once_while_the_server_holds_the_connection(answer: bytes, needle: str) -> None:
    """The server sends the bytes and keeps the connection open: only the bytes can end the request, which must not
    wait for its timeout (the 10 s bound here only keeps a regression from hanging the suite)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await _request(reader)
        await _pieces(writer, answer, 5)
        await asyncio.sleep(30)

    async def main() -> None:
        server, url, _ = await _serve(handler)
        target, clients = _target_and_clients(url)
        try:
            async with asyncio.timeout(10):
                stream, _, _ = await _attempt(clients, adapter_for(Protocol.openai), target, url + "/v", {}, 60.0)
            assert stream.error is not None and stream.error.startswith("RemoteProtocolError: "), stream.error
            assert needle in stream.error
        finally:
            await clients.aclose()
            server.close()

    asyncio.run(main())


@pytest.mark.parametrize(
    ("answer", "needle"),
    [
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "incomplete chunked read"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n", "malformed chunk size line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 90\r\n\r\ndata: [DONE]\n\n", "received 14 bytes, expected 90"),
    ],
)
def test_a_broken_stream_read_piece_by_piece_fails_the_request_as_pulled_bodies_do(answer: bytes, needle: str) -> None:
    """``_attempt`` reads a 200 stream through ``Response.stream`` (pieces taken in the receive callback): the
    framing errors reach the request as RemoteProtocolError, and the connection is not kept."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await _request(reader)
        await _pieces(writer, answer, 3)

    async def main() -> None:
        server, url, _ = await _serve(handler)
        target, clients = _target_and_clients(url)
        try:
            stream, _, stale = await _attempt(clients, adapter_for(Protocol.openai), target, url + "/v", {}, 5.0)
            assert stream.status == 200 and not stale
            assert stream.error is not None and stream.error.startswith("RemoteProtocolError: ")
            assert needle in stream.error and not clients._idle[0].is_open
        finally:
            await clients.aclose()
            server.close()

    asyncio.run(main())


def test_each_piece_of_a_stream_is_timed_by_its_own_arrival() -> None:
    """Three SSE events 30 ms apart: each content event carries the arrival of the piece that brought it (the
    gaps are the server's, to a few ms), and a piece that holds two events times both by itself."""
    events = [b'data: {"choices":[{"text":"%d"}]}\n\n' % i for i in range(4)]
    tail = b'data: {"choices":[{"text":"","finish_reason":"length"}]}\n\ndata: [DONE]\n\n'

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await _request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for frame in (events[0], events[1], events[2] + events[3] + tail):
            await asyncio.sleep(0.03)
            writer.write(_chunked(frame)[: -len(b"0\r\n\r\n")])
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async def main() -> None:
        server, url, _ = await _serve(handler)
        target, clients = _target_and_clients(url)
        try:
            stream, t0, _ = await _attempt(clients, adapter_for(Protocol.openai), target, url + "/v", {}, 5.0)
        finally:
            await clients.aclose()
            server.close()
        assert stream.error is None and stream.text == ["0", "1", "2", "3"]
        times = stream.content_ns
        assert times[2] == times[3] and times[0] > t0  # one piece, one arrival
        for a, b in zip(times, times[1:3], strict=False):
            assert 20e6 < b - a < 60e6  # the server's 30 ms, not the instant they were parsed

    asyncio.run(main())


def test_an_error_status_with_a_large_body_reads_the_start_and_drops_the_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await _request(reader)
        body = b"x" * 100_000
        writer.write(b"HTTP/1.1 429 Too Many\r\nRetry-After: 2\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()

    async def main() -> None:
        server, url, _ = await _serve(handler)
        target, clients = _target_and_clients(url)
        try:
            stream, _, stale = await _attempt(clients, adapter_for(Protocol.openai), target, url + "/v", {}, 5.0)
            assert (stream.status, stream.retry_after, stale) == (429, "2", False)
            assert stream.error == "HTTP 429: " + "x" * 200
            assert not clients._idle[0].is_open  # the rest of the body was not read: not reused
        finally:
            await clients.aclose()
            server.close()

    asyncio.run(main())


def test_connection_refused_is_a_connect_error() -> None:
    async def main() -> None:
        server, url, _ = await _serve(lambda r, w, n: asyncio.sleep(0))
        server.close()
        await server.wait_closed()
        with pytest.raises(http1.ConnectError):
            await _post(_conn(url))

    asyncio.run(main())


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key: (cert.pem, key.pem)."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_pem, key_pem = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_pem.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_pem, key_pem


def test_https_uses_tls_and_verifies_the_certificate(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while (request := await _request(reader)) is not None:
            body = json.dumps({"got": request[2].decode()}).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()

    async def main() -> None:
        server, url, accepted = await _serve(handler, server_tls)
        trusting = ssl.create_default_context(cafile=str(cert))
        conn = _conn(url, trusting)
        try:
            assert (await _post(conn, b"hi"))[2:] == (b'{"got": "hi"}', True)
            assert (await _post(conn, b"again"))[2] == b'{"got": "again"}'
            assert accepted == [1]
            # measure's own context (httpx's defaults: certifi's roots, verification on) refuses this certificate
            refusing = _conn(url, httpx.create_ssl_context(trust_env=False))
            with pytest.raises(http1.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await _post(refusing)
            await refusing.aclose()
        finally:
            await conn.aclose()
            server.close()

    asyncio.run(main())
