"""Benchmark (a): does our client see the engine's true decode speed?

Starts the embedded llama-server (bundled Gemma 3 270M, or --model-path), sends N single-stream requests
(concurrency 1, exactly --max-tokens output tokens via ignore_eos) and compares, for the same requests:

  ours    = view request_metrics' decode_tok_s: (output_tokens - 1) / decode time     tokens/s, client side
  engine  = view request_metrics' server_decode_tok_s: server_eval_count / eval time   tokens/s, llama.cpp timings

Design notes: docs/dev/architecture/bench-and-build.md#bench-decode-ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from tcobench.schemas import BenchmarkConfig, RequestRecord
from tcobench.settings import Settings
from tcobench.tasks.engine import launch_engine, stop_engine, target_of
from tcobench.tasks.load.measure import measure
from tcobench.tasks.load.record import RunContext
from tcobench.tasks.store.query import sql_views


def _request_metrics(requests: list[RequestRecord]) -> list[dict[str, Any]]:
    """The ok rows of view request_metrics (tcobench/sql) over these requests that have both decode rates."""
    con = duckdb.connect()
    con.register("requests", pa.Table.from_pylist([r.model_dump(mode="json") for r in requests]))
    con.execute(dict(sql_views())["request_metrics"])
    sql = "SELECT * FROM request_metrics WHERE ok AND decode_tok_s IS NOT NULL AND server_decode_tok_s IS NOT NULL"
    rows: list[dict[str, Any]] = con.sql(sql).to_arrow_table().to_pylist()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--model-path", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    model = {"path": str(args.model_path), "name": args.model_path.stem} if args.model_path else {}
    config = BenchmarkConfig.model_validate_json(
        json.dumps(
            {
                "model": model,
                "workload": {
                    "requests": args.requests,
                    "warmup_requests": 2,
                    "concurrency": [1],
                    "max_tokens": args.max_tokens,
                    "ignore_eos": True,
                },
            }
        )
    )
    with tempfile.TemporaryDirectory() as logs:
        engine = launch_engine(config, Path(logs), Settings().model_cache)
        try:
            result = measure(
                target_of(config, engine.base_url), config.workload, RunContext("bench", "2000-01-01", "h"), 1
            )
        finally:
            stop_engine(config, engine)
    rows = _request_metrics(result.measured)
    if not rows:
        raise SystemExit("no successful request to compare: " + "; ".join(str(r.error) for r in result.measured))
    ours = [r["decode_tok_s"] for r in rows]
    ours_n = [r["output_tokens"] / r["decode_ns"] * 1e9 for r in rows]  # the engine's convention, for comparison
    engine_rate = [r["server_decode_tok_s"] for r in rows]
    ratios = [a / b for a, b in zip(ours, engine_rate, strict=True)]
    ratios_n = [a / b for a, b in zip(ours_n, engine_rate, strict=True)]
    ratio_mean = statistics.fmean(ratios)
    figures: dict[str, Any] = {
        "requests_compared": len(rows),
        "output_tokens_per_request": statistics.median(r["output_tokens"] for r in rows),
        "ours_tok_s_mean": statistics.fmean(ours),
        "engine_tok_s_mean": statistics.fmean(engine_rate),
        "ratio_mean": ratio_mean,
        "ratio_min": min(ratios),
        "ratio_engine_convention_mean": statistics.fmean(ratios_n),
        "ratio_engine_convention_min": min(ratios_n),
        "engine": engine.info.version,
        "target": 0.97,
    }
    for key, value in figures.items():
        print(f"{key:32s} {value:.4f}" if isinstance(value, float) else f"{key:32s} {value}")
    verdict = "met" if ratio_mean >= 0.97 else "NOT met"
    print(f"target ours/engine >= 0.97: {verdict}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), "utf-8")


if __name__ == "__main__":
    main()
