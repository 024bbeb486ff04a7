"""`tcobench plan` over the year-scale store: the wall time of the plan of one day of synthetic traffic against the
quarter sweep's two sides (bench/history_scale.py), in a new process per round as a user runs it.

The store is bench/history_scale.py's (``generate`` then ``lake``); the trace: ``--requests`` Mooncake requests over
one day, output lengths 16-1,024 tokens. The target is the middle of the sides' interactivity overlap, as
history_scale's compare_interactivity. Target: <= 2 s; figures in docs/dev/performance.md.

    python bench/history_scale.py generate && python bench/history_scale.py lake --store /tmp/tcob-year
    python bench/plan_scale.py --store /tmp/tcob-year --repeat 5

Design notes: docs/dev/architecture/analysis.md#tasks-compare-plan.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import ROOT, load_average, machine
from history_scale import QUARTER_SWEEP


def write_trace(path: Path, requests: int, seed: int = 0) -> Path:
    """``requests`` Mooncake lines over one day (Poisson arrivals), output 16-1,024 tokens, input 128-4,096."""
    rng = np.random.default_rng(seed)
    at = np.sort(rng.uniform(0, 86_400_000, requests)).astype(int)
    outputs, inputs = rng.integers(16, 1025, requests), rng.integers(128, 4097, requests)
    with path.open("w") as handle:
        for t, i, o in zip(at.tolist(), inputs.tolist(), outputs.tolist(), strict=True):
            handle.write(json.dumps({"timestamp": t, "input_length": i, "output_length": o, "hash_ids": []}) + "\n")
    return path


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def middle_target(store: str) -> float | None:
    """The middle of the sides' interactivity overlap over QUARTER_SWEEP (the target compare picks by default)."""
    from tcobench.tasks.analysis.compare import CompareOptions, compare
    from tcobench.tasks.prices import load_prices

    found = compare(store, load_prices(None), *QUARTER_SWEEP, CompareOptions(resamples=100)).frontier
    if found is None or len(found.targets) < 2 or found.targets[1].ratio is None:
        return None
    print(f"frontier A {found.a.range_text()}, B {found.b.range_text()}; target {found.targets[1].target:.1f}")
    return float(found.targets[1].target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="the year store (bench/history_scale.py lake)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--requests", type=int, default=10_000)
    args = parser.parse_args()
    target = middle_target(args.store)
    if target is None:
        raise SystemExit("no interactivity inside both sides' ranges: nothing to plan at")
    with tempfile.TemporaryDirectory() as tmp:
        # bytecode cached, as an installed wheel has it (bench/small_store.py does the same): without, every round
        # compiles the package's modules again
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
        env.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=str(Path(tmp) / "pyc"))
        trace = write_trace(Path(tmp) / "day.jsonl", args.requests)
        argv = [sys.executable, "-m", "tcobench", "plan", "--trace", str(trace), "--a", QUARTER_SWEEP[0]]
        argv += ["--b", QUARTER_SWEEP[1], "--interactivity", f"{target:.3f}", "--store", args.store]
        walls, cpus = [], []
        print(f"load average before {load_average()}")
        for _ in range(args.repeat):
            cpu0, t0 = _cpu_children(), time.perf_counter()
            done = subprocess.run([*argv, "--format", "json"], env=env, capture_output=True, text=True, check=False)
            walls.append(time.perf_counter() - t0)
            cpus.append(_cpu_children() - cpu0)
            if done.returncode != 0:
                raise SystemExit(f"plan failed ({done.returncode}): {done.stderr[-2000:]}")
        doc = json.loads(done.stdout)
    gpus = [p["gpus"]["value"] if p["gpus"] else None for p in doc["platforms"]]
    print(f"{machine()}; load average after {load_average()}")
    print(f"plan at {target:.1f} tok/s/user, {args.requests:,} requests: GPUs A, B = {gpus}")
    print(f"  wall best {min(walls):.3f} s   median {statistics.median(walls):.3f} s   (n={len(walls)})")
    print(f"  CPU  best {min(cpus):.3f} s   median {statistics.median(cpus):.3f} s")


if __name__ == "__main__":
    main()
