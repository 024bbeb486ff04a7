"""Fake OpenAI-compatible servers on 127.0.0.1 that break the streaming contract on purpose.

A real server (llama.cpp) cannot be made to hang, stream forever, answer 429 with Retry-After or send malformed
SSE on demand, so these faults come from the mock server (bench/mock_engine.py) speaking the documented wire
format (``/v1/models``, ``/v1/completions`` as ``text/event-stream``: ``data: {json}`` lines, ``usage`` in the last
chunk, ``data: [DONE]``), one request per connection (the body ends when the connection closes). Each behaviour
below is a set of the mock server's options; ``stop`` releases the answers it holds back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from tests.mock_server import Fault, Options, Running, start

__all__ = ["BEHAVIOURS", "MODEL", "FakeServer", "fake_server"]

MODEL = "fake-model"

# A good stream: 4 tokens whatever the request asks, usage.prompt_tokens 5.
_GOOD = Options(model=MODEL, tokens=4, fixed_tokens=True, prompt_tokens=lambda body: 5, framing="close", record=True)

BEHAVIOURS: dict[str, Options] = {
    "ok": _GOOD,
    # a good stream of 3 tokens that takes about 1.5 s: time for a signal to arrive mid-run
    "slow_ok": replace(_GOOD, tokens=3, ttft_s=0.5, itl_s=0.5),
    # accepts the request and never answers
    "hang": replace(_GOOD, fault=Fault("hang")),
    # streams content forever (well-formed lines, never a finish)
    "endless": replace(_GOOD, fault=Fault("endless")),
    "http_500": replace(_GOOD, fault=Fault(status=500, body={"error": {"message": "internal boom"}})),
    # 429 with Retry-After: 1 on the first two attempts of each request, then a good stream
    "throttled_then_ok": replace(
        _GOOD, fault=Fault(status=429, body={"error": "slow down"}, retry_after="1", first_attempts=2)
    ),
    "throttled_forever": replace(_GOOD, fault=Fault(status=503, body={"error": "overloaded"}, retry_after="0")),
    "malformed": replace(_GOOD, fault=Fault("malformed")),
    # streams bytes without ever ending a line (8 MiB, then waits)
    "no_newline": replace(_GOOD, fault=Fault("no_newline")),
    # an error body that repeats the Authorization header it was sent (servers do)
    "echo_auth_500": replace(_GOOD, fault=Fault("echo_auth", status=500)),
    # HTTP 500 for the requests whose seed is a multiple of 4 (a quarter of them), good streams otherwise
    "every_fourth_fails": replace(
        _GOOD, fault=Fault(status=500, body={"error": {"message": "internal boom"}}, seed_multiple=4)
    ),
}


@dataclass
class FakeServer:
    """A running fake: its URL, the attempts per seed and the Authorization header of every POST."""

    running: Running

    @property
    def url(self) -> str:
        return self.running.url

    @property
    def attempts(self) -> dict[Any, int]:
        """Attempt number of the request with this key (its seed): 1, 2, ..."""
        return self.running.attempts

    @property
    def seen_auth(self) -> list[str | None]:
        return [r.headers.get("authorization") for r in self.running.requests if r.method == "POST"]

    def stop(self) -> None:
        self.running.stop()


@contextmanager
def fake_server(behaviour: str, token: str | None = None) -> Iterator[FakeServer]:
    """A fake server with this behaviour, stopped afterwards (its hanging answers released)."""
    server = FakeServer(start(replace(BEHAVIOURS[behaviour], bearer=token)))
    try:
        yield server
    finally:
        server.stop()
