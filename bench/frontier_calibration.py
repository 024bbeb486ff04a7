"""Calibration of compare's interval at equal interactivity: how often the 95% CI covers the true ratio.

Two simulated batching engines (bench/batching_engine.py, ITL = a + b x streams, closed-form frontier) are swept
with noise (per night a speed factor, per request a TPOT), in process, ``--reps`` times; each repetition runs
tasks.analysis.compare.compare_frontiers at targets near the low end, the middle and the high end of the overlap of both
ranges, and counts whether each interval covers the closed-form ratio. A calibrated 95% interval covers in
93-97% of at least 200 repetitions (the binomial spread of 200 draws at 95% is about +-1.5 points).

    python bench/frontier_calibration.py --reps 200 --resamples 1000
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
from collections.abc import Sequence

import numpy as np
from batching_engine import BatchingEngine, sweep

from tcobench.tasks.analysis.compare import compare_frontiers
from tcobench.tasks.analysis.quantile import quantile

A = BatchingEngine(a_ms=8.0, b_ms=0.5, usd_per_gpu_hour=3.0)
B = BatchingEngine(a_ms=5.0, b_ms=1.2, usd_per_gpu_hour=2.0)
LEVELS = (1, 2, 4, 8, 16, 32, 64)


def targets() -> tuple[float, ...]:
    """Near the low end, the middle and near the high end of the overlap of both engines' ranges."""
    low = max(A.interactivity(LEVELS[-1]), B.interactivity(LEVELS[-1]))
    high = min(A.interactivity(LEVELS[0]), B.interactivity(LEVELS[0]))
    return tuple(round(low + (high - low) * f, 1) for f in (0.1, 0.5, 0.9))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--nights", type=int, default=4)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--request-noise", type=float, default=0.1)
    parser.add_argument("--night-noise", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    wanted = targets()
    truth = np.array([A.tokens_per_usd_at(t) / B.tokens_per_usd_at(t) for t in wanted])
    covered, below, above, widths = np.zeros(len(wanted)), np.zeros(len(wanted)), np.zeros(len(wanted)), []
    start = time.perf_counter()
    for _ in range(args.reps):
        kw = {
            "nights": args.nights,
            "requests": args.requests,
            "request_noise": args.request_noise,
            "night_noise": args.night_noise,
        }
        a, b = sweep(A, rng, LEVELS, name="a", **kw), sweep(B, rng, LEVELS, name="b", **kw)
        rows = compare_frontiers(
            a, b, "A", "B", wanted, resamples=args.resamples, seed=int(rng.integers(1 << 30))
        ).targets
        lo = np.array([r.ci_low if r.ci_low is not None else np.nan for r in rows])
        hi = np.array([r.ci_high if r.ci_high is not None else np.nan for r in rows])
        covered += (lo <= truth) & (truth <= hi)
        below += truth < lo
        above += truth > hi
        widths.append(hi / lo)
    elapsed = time.perf_counter() - start
    print(
        f"# frontier calibration: {args.reps} repetitions, {args.resamples} resamples, {args.nights} nights x "  # noqa: T201
        f"{len(LEVELS)} levels x {args.requests} requests, noise request {args.request_noise} night "
        f"{args.night_noise}, seed {args.seed}; {elapsed:.0f} s on {platform.node()} "
        f"(load average {', '.join(f'{v:.2f}' for v in os.getloadavg())})"
    )
    print(
        "| target tok/s/user | true ratio | coverage of the 95% CI | truth below CI | truth above CI | "  # noqa: T201
        "median hi/lo |"
    )
    print("|---:|---:|---:|---:|---:|---:|")  # noqa: T201
    ratios = np.array(widths)
    med = [quantile(ratios[:, i][np.isfinite(ratios[:, i])], 0.5) or math.nan for i in range(len(wanted))]
    for i, t in enumerate(wanted):
        print(
            f"| {t:g} | {truth[i]:.3f} | {covered[i] / args.reps:.1%} | {below[i] / args.reps:.1%} | "  # noqa: T201
            f"{above[i] / args.reps:.1%} | {med[i]:.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
