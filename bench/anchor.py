"""The anchor client: NVIDIA's aiperf 0.13.0 from its own venv, driven like our client (bench/client_headroom.py).

aiperf is not a dependency of tcobench. Set it up once (no torch; a local tokenizer folder, no hub):

    python3.11 -m venv /tmp/aiperf-venv && /tmp/aiperf-venv/bin/pip install -U pip
    /tmp/aiperf-venv/bin/pip install aiperf==0.13.0 tokenizers
    .venv/bin/python bench/anchor.py --make-tokenizer /tmp/zero-tok

Design notes: docs/dev/architecture/bench-and-build.md#bench-anchor.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

AIPERF = Path(os.environ.get("AIPERF_VENV", "/tmp/aiperf-venv")) / "bin" / "aiperf"
TOKENIZER = Path(os.environ.get("AIPERF_TOKENIZER", "/tmp/zero-tok"))

__all__ = ["AIPERF", "TOKENIZER", "make_tokenizer", "run_anchor"]


def make_tokenizer(folder: Path) -> None:
    """Write tokenizer.json + tokenizer_config.json (word level; `` tok`` is one token). Needs ``tokenizers``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # type: ignore[import-not-found, unused-ignore]

    words = ["[UNK]", "tok", *(chr(c) for c in range(97, 123)), "the", "and", "to", "of", "in", "is", "it"]
    tokenizer = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]", "model_max_length": 1_000_000}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))


def _aiperf_cmd(url: str, tokens: int, concurrency: int, requests: int, out: Path) -> list[str]:
    return [
        "taskset",
        "-c",
        "0",
        str(AIPERF),
        "profile",
        "-m",
        "zero",
        "--url",
        url,
        "--endpoint-type",
        "completions",
        "--streaming",
        "--tokenizer",
        str(TOKENIZER),
        "--concurrency",
        str(concurrency),
        "--request-count",
        str(requests),
        "--warmup-request-count",
        str(concurrency),
        "--output-tokens-mean",
        str(tokens),
        "--output-tokens-stddev",
        "0",
        "--synthetic-input-tokens-mean",
        "16",
        "--synthetic-input-tokens-stddev",
        "0",
        "--use-legacy-max-tokens",
        "--ui-type",
        "none",
        "--artifact-dir",
        str(out),
    ]


def _records(out: Path) -> list[dict[str, Any]]:
    rows = []
    with (out / "profile_export.jsonl").open() as handle:
        for line in handle:
            rec = json.loads(line)
            if rec["metadata"].get("benchmark_phase") == "profiling":
                rows.append(rec)
    return rows


def run_anchor(client: str, url: str, sc: Any, concurrency: int) -> dict[str, Any]:
    """Run aiperf for one level of a scenario; the same figures as bench/client_headroom.figures."""
    from _headroom import figures

    if client != "aiperf":
        raise SystemExit(f"anchor {client!r} is not available (guidellm needs a CUDA torch; see bench/anchor.py)")
    n = max(sc.min_requests, sc.requests_per_slot * concurrency)
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    with tempfile.TemporaryDirectory(prefix="aiperf-") as tmp:
        out = Path(tmp)
        done = subprocess.run(
            _aiperf_cmd(url, sc.tokens, concurrency, n, out),
            env=env,
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if done.returncode != 0 or not (out / "profile_export.jsonl").exists():
            raise SystemExit(f"aiperf failed ({done.returncode}): {done.stdout[-1500:]}{done.stderr[-1500:]}")
        recs = _records(out)
    ok = [r for r in recs if not r.get("error") and "time_to_first_token" in r["metrics"]]
    ttft = [round(r["metrics"]["time_to_first_token"]["value"] * 1e6) for r in ok]
    gaps = [round(g * 1e6) for r in ok for g in r["metrics"].get("inter_chunk_latency", {}).get("value", [])]
    tokens = sum(r["metrics"].get("output_token_count", {}).get("value", 0) for r in ok)
    start = min((r["metadata"]["request_start_ns"] for r in recs), default=0)
    end = max((r["metadata"]["request_end_ns"] for r in recs), default=0)
    return figures(sc, ttft, gaps, len(ok), len(recs) - len(ok), tokens, (end - start) / 1e9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--make-tokenizer", type=Path, help="write the tokenizer folder and exit")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.make_tokenizer:
        make_tokenizer(args.make_tokenizer)
        return
    sys.path.insert(0, str(Path(__file__).parent))
    script = [sys.executable, str(Path(__file__).parent / "client_headroom.py"), "--anchors", "aiperf"]
    subprocess.run([*script, *(["--quick"] if args.quick else [])], check=True)


if __name__ == "__main__":
    main()
