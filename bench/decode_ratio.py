"""Benchmark (a): does our client see the engine's true decode speed?

Starts the embedded llama-server (bundled Gemma 3 270M, or --model-path), sends N single-stream requests
(concurrency 1, exactly --max-tokens output tokens via ignore_eos) and compares, for the same requests:

  ours    = (output_tokens - 1) / (last content chunk - first content chunk)      tokens/s, client side
  engine  = server_eval_count / server_eval_ns                                    tokens/s, llama.cpp timings

Target: ours / engine >= 0.97. Note that llama.cpp counts the first generated token in predicted_n while its
time covers the decode steps after it, so the engine's figure runs high by about n/(n-1); ``ours_n`` below
uses the engine's convention (output_tokens / decode time) for a like-for-like ratio.

    .venv/bin/python bench/decode_ratio.py [--requests 20] [--max-tokens 128] [--model-path FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from tcobench.schemas import BenchmarkConfig
from tcobench.settings import Settings
from tcobench.tasks.engine import launch_engine, stop_engine, target_of
from tcobench.tasks.measure import RunContext, measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--model-path", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    model = {"path": str(args.model_path), "name": args.model_path.stem} if args.model_path else {}
    config = BenchmarkConfig.model_validate_json(json.dumps({
        "model": model,
        "workload": {"requests": args.requests, "warmup_requests": 2, "concurrency": [1],
                     "max_tokens": args.max_tokens, "ignore_eos": True},
    }))  # fmt: skip
    with tempfile.TemporaryDirectory() as logs:
        engine = launch_engine(config, Path(logs), Settings().model_cache)
        try:
            result = measure(
                target_of(config, engine.base_url), config.workload, RunContext("bench", "2000-01-01", "h"), 1
            )
        finally:
            stop_engine(config, engine)
    rows = [r for r in result.measured if r.error is None and r.decode_ns and r.server_eval_ns and r.output_tokens]
    if not rows:
        raise SystemExit("no successful request to compare: " + "; ".join(str(r.error) for r in result.measured))
    ours = [(r.output_tokens - 1) / r.decode_ns * 1e9 for r in rows]  # type: ignore[operator]
    ours_n = [r.output_tokens / r.decode_ns * 1e9 for r in rows]  # type: ignore[operator]
    engine_rate = [r.server_eval_count / r.server_eval_ns * 1e9 for r in rows]  # type: ignore[operator]
    ratios = [a / b for a, b in zip(ours, engine_rate, strict=True)]
    ratios_n = [a / b for a, b in zip(ours_n, engine_rate, strict=True)]
    ratio_mean = statistics.fmean(ratios)
    figures: dict[str, Any] = {
        "requests_compared": len(rows),
        "output_tokens_per_request": statistics.median(r.output_tokens for r in rows),  # type: ignore[type-var]
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
