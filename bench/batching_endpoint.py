"""A simulated batching engine: the mock server (mock_engine.py) whose every decode step takes
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

from mock_engine import Options, run_forever

__all__ = ["main", "options"]


def options(a_s: float, b_s: float, tokens: int = 16, model: str = "zero") -> Options:
    """The mock server's options of a batching engine: TTFT and ITL are one step, a + b x streams in flight."""
    return Options(ttft_s=a_s, itl_s=a_s, tokens=tokens, model=model, itl_per_active_s=b_s)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port (printed on start)")
    parser.add_argument("--a-ms", type=float, default=20.0, help="fixed cost of a decode step, ms")
    parser.add_argument("--b-ms", type=float, default=2.0, help="cost per stream in flight of a decode step, ms")
    parser.add_argument("--tokens", type=int, default=16, help="output tokens when the request asks none")
    parser.add_argument("--model", default="zero")
    args = parser.parse_args(argv)
    run_forever(options(args.a_ms / 1e3, args.b_ms / 1e3, args.tokens, args.model), args.host, args.port)


if __name__ == "__main__":
    main()
