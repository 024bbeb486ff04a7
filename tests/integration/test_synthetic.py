"""A synthetic model end to end: `tcobench models synth` with the bundled tokenizer, then the real llama.cpp
engine serving it through `tcobench run --no-prefect`; the rows say synthetic and why there is no power data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.engine


def tcobench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "tcobench"
    return subprocess.run([str(exe), *args], env=env, capture_output=True, text=True, timeout=600, check=False)


def test_synthetic_model_run(cli_env: dict[str, str], tmp_path: Path) -> None:
    model = tmp_path / "synth-tiny.gguf"
    made = tcobench("models", "synth", "--shape", "tiny", "--out", str(model), env=cli_env)
    assert made.returncode == 0, made.stderr
    args = ["--model-path", str(model), "--model", "synth-tiny", "--requests", "3", "--concurrency", "1"]
    run = tcobench(
        "run", "--no-prefect", *args, "--max-tokens", "16", "--ignore-eos", "--telemetry", "auto", env=cli_env
    )
    assert run.returncode == 0, run.stderr[-2000:]
    done = tcobench(
        "query",
        "select r.synthetic_model, r.model_name, r.telemetry_source, r.telemetry_note, "
        "s.n, s.errors, s.output_tokens from runs r join run_summary s using (run_id)",
        "--format",
        "json",
        env=cli_env,
    )
    (row,) = json.loads(done.stdout)
    assert row["synthetic_model"] is True and row["model_name"] == "synth-tiny"
    assert row["n"] == 3 and row["errors"] == 0 and row["output_tokens"] == 48  # exactly 16 each (ignore_eos)
    assert row["telemetry_source"] is None and row["telemetry_note"].startswith("no power source on this host")


def test_unknown_shape(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = tcobench("models", "synth", "--shape", "llama-9000b", "--out", str(tmp_path / "x.gguf"), env=cli_env)
    assert done.returncode == 2
    assert done.stderr.startswith("UsageError: Invalid value for --shape: 'llama-9000b': choose one of llama-1b")
    assert not (tmp_path / "x.gguf").exists()
