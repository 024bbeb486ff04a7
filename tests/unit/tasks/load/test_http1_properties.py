"""tasks/load/http1.py against h11 (httpx's HTTP/1.1 parser) as the oracle, on generated responses (hypothesis).

Each example is an HTTP/1.1 response built from parts (status line, header lines, a framing: Content-Length,
chunked with extensions and trailers, or to the connection's close; a body), perhaps with one byte replaced,
inserted or deleted anywhere, cut into pieces at random points, with or without the peer's close after it. Both
parsers read the same bytes:

- h11 reads a whole response: http1 gives the same status and body, through both of its readers (``aiter_raw``
  and ``stream``), unless a line of the head or of the chunked framing ends in a bare LF (h11 accepts that; http1
  refuses it at once, naming it);
- h11 rejects: http1 raises RemoteProtocolError, without waiting for more bytes or for the peer's close (it is
  given no more: the example ends with the bytes it has), holding no more than its bounds;
- h11 waits for more bytes: so does http1 for a prefix of an unchanged response.

http1 is fed through its connection's real protocol object (``_Inbox``) with no socket: the subject is parsing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import h11
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tcobench.tasks.load import http1

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")

EXAMPLES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOKEN = b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
VALUE = bytes(b for b in range(1, 256) if b not in b"\n\r\x0b\x0c")  # what a header value may hold (h11)
INTERESTING = b"\r\n\t \x00:;0aF\x7f\x80HT/1."  # bytes a mutation likes to write
_SPINS = 50  # event-loop turns that let http1 read everything it was given (it never needs more than a few)

Outcome = tuple[str, int, bytes]  # ("ok", status, body) | ("error", 0, b"") | ("waiting", 0, b"")
WAITING: Outcome = ("waiting", 0, b"")


@dataclass(frozen=True)
class Example:
    data: bytes
    cuts: list[int]
    eof: bool
    mutated: bool
    status: int
    body: bytes


def _h11(data: bytes, eof: bool) -> Outcome:
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="POST", target="/", headers=[("Host", "x"), ("Content-Length", "0")]))
    conn.send(h11.EndOfMessage())
    if data:  # h11 reads b"" as the peer's close
        conn.receive_data(data)
    if eof:
        conn.receive_data(b"")
    status, body = 0, b""
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                return WAITING
            if isinstance(event, h11.InformationalResponse):
                assume(event.status_code != 101)  # a protocol switch: not a response http1 reads
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return ("ok", status, body)
            elif isinstance(event, h11.ConnectionClosed):
                return ("error", 0, b"")
    except h11.RemoteProtocolError:
        return ("error", 0, b"")


async def _http1(data: bytes, cuts: list[int], eof: bool, streamed: bool) -> tuple[Outcome, str]:
    """What http1 makes of ``data`` delivered in pieces at ``cuts``; (outcome, the error's message)."""
    conn = http1.Connection(http1.Origin("127.0.0.1", 80, False), {}, None, 1.0)
    inbox = http1._Inbox(None)  # type: ignore[arg-type]  # no socket: no kernel stamps, perf counter instead
    conn._inbox = inbox
    conn.sent_ns = 1

    async def read() -> Outcome:
        while True:
            version, status, headers = await conn._read_head(inbox)
            if not 100 <= status < 200:
                break
        response = http1.Response(conn, version, status, headers)
        body: list[bytes] = []
        if streamed:

            def keep(piece: bytes, _: int) -> bool:
                body.append(piece)
                return False

            await response.stream(keep)
        else:
            body += [piece async for piece in response.aiter_raw()]
        return ("ok", status, b"".join(body))

    task = asyncio.ensure_future(read())
    for start, stop in zip([0, *cuts], [*cuts, len(data)], strict=True):
        if stop > start:
            inbox.data_received(data[start:stop])
        await asyncio.sleep(0)
    if eof:
        inbox.eof_received()
    for _ in range(_SPINS):
        if task.done():
            break
        await asyncio.sleep(0)
    if not task.done():
        task.cancel()
        assert inbox.size <= http1.MAX_BUFFERED_BYTES + len(data)
        return WAITING, ""
    try:
        return task.result(), ""
    except http1.RemoteProtocolError as exc:
        return ("error", 0, b""), str(exc)


def _bare_lf(data: bytes) -> bool:
    return any(i == 0 or data[i - 1] != 0x0D for i in range(len(data)) if data[i] == 0x0A)


@st.composite
def responses(draw: st.DrawFn) -> Example:
    version = draw(st.sampled_from([b"1.1", b"1.0"]))
    status = draw(st.integers(200, 599))
    reason = draw(st.binary(max_size=12).map(lambda b: bytes(c for c in b if c in VALUE)))
    names = st.binary(min_size=1, max_size=10).map(lambda b: bytes(TOKEN[c % len(TOKEN)] for c in b))
    values = st.binary(max_size=16).map(lambda b: bytes(c for c in b if c in VALUE))
    fields = [
        (n, v)
        for n, v in draw(st.lists(st.tuples(names, values), max_size=4))
        if n.lower() not in (b"content-length", b"transfer-encoding")
    ]
    lines = [b"HTTP/%s %d%s" % (version, status, b" " + reason if draw(st.booleans()) else b"")]
    lines += [n + b":" + draw(st.sampled_from([b"", b" ", b"\t "])) + v for n, v in fields]
    folded = draw(st.booleans())
    if fields and folded:
        lines.append(b" \t" + draw(values))  # an obsolete folded line
    body = draw(st.binary(max_size=64))
    framing = draw(st.sampled_from(["length", "chunked", "close"]))
    payload = body
    if framing == "length":
        length = b"%d" % len(body)
        lines.append(draw(st.sampled_from([b"Content-Length: ", b"content-length:"])) + length)
        if draw(st.booleans()):
            lines.append(b"Content-Length: " + length + b", " + length)
    elif framing == "chunked":
        lines.append(draw(st.sampled_from([b"Transfer-Encoding: chunked", b"transfer-encoding: Chunked"])))
        cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(body) - 1)), max_size=3)))) if body else []
        payload = b""
        for start, stop in zip([0, *cuts], [*cuts, len(body)], strict=True):
            if stop > start:
                size = (b"%x" % (stop - start)) if draw(st.booleans()) else (b"%X" % (stop - start))
                ext = draw(st.sampled_from([b"", b";a=b", b"; x", b";"]))
                payload += size + ext + draw(st.sampled_from([b"", b" "])) + b"\r\n" + body[start:stop] + b"\r\n"
        trailers = b"".join(n + b": " + v + b"\r\n" for n, v in draw(st.lists(st.tuples(names, values), max_size=2)))
        payload += b"0\r\n" + trailers + b"\r\n"
    data = b"\r\n".join(lines) + b"\r\n\r\n" + payload
    mutated = draw(st.booleans())
    if mutated:
        at = draw(st.integers(0, len(data) - 1))
        byte = draw(st.sampled_from(list(INTERESTING)) | st.integers(0, 255))
        kind = draw(st.sampled_from(["replace", "insert", "delete"]))
        tail = data[at + 1 :] if kind != "insert" else data[at:]
        data = data[:at] + (bytes([byte]) if kind != "delete" else b"") + tail
    if draw(st.booleans()):  # a response cut short
        data = data[: draw(st.integers(0, len(data)))]
    cuts = sorted(set(draw(st.lists(st.integers(1, len(data) - 1), max_size=6)))) if len(data) > 1 else []
    eof = framing == "close" or draw(st.booleans())
    return Example(data, cuts, eof, mutated, status, body)


def _check(example: Example, streamed: bool) -> None:
    expected = _h11(example.data, example.eof)
    got, message = asyncio.run(_http1(example.data, example.cuts, example.eof, streamed))
    if expected[0] == "ok" and got[0] == "error" and "bare LF" in message:
        assert _bare_lf(example.data)  # h11 accepts a line ended by a bare LF in a head or trailers: http1 refuses
    elif expected[0] in ("ok", "error"):
        assert got == expected, (got, message)
    elif not example.mutated:  # h11 waits for more of a valid response: so does http1
        assert got == WAITING, (got, message)
    else:  # h11 waits for more of a damaged response: http1 waits too, or already saw the damage
        assert got[0] in ("waiting", "error"), got


@EXAMPLES
@given(responses())
def test_pulled_bodies_read_as_h11_reads_them(example: Example) -> None:
    _check(example, streamed=False)


@EXAMPLES
@given(responses())
def test_streamed_bodies_read_as_h11_reads_them(example: Example) -> None:
    _check(example, streamed=True)


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\nok",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\nok",
    ],
)
def test_a_bare_lf_head_fails_at_once_saying_so(head: bytes) -> None:
    """The peer keeps the connection open: nothing but the bytes themselves can end the read."""
    got, message = asyncio.run(_http1(head, [], eof=False, streamed=False))
    assert got[0] == "error" and "bare LF (LF without CR)" in message, (got, message)


@pytest.mark.parametrize(
    "start",
    [
        b"\x16\x03\x01\x02\x00",
        b"SSH-2.0-OpenSSH_9.6",
        b"HTTP/1.1 2x",
        b"HTTP/1.1 200 OK\r\nX Y: z",
        b"HTTP/1.1 200 OK\r\nA: \x00",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x10",
    ],
)
def test_a_head_that_cannot_become_valid_fails_before_its_line_ends(start: bytes) -> None:
    got, message = asyncio.run(_http1(start, [], eof=False, streamed=False))
    assert got[0] == "error" and message.startswith("malformed"), (got, message)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"HTTP/1.1 200 OK\r\n" + b"X: " + b"a" * (http1.MAX_HEAD_BYTES + 10), "response head over"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;" + b"e" * 2 * http1.MAX_SIZE_LINE,
            "malformed chunk size line",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + b"T: " + b"t" * (http1.MAX_HEAD_BYTES + 9),
            "chunked trailers over",
        ),
    ],
)
def test_endless_lines_stop_at_their_bound(data: bytes, needle: str) -> None:
    got, message = asyncio.run(_http1(data, list(range(4096, len(data), 4096)), eof=False, streamed=True))
    assert got[0] == "error" and needle in message, (got, message)
