"""Trace parsing: a 1,000,000-request trace is read in <= 10 s with flat memory.

For each trace size (``--requests``, default 1,000,000, and 10,000) and format (``--format``, repeatable; default
mooncake), a generated trace is read by a fresh process as a replay reads it (``open_trace(...).requests()``). It
reports the read's wall and CPU time, the RSS after imports and the peak RSS growth (``ru_maxrss``): flat memory is
the big trace's growth about the small one's. ``--tree`` twice (before, after) reads each file with each checkout's
code in turn (its folder first on PYTHONPATH): a change side by side under the same load.

    .venv/bin/python bench/trace_parse.py [--requests 1000000] [--format mooncake] [--tree BEFORE --tree .]

Figures for docs/dev/performance.md need a quiet machine (the load average is printed); on a loaded one the CPU
time is the figure comparable across sittings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, load_average, machine

TARGET_S = 10.0
BLOCK = 512
FORMATS = ("mooncake", "azure", "tcobench")
_WORDS = ("the", "cost", "of", "a", "token", "served", "within", "its", "SLO", "at", "peak", "traffic", "GPU")


def _arrivals(rng: random.Random, requests: int) -> Any:
    """ms offsets: 1 to 4 arrivals per 100 ms."""
    at = 0
    for _ in range(requests):
        at += rng.choice((0, 0, 25, 100))
        yield at


def _mooncake(rng: random.Random, requests: int) -> Any:
    """Lengths and hash ids drawn like the published trace's: inputs of 1 to 32 blocks, the first few shared."""
    next_id = 1000
    for at in _arrivals(rng, requests):
        length = rng.randrange(64, 32 * BLOCK)
        blocks = -(-length // BLOCK)
        shared = min(blocks, rng.randrange(0, 4))
        ids = [rng.randrange(50) * 4 + k for k in range(shared)] + list(range(next_id, next_id + blocks - shared))
        next_id += blocks - shared
        line = {"timestamp": at, "input_length": length, "output_length": rng.randrange(1, 1024), "hash_ids": ids}
        yield json.dumps(line) + "\n"


def _azure(rng: random.Random, requests: int) -> Any:
    """A header, then rows with the 2023 traces' 7-digit times."""
    start = dt.datetime(2023, 11, 16, 18, 15, 46)
    yield "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    last, same = -1, 0
    for at in _arrivals(rng, requests):
        same = same + 1 if at == last else 0  # arrivals in the same ms: a microsecond apart, in order
        last = at
        when = start + dt.timedelta(milliseconds=at, microseconds=same)
        stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f") + str(rng.randrange(10))
        yield f"{stamp},{rng.randrange(1, 8000)},{rng.randrange(1, 1024)}\n"


def _tcobench(rng: random.Random, requests: int) -> Any:
    """A prompt of a few dozen words and an output length per line."""
    for at in _arrivals(rng, requests):
        prompt = " ".join(rng.choices(_WORDS, k=rng.randrange(5, 60)))
        yield json.dumps({"timestamp": at, "prompt": prompt, "output_tokens": rng.randrange(1, 1024)}) + "\n"


def write_trace(path: Path, fmt: str, requests: int) -> int:
    """``requests`` lines of ``fmt`` (the module docstring); the file's size in bytes."""
    rng = random.Random(requests)
    lines = {"mooncake": _mooncake, "azure": _azure, "tcobench": _tcobench}[fmt](rng, requests)
    with path.open("w", encoding="utf-8") as handle:
        handle.writelines(lines)
    return path.stat().st_size


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def child(path: Path) -> dict[str, Any]:
    """In a fresh process: RSS after imports, then the read, then peak RSS."""
    from tcobench.schemas import TraceConfig
    from tcobench.tasks.workload import open_trace

    before = _rss_kib()
    t0, cpu0 = time.perf_counter(), time.process_time()
    count = tokens = 0
    for request in open_trace(TraceConfig(path=path)).requests():
        count += 1
        tokens += (request.input_tokens or 0) + (request.output_tokens or 0)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "requests": count,
        "tokens": tokens,
        "read_s": round(seconds, 2),
        "cpu_s": round(cpu, 2),  # what the read cost this process: the wall time a loaded machine stretches
        "requests_per_s": round(count / seconds),
        "rss_before_mib": round(before / 1024, 1),
        "peak_rss_mib": round(peak / 1024, 1),
        "growth_mib": round((peak - before) / 1024, 1),
    }


def read_with(tree: Path, path: Path) -> dict[str, Any]:
    """``child`` in a fresh process importing tcobench from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(path)], env=env, cwd=tree, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"{tree}: reading {path.name} failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--format", action="append", choices=FORMATS, help="mooncake (default), azure, tcobench")
    parser.add_argument("--tree", action="append", type=Path, help="a checkout whose code reads the traces [this one]")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    trees = [tree.resolve() for tree in args.tree or [ROOT]]
    print(f"machine: {machine()}; load average before: {load_average()}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.format or ["mooncake"]:
            for requests in (args.requests, 10_000):
                path = Path(tmp) / f"{fmt}-{requests}"
                size = write_trace(path, fmt, requests)
                for tree in trees:
                    row = {"format": fmt, "lines": requests, "file_mib": round(size / 2**20, 1), "tree": str(tree)}
                    row |= read_with(tree, path) | {"load": load_average()}
                    results.append(row)
                    print(json.dumps(row), flush=True)
    for big in (row for row in results if row["lines"] == args.requests):
        small = next(
            r for r in results if r["lines"] == 10_000 and (r["format"], r["tree"]) == (big["format"], big["tree"])
        )
        verdict = "met" if big["read_s"] <= TARGET_S else "NOT met"
        print(
            f"{big['tree']}: {big['lines']:,}-request {big['format']} trace ({big['file_mib']} MiB): read in "
            f"{big['read_s']} s, {big['cpu_s']} s of CPU (target <= {TARGET_S:g} s: {verdict}), peak RSS growth "
            f"{big['growth_mib']} MiB (10,000 requests: {small['growth_mib']} MiB)"
        )
    print(f"load average after: {load_average()}")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "results": results}, indent=2), "utf-8")


if __name__ == "__main__":
    main()
