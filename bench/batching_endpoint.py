"""A simulated batching engine: the zero-cost endpoint (zero_endpoint.py) whose every decode step takes
a + b x active milliseconds, active being the streams in flight on it at that moment.

A continuous-batching engine is roughly this: a step costs a fixed part (weights read once) and a part per
sequence in the batch. At c streams in flight each stream gets one token per a + b*c ms, so the aggregate rate is
c * 1000 / (a + b*c) tokens/s: what the steady-state window (view steady_window) should measure, and what the
whole measured window (ramp-up and tail included) misses. The first token is one step after the request arrives.
Each stream keeps its own schedule (the next step is due one step after the previous one was due, not after it
ran), so timer lateness does not add up.

    .venv/bin/python bench/batching_endpoint.py --port 0 --a-ms 20 --b-ms 2 --tokens 32
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys

from zero_endpoint import EndpointConfig, Server, Wire, ZeroProtocol, loop_factory

__all__ = ["BatchingProtocol", "BatchingServer", "main", "serve"]


class BatchingServer(Server):
    """The zero endpoint's shared state plus the step cost and the streams in flight."""

    def __init__(self, config: EndpointConfig, a_s: float, b_s: float) -> None:
        super().__init__(config)
        self.a_s, self.b_s = a_s, b_s
        self.active = 0

    def step_s(self) -> float:
        return self.a_s + self.b_s * self.active


class BatchingProtocol(ZeroProtocol):
    """One connection; a stream's steps take BatchingServer.step_s() each, on the stream's own schedule."""

    server: BatchingServer

    def __init__(self, server: BatchingServer) -> None:
        super().__init__(server)
        self.due = 0.0

    def _stream(self, wire: Wire, raw: bytes) -> None:
        self.server.active += 1
        self.due = self.loop.time()
        super()._stream(wire, raw)

    def _schedule(self, wire: Wire, tokens: int, tail: bytes, start: float, sent: int) -> None:
        self.due += self.server.step_s()
        when = self.due
        self.handle = self.loop.call_at(when, self._emit, wire, tokens, tail, start, sent, when)

    def _finish(self) -> None:
        self.server.active -= 1
        super()._finish()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.handle is not None:  # a stream cut short is no longer in flight
            self.server.active -= 1
        super().connection_lost(exc)


async def serve(
    config: EndpointConfig, a_s: float, b_s: float, host: str = "127.0.0.1", port: int = 0
) -> asyncio.Server:
    """Start listening; the caller keeps the loop running."""
    state = BatchingServer(config, a_s, b_s)
    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: BatchingProtocol(state), host, port, backlog=4096)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port (printed on start)")
    parser.add_argument("--a-ms", type=float, default=20.0, help="fixed cost of a decode step, ms")
    parser.add_argument("--b-ms", type=float, default=2.0, help="cost per stream in flight of a decode step, ms")
    parser.add_argument("--tokens", type=int, default=16, help="output tokens when the request asks none")
    parser.add_argument("--model", default="zero")
    args = parser.parse_args(argv)
    # itl_s > 0 keeps the zero endpoint's timed path (one frame per step)
    config = EndpointConfig(ttft_s=args.a_ms / 1e3, itl_s=args.a_ms / 1e3, tokens=args.tokens, model=args.model)
    loop = loop_factory("select")()
    server = loop.run_until_complete(serve(config, args.a_ms / 1e3, args.b_ms / 1e3, args.host, args.port))
    port = server.sockets[0].getsockname()[1]
    sys.stdout.write(f"listening on http://{args.host}:{port} pid {os.getpid()}\n")
    sys.stdout.flush()
    with contextlib.suppress(KeyboardInterrupt):
        loop.run_forever()


if __name__ == "__main__":
    main()
