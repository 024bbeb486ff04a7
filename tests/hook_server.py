"""A webhook receiver for tests: a real HTTP server on 127.0.0.1 (ephemeral port) recording each POST."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["SECRET", "Hook"]

SECRET = "T0KEN-b6f1c2e9-do-not-store"  # the part of a webhook URL that must never reach the store


class Hook:
    """A webhook receiver: records each POST's path and JSON body, answers ``status``."""

    def __init__(self, status: int = 200) -> None:
        self.posts: list[tuple[str, Any]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hook.posts.append((self.path, json.loads(body)))
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/{SECRET}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Hook:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
