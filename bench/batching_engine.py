"""A simulated batching engine whose frontier is known in closed form (issue 30): for tests and benches.

Its inter-token gap grows with the streams in flight: ITL = a + b x active (ms). A closed loop of c streams then
gives interactivity x = 1000 / (a + b c) tok/s per user and throughput c x = (1000 - a x) / b tok/s (per GPU:
divided by the GPUs). The frontier is a straight line in (x, throughput), which a monotone cubic through points
on it reproduces exactly: compare's interpolation error on it is rounding, and what remains is the noise put in.

Design notes: docs/architecture.md#bench-batching-engine.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tcobench.schemas.units import usd_per_m
from tcobench.tasks.analysis.compare.frontier import RunPoint

__all__ = ["BatchingEngine", "main", "sweep"]

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
