"""Dataset memory: a 100,000-line dataset is measured with flat memory (target: peak RSS growth < 50 MiB).

For each dataset size (100,000 lines of about 1.5 kB, about 150 MB; and 1,000 lines), a fresh Python process opens the
dataset the way `tcobench run --dataset` does (one streamed validating pass, an offset index), then sends
``--requests`` requests drawn from it (seeded shuffle) to the zero-cost endpoint with tcobench's load generator.
It reports its RSS before opening the dataset (after imports), and the peak RSS (``ru_maxrss``) after measuring:
the growth is what the dataset and the run cost. Loading the file whole would cost at least its size.

    .venv/bin/python bench/dataset_memory.py [--lines 100000] [--requests 2000] [--json OUT]

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

from _common import endpoint, load_average, machine

WORDS = ("cost", "token", "engine", "latency", "server", "model", "power", "budget", "cluster", "request", "answer")


def write_dataset(path: Path, lines: int, chars: int = 1500) -> int:
    """``lines`` JSONL records of about ``chars`` characters (prompt or messages, some with output_tokens)."""
    rng = random.Random(lines)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(lines):
            text = " ".join(rng.choice(WORDS) for _ in range(chars // 7))
            record: dict[str, Any] = (
                {"prompt": f"{i}: {text}"} if i % 2 else {"messages": [{"role": "user", "content": f"{i}: {text}"}]}
            )
            if i % 3 == 0:
                record["output_tokens"] = 8
            handle.write(json.dumps(record) + "\n")
    return path.stat().st_size


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def child(path: Path, url: str, requests: int) -> dict[str, Any]:
    """In a fresh process: RSS after imports, then open + measure, then peak RSS."""
    from tcobench.schemas import Protocol, WorkloadConfig
    from tcobench.tasks.load.measure import measure
    from tcobench.tasks.load.record import RunContext
    from tcobench.tasks.load.stream import Target
    from tcobench.tasks.workload import WorkloadPlan, open_dataset

    workload = WorkloadConfig.model_validate_json(
        json.dumps(
            {
                "dataset": {"path": str(path)},
                "requests": requests,
                "warmup_requests": 0,
                "max_tokens": 8,
                "concurrency": [8],
            }
        )
    )
    before = _rss_kib()
    t0 = time.perf_counter()
    assert workload.dataset is not None
    dataset = open_dataset(workload.dataset, 1, workload.num_ctx)
    opened = time.perf_counter() - t0
    plan = WorkloadPlan(workload, dataset=dataset)
    result = measure(
        Target(url, Protocol.openai, "zero"), workload, RunContext("bench", "2026-12-01", "bench"), 8, plan=plan
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    failed = sum(r.error is not None for r in result.measured)
    return {
        "records": dataset.records,
        "open_s": round(opened, 2),
        "rss_before_mib": round(before / 1024, 1),
        "peak_rss_mib": round(peak / 1024, 1),
        "growth_mib": round((peak - before) / 1024, 1),
        "requests": len(result.measured),
        "failed": failed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", nargs=3, metavar=("PATH", "URL", "REQUESTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child[0]), args.child[1], int(args.child[2]))))
        return
    print(f"machine: {machine()}; load average before: {load_average()}")
    results = []
    with tempfile.TemporaryDirectory() as tmp, endpoint(0.0, 0.0, 8, cpu=None) as zero:
        for lines in (args.lines, 1000):
            path = Path(tmp) / f"dataset-{lines}.jsonl"
            size = write_dataset(path, lines)
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(path), zero.url, str(args.requests)],
                capture_output=True,
                text=True,
                check=True,
            )
            row = {"lines": lines, "file_mib": round(size / 2**20, 1), **json.loads(done.stdout.splitlines()[-1])}
            results.append(row)
            print(json.dumps(row))
    big = results[0]
    verdict = "met" if big["growth_mib"] < 50 else "NOT met"
    print(
        f"{big['lines']:,}-line dataset ({big['file_mib']} MiB): peak RSS growth {big['growth_mib']} MiB over "
        f"{big['requests']} requests (target < 50 MiB: {verdict}); 1,000 lines: {results[1]['growth_mib']} MiB; "
        f"load average after: {load_average()}"
    )
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "results": results}, indent=2), "utf-8")


if __name__ == "__main__":
    main()
