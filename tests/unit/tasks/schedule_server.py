"""A streaming OpenAI completions server (SSE over HTTP/1.1 keep-alive) that sends on a known schedule and logs
when it really did, for tests of tasks/load/measure.py. Run as its own process, so that no Python lock is shared with
the client under test: ``python schedule_server.py --offsets-ms 20,30,60,70 [--drop-nth 2]``.

Each request is answered with one content chunk (``" tok"``) at each offset after the request was read, then a
final chunk with ``finish_reason`` and ``usage`` and ``[DONE]``. ``--drop-nth N`` closes a connection, without a
byte of response, when the N-th request arrives on it (after ``--drop-after-ms``): a keep-alive connection the
server had already given up (llama.cpp's HTTP server closes connections after a few requests). ``--cut-after N``
closes a response after N content chunks, mid-stream. Times are CLOCK_MONOTONIC nanoseconds
(``time.perf_counter_ns``, the clock measure.py reads, the same in every process on Linux).

It prints its port on the first line of stdout; ``GET /log`` returns the events as JSON: per request the
connection number, its index on the connection, when it was read and the time just after each chunk's write, or
that it was dropped.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from typing import Any

_lock = threading.Lock()
_log: list[dict[str, Any]] = []


def _frame(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _event(data: dict[str, Any]) -> bytes:
    return _frame(b"data: " + json.dumps(data).encode() + b"\n\n")


def _read_request(conn: socket.socket, pending: bytes) -> tuple[str, bytes] | None:
    """(request line, rest of the buffer) once a whole request (headers and body) is in; None at EOF."""
    while b"\r\n\r\n" not in pending:
        data = conn.recv(65536)
        if not data:
            return None
        pending += data
    head, _, rest = pending.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next((int(v) for k, _, v in (ln.partition(":") for ln in lines[1:]) if k.lower() == "content-length"), 0)
    while len(rest) < length:
        data = conn.recv(65536)
        if not data:
            return None
        rest += data
    return lines[0], rest[length:]


def _sleep_until(deadline_ns: int) -> None:
    """Sleep, then spin the last 0.5 ms: sends land within microseconds of their deadline on an idle machine."""
    while (left := deadline_ns - time.perf_counter_ns()) > 0:
        if left > 500_000:
            time.sleep((left - 300_000) / 1e9)


def _answer(conn: socket.socket, offsets_ns: list[int], entry: dict[str, Any], cut_after: int | None) -> None:
    read_ns = entry["read_ns"]
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    writes: list[int] = []
    entry["writes_ns"] = writes
    for offset in offsets_ns:
        if len(writes) == cut_after:
            entry["cut"] = True
            return
        _sleep_until(read_ns + offset)
        conn.sendall(_event({"choices": [{"index": 0, "text": " tok", "finish_reason": None}]}))
        writes.append(time.perf_counter_ns())
    n = len(offsets_ns)
    usage = {"prompt_tokens": 3, "completion_tokens": n, "total_tokens": 3 + n}
    conn.sendall(_event({"choices": [{"index": 0, "text": "", "finish_reason": "length"}], "usage": usage}))
    conn.sendall(_frame(b"data: [DONE]\n\n") + b"0\r\n\r\n")


def _serve(conn: socket.socket, number: int, offsets_ns: list[int], args: argparse.Namespace) -> None:
    pending, index = b"", 0
    with conn:
        while (request := _read_request(conn, pending)) is not None:
            line, pending = request
            index += 1
            if line.startswith("GET /log"):
                with _lock:
                    body = json.dumps(_log).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                continue
            entry = {"connection": number, "index": index, "read_ns": time.perf_counter_ns()}
            with _lock:
                _log.append(entry)
            if index == args.drop_nth:
                time.sleep(args.drop_after_ms / 1e3)
                entry["dropped"] = True
                return
            _answer(conn, offsets_ns, entry, args.cut_after)
            if entry.get("cut"):
                return


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--offsets-ms", required=True, help="comma-separated send offsets after the request, ms")
    parser.add_argument("--drop-nth", type=int, default=None, help="close, unanswered, a connection's N-th request")
    parser.add_argument("--drop-after-ms", type=float, default=0.0, help="wait this long before that close")
    parser.add_argument("--cut-after", type=int, default=None, help="close a response after this many chunks")
    args = parser.parse_args()
    offsets_ns = [round(float(v) * 1e6) for v in args.offsets_ms.split(",")]
    sys.setswitchinterval(1e-4)  # two connections' threads spinning to their deadlines take turns every 0.1 ms
    server = socket.create_server(("127.0.0.1", 0))
    print(server.getsockname()[1], flush=True)
    number = 0
    while True:
        conn, _ = server.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        number += 1
        threading.Thread(target=_serve, args=(conn, number, offsets_ns, args), daemon=True).start()


if __name__ == "__main__":
    main()
