"""A simulated batching engine whose frontier is known in closed form (issue 30): for tests and benches.

Its inter-token gap grows with the streams in flight: ITL = a + b x active (ms). A closed loop of c streams then
gives interactivity x = 1000 / (a + b c) tok/s per user and throughput c x = (1000 - a x) / b tok/s (per GPU:
divided by the GPUs). The frontier is a straight line in (x, throughput), which a monotone cubic through points
on it reproduces exactly: compare's interpolation error on it is rounding, and what remains is the noise put in.

Design notes: docs/dev/architecture/bench-and-build.md#bench-batching-engine.
"""

from __future__ import annotations

import argparse
import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tcobench.schemas.units import usd_per_m
from tcobench.tasks.analysis.compare.frontier import RunPoint

__all__ = ["BatchingEngine", "SimulatedRequest", "closed_loop", "main", "sweep"]

LEVELS = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True)
class BatchingEngine:
    """ITL = a_ms + b_ms x active streams; priced at ``usd_per_gpu_hour`` per GPU."""

    a_ms: float
    b_ms: float
    usd_per_gpu_hour: float
    gpus: int = 1

    @property
    def usd_per_gpu_s(self) -> float:
        return self.usd_per_gpu_hour / 3600

    def itl_ms(self, streams: float) -> float:
        return self.a_ms + self.b_ms * streams

    def interactivity(self, streams: float) -> float:
        """tok/s per user of a closed loop of ``streams``."""
        return 1000.0 / self.itl_ms(streams)

    def tok_s_per_gpu_at(self, x: float) -> float:
        """The closed-form frontier: throughput per GPU at interactivity x, (1000 - a x) / b / GPUs."""
        return (1000.0 - self.a_ms * x) / self.b_ms / self.gpus

    def tokens_per_usd_at(self, x: float) -> float:
        return self.tok_s_per_gpu_at(x) / self.usd_per_gpu_s

    def usd_per_m_at(self, x: float) -> float:
        return usd_per_m(self.tokens_per_usd_at(x))


def sweep(
    engine: BatchingEngine,
    rng: np.random.Generator,
    levels: Sequence[int] = LEVELS,
    nights: int = 3,
    requests: int = 40,
    tokens: int = 64,
    request_noise: float = 0.0,
    night_noise: float = 0.0,
    name: str = "sim",
) -> list[RunPoint]:
    """One run per level per night, simulated (module docstring); noise 0 gives the closed form exactly."""
    found = []
    for n in range(nights):
        speed = 1.0 + night_noise * rng.standard_normal()
        for c in levels:
            tpot = engine.itl_ms(c) / speed * (1.0 + request_noise * rng.standard_normal(requests))
            counted = np.full(requests, float(tokens))
            e2e_s = counted * tpot / 1000.0
            per_gpu = c * counted.sum() / e2e_s.sum() / engine.gpus
            found.append(
                RunPoint(
                    f"{name}-n{n}-c{c}",
                    f"{name}-n{n}",
                    c,
                    engine.gpus,
                    float(per_gpu),
                    engine.usd_per_gpu_s,
                    tpot,
                    counted,
                    e2e_s,
                )
            )
    return found


@dataclass(frozen=True)
class SimulatedRequest:
    """One request of ``closed_loop``: when it was sent and its tokens' arrivals, in ns from the loop's start."""

    start_ns: int
    token_ns: tuple[int, ...]  # each token's arrival (one token a chunk), the first at start + one step

    @property
    def ttft_ns(self) -> int:
        return self.token_ns[0] - self.start_ns

    @property
    def itl_ns(self) -> list[int]:
        return [b - a for a, b in zip(self.token_ns, self.token_ns[1:], strict=False)]


def closed_loop(
    engine: BatchingEngine, streams: int, requests: int, tokens: int, stagger_ms: float = 0.0
) -> list[SimulatedRequest]:
    """A closed loop of ``streams`` over ``requests`` requests of ``tokens`` tokens each, event by event, as
    bench/batching_endpoint.py serves it: every stream's next token is due one step after its previous one was due,
    the step being a + b x the streams in flight when it is scheduled; a stream whose request ends sends the next
    one at once (its first token one step later) while requests are left. As the last requests end the batch
    empties and the survivors speed up: the tail a steady window must not spread evenly. ``stagger_ms``: stream i
    sends its first request at i x that (a client whose streams start one after another)."""
    events: list[tuple[float, int]] = []  # (due ms, stream)
    active, sent, now = 0, 0, 0.0
    starts: dict[int, float] = {}
    arrivals: dict[int, list[float]] = {}
    current: dict[int, int] = {}  # stream -> request index
    found: dict[int, SimulatedRequest] = {}

    def send(stream: int, at: float) -> None:
        nonlocal active, sent
        current[stream], starts[sent], arrivals[sent] = sent, at, []
        sent += 1
        active += 1
        heapq.heappush(events, (at + engine.itl_ms(active), stream))

    for stream in range(min(streams, requests)):
        heapq.heappush(events, (stream * stagger_ms, -1 - stream))  # a stream's first send (negative: not a token)
    while events:
        now, stream = heapq.heappop(events)
        if stream < 0:
            send(-1 - stream, now)
            continue
        index = current[stream]
        arrivals[index].append(now)
        if len(arrivals[index]) < tokens:
            heapq.heappush(events, (now + engine.itl_ms(active), stream))
            continue
        active -= 1
        found[index] = SimulatedRequest(round(starts[index] * 1e6), tuple(round(t * 1e6) for t in arrivals[index]))
        if sent < requests:
            send(stream, now)
    return [found[i] for i in range(requests)]


def main(argv: Sequence[str] | None = None) -> int:
    from tcobench.tasks.analysis.compare.frontier import level_points

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a-ms", type=float, default=8.0)
    parser.add_argument("--b-ms", type=float, default=0.5)
    parser.add_argument("--usd-per-gpu-hour", type=float, default=3.0)
    parser.add_argument("--noise", type=float, default=0.05)
    args = parser.parse_args(argv)
    engine = BatchingEngine(args.a_ms, args.b_ms, args.usd_per_gpu_hour)
    points = sweep(engine, np.random.default_rng(0), request_noise=args.noise, night_noise=args.noise / 2)
    for lv in level_points(points, 0.5):
        truth = engine.tok_s_per_gpu_at(lv.interactivity)
        print(
            f"c={lv.concurrency:3d}  x={lv.interactivity:7.2f} tok/s/user  {lv.tok_s_per_gpu:8.1f} tok/s/GPU"  # noqa: T201
            f"  (closed form at that x: {truth:8.1f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
