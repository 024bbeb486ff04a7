"""The engine tokenizer probe is bounded in total time: a /tokenize that streams forever cannot hang a run
(httpx's timeout is per read, and such a server never stops sending)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tcobench.tasks.workload.tokenizer import engine_tokenizer


class _Endless(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        try:
            self.wfile.write(b'{"tokens": [')
            while True:
                self.wfile.write(b"1, " * 256)
                self.wfile.flush()
                time.sleep(0.01)
        except (BrokenPipeError, ConnectionResetError):
            return

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def endless() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_tokenize_answer_that_never_ends_is_given_up_on(endless: str) -> None:
    t0 = time.monotonic()
    assert engine_tokenizer(endless, "m", timeout_s=1.0) is None  # both probe forms gave up
    assert time.monotonic() - t0 < 30  # two probes of 1 s each, not forever
