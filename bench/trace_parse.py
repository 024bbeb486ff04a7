"""Trace parsing: a 1,000,000-request Mooncake trace is read in <= 10 s with flat memory.

For each trace size (``--requests``, default 1,000,000, and 10,000), a generated Mooncake trace (lengths and hash ids
drawn like the published trace's: a few shared prefix blocks, then the request's own) is read by a fresh Python
process the way a replay and `tcobench trace stats` read it (``open_trace(...).requests()``, every request built as
a ``TraceRequest``). It reports the read's wall and CPU time, its RSS after imports and the peak RSS (``ru_maxrss``)
after the read: the growth is what reading cost. Flat memory: the big trace's growth is about the small one's.

    .venv/bin/python bench/trace_parse.py [--requests 1000000] [--json OUT]

Figures for docs/dev/performance.md need a quiet machine (the script records the load average).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import load_average, machine

TARGET_S = 10.0
BLOCK = 512


def write_trace(path: Path, requests: int) -> int:
    """``requests`` Mooncake lines, 1 to 4 arrivals per 100 ms, inputs of 1 to 32 blocks (the first few shared)."""
    rng = random.Random(requests)
    next_id, at = 1000, 0
    with path.open("w", encoding="utf-8") as handle:
        for _ in range(requests):
            at += rng.choice((0, 0, 25, 100))
            length = rng.randrange(64, 32 * BLOCK)
            blocks = -(-length // BLOCK)
            shared = min(blocks, rng.randrange(0, 4))
            ids = [rng.randrange(50) * 4 + k for k in range(shared)] + list(range(next_id, next_id + blocks - shared))
            next_id += blocks - shared
            line = {"timestamp": at, "input_length": length, "output_length": rng.randrange(1, 1024), "hash_ids": ids}
            handle.write(json.dumps(line) + "\n")
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
        tokens += request.input_tokens or 0
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "requests": count,
        "input_tokens": tokens,
        "read_s": round(seconds, 2),
        "cpu_s": round(cpu, 2),  # what the read cost this process: the wall time a loaded machine stretches
        "requests_per_s": round(count / seconds),
        "rss_before_mib": round(before / 1024, 1),
        "peak_rss_mib": round(peak / 1024, 1),
        "growth_mib": round((peak - before) / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    print(f"machine: {machine()}; load average before: {load_average()}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for requests in (args.requests, 10_000):
            path = Path(tmp) / f"mooncake-{requests}.jsonl"
            size = write_trace(path, requests)
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(path)], capture_output=True, text=True, check=True
            )
            row = {"lines": requests, "file_mib": round(size / 2**20, 1), **json.loads(done.stdout.splitlines()[-1])}
            results.append(row)
            print(json.dumps(row))
    big, small = results
    verdict = "met" if big["read_s"] <= TARGET_S else "NOT met"
    print(
        f"{big['lines']:,}-request Mooncake trace ({big['file_mib']} MiB): read in {big['read_s']} s, "
        f"{big['cpu_s']} s of CPU (target <= {TARGET_S:g} s: {verdict}), peak RSS growth {big['growth_mib']} MiB "
        f"(10,000 requests: {small['growth_mib']} MiB); load average after: {load_average()}"
    )
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "results": results}, indent=2), "utf-8")


if __name__ == "__main__":
    main()
