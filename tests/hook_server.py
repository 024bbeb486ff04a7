"""A webhook receiver for tests: the mock server (bench/mock_engine.py, ``webhook_status``) on 127.0.0.1
(ephemeral port), recording each POST."""

from __future__ import annotations

from typing import Any

from tests.mock_server import Options, Running, start

__all__ = ["SECRET", "Hook"]

SECRET = "T0KEN-b6f1c2e9-do-not-store"  # the part of a webhook URL that must never reach the store


class Hook:
    """A webhook receiver: records each POST's path and JSON body, answers ``status``."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.url = ""
        self._running: Running | None = None

    @property
    def posts(self) -> list[tuple[str, Any]]:
        assert self._running is not None
        return [(r.path, r.body) for r in self._running.requests if r.method == "POST"]

    def __enter__(self) -> Hook:
        self._running = start(Options(webhook_status=self.status, record=True))
        self.url = f"{self._running.url}/hooks/{SECRET}"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._running is not None
        self._running.stop()
