"""Replay timing: the send lag (sent - scheduled) of a trace replayed at 200 requests/s on the zero-cost endpoint.

A tcobench trace of ``--requests`` requests (default 2,000: 10 s) at ``--rate`` requests/s (default 200), evenly
spaced, is replayed by ``tcobench.tasks.load.measure`` (the run's own client, one process, an in-flight cap of 64)
against bench/zero_endpoint.py (20 ms to the first token, 5 ms between tokens, 4 tokens: about 8 requests in
flight). It reports the quantiles of the requests' send lag (``requests.send_lateness_ns``), the earliest send
against its schedule, the client's CPU, and the load average: the figures behind the replay's lag bound
(``SEND_LAG_P99_LIMIT_NS``, docs/workloads.md#replay; the figure goes in docs/performance.md).

    .venv/bin/python bench/replay_lag.py [--rate 200] [--requests 2000] [--repeat 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from _common import endpoint, load_average, machine

from tcobench.schemas import Protocol, TraceConfig, WorkloadConfig
from tcobench.tasks.analysis.quantile import quantile
from tcobench.tasks.load.measure import measure
from tcobench.tasks.load.record import RunContext
from tcobench.tasks.load.selfcheck import SEND_LAG_P99_LIMIT_NS
from tcobench.tasks.load.stream import Target
from tcobench.tasks.workload import WorkloadPlan
from tcobench.tasks.workload.replay import read_replay


def write_trace(path: Path, rate: float, requests: int) -> None:
    """``requests`` lines of the tcobench trace format, one every 1/rate s."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(requests):
            handle.write(json.dumps({"timestamp": i * 1000 / rate, "prompt": "hi", "output_tokens": 4}) + "\n")


def replay_once(url: str, trace: Path) -> dict[str, Any]:
    config = TraceConfig(path=trace)
    workload = WorkloadConfig.model_validate(
        {"trace": {"path": trace}, "warmup_requests": 4, "concurrency": (64,), "client_procs": 1}
    )
    plan = WorkloadPlan(workload, replay=read_replay(config))
    result = measure(Target(url, Protocol.openai, "zero"), workload, RunContext("r", "2026-01-01", "h"), 64, plan=plan)
    lags = [r.send_lateness_ns for r in result.measured if r.send_lateness_ns is not None]
    check = result.client[0]
    return {
        "requests": len(result.measured),
        "errors": sum(r.error is not None for r in result.measured),
        "lag_p50_ms": (quantile(lags, 0.5) or 0) / 1e6,
        "lag_p99_ms": (quantile(lags, 0.99) or 0) / 1e6,
        "lag_max_ms": max(lags) / 1e6,
        "earliest_ms": min(lags) / 1e6,
        "client_cpu": check.cpu_ns / check.wall_ns,
        "load_average": load_average(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp, endpoint(20, 5, 4, None) as zero:
        trace = Path(tmp) / "trace.jsonl"
        write_trace(trace, args.rate, args.requests)
        for k in range(args.repeat):
            run = replay_once(zero.url, trace)
            runs.append(run)
            print(
                f"run {k + 1}: {run['requests']} requests ({run['errors']} errors), send lag p50 "
                f"{run['lag_p50_ms']:.2f} ms, p99 {run['lag_p99_ms']:.2f} ms, max {run['lag_max_ms']:.2f} ms, "
                f"earliest {run['earliest_ms']:+.2f} ms, client CPU {run['client_cpu']:.0%}, load {run['load_average']}"
            )
    print(f"bound (SEND_LAG_P99_LIMIT_NS): {SEND_LAG_P99_LIMIT_NS / 1e6:g} ms; {machine()}")
    if args.json is not None:
        args.json.write_text(json.dumps({"rate": args.rate, "machine": machine(), "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
