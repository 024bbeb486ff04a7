"""Claim-grade runs end to end (issue 31): the steady window on a simulated batching engine, and the stamp of a
short nightly.

Real parts: two simulated batching engines (bench/batching_endpoint.py: the zero-cost streaming endpoint whose every
decode step takes a + b x streams-in-flight ms; no GPU behind it), the `tcobench` command, a store in a temporary
folder. The inventory declares one host NVIDIA and one AMD; Prefect is off (--no-prefect, the same flow wiring).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import tcobench

from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect
from tests.services import free_ports

ROOT = Path(__file__).resolve().parents[2]
A_MS, B_MS = 20.0, 2.0  # the simulated step: a + b x streams in flight, ms
INVENTORY = """
[[hosts]]
name = "sim-nv"
vendor = "nvidia"
gpu_model = "H200"
gpu_count = 1
hardware = "nvidia-h200-sxm"

[[hosts]]
name = "sim-amd"
vendor = "amd"
gpu_model = "MI300X"
gpu_count = 1
hardware = "amd-mi300x"
"""
MATRIX = """
[[engines]]
name = "sim-nv"
endpoint = "{nv}"
hosts = ["sim-nv"]

[[engines]]
name = "sim-amd"
endpoint = "{amd}"
hosts = ["sim-amd"]

[[models]]
name = "zero"

[[workloads]]
name = "short"
requests = 16
warmup_requests = 2
max_tokens = 16
concurrency = [2]

[[workloads]]
name = "answers"
accuracy = 4
warmup_requests = 0
concurrency = [1]
"""
# what a short night cannot meet: duration, samples; measured power (no telemetry here), a pinned engine version
# and model digest (the simulated engine reports neither)
LOWERED = ["duration=0.1", "samples=10", "power=off", "setup=off"]


@pytest.fixture(scope="module")
def engines() -> Iterator[list[str]]:
    ports = free_ports(2)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "bench" / "batching_endpoint.py"),
                "--port",
                str(port),
                "--a-ms",
                str(A_MS),
                "--b-ms",
                str(B_MS),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": f"{ROOT / 'bench'}{os.pathsep}{ROOT}"},
        )
        for port in ports
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and "http://" in proc.stdout.readline()
        yield [f"http://127.0.0.1:{port}" for port in ports]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


def _env(store: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(TCOBENCH_STORE=str(store), COLUMNS="200", NO_COLOR="1")
    return env


def test_steady_throughput_is_the_batching_models_and_closer_than_the_whole_window(
    engines: list[str], tmp_path: Path
) -> None:
    """8 streams of uneven lengths: the steady window's tok/s is within 5% of 8 x 1000 / (a + 8b), and nearer to it
    than output tokens over the whole measured window (ramp-up and a ragged tail included)."""
    c = 8
    done = tcobench(
        "run",
        "--endpoint",
        engines[0],
        "--model",
        "zero",
        "--concurrency",
        str(c),
        "--requests",
        "48",
        "--warmup",
        str(c),
        "--output-tokens",
        "uniform:8-56",
        "--telemetry",
        "none",
        "--no-prefect",
        env=_env(tmp_path / "store"),
    )
    assert done.returncode == 0, done.stderr
    assert "steady state (all streams busy)" in done.stdout
    con = connect(tmp_path / "store", load_prices(None), needs={"run_summary"})
    try:
        row = con.execute("SELECT steady_output_tok_s, output_tok_s, steady_share FROM run_summary").fetchone()
    finally:
        con.close()
    assert row is not None
    steady, whole, share = row
    expected = c * 1000 / (A_MS + B_MS * c)
    assert abs(steady / expected - 1) < 0.05, (steady, whole, expected)
    assert abs(steady - expected) < abs(whole - expected), (steady, whole, expected)
    assert 0.5 < share < 1.0


def test_a_short_nightly_is_stamped_no_naming_duration_and_yes_with_lowered_thresholds(
    engines: list[str], tmp_path: Path
) -> None:
    (tmp_path / "inventory.toml").write_text(INVENTORY, "utf-8")
    (tmp_path / "matrix.toml").write_text(MATRIX.format(nv=engines[0], amd=engines[1]), "utf-8")
    env = _env(tmp_path / "store")
    night = tcobench(
        "nightly", "-i", str(tmp_path / "inventory.toml"), "-m", str(tmp_path / "matrix.toml"), "--no-prefect", env=env
    )
    assert night.returncode == 0, night.stderr
    pair = ("--a", "vendor=nvidia", "--b", "vendor=amd", "--resamples", "200")
    strict = tcobench("compare", *pair, env=env)
    assert strict.returncode == 0, strict.stderr
    lines = strict.stdout.splitlines()
    assert "claim-grade: no" in lines
    assert any(line.startswith("  duration: steady duration ") and "< 600 s (level 2, " in line for line in lines)
    assert any(line.startswith("  samples: measured requests 16 < 1000") for line in lines)
    lowered = tcobench("compare", *pair, *(f"--claim-rule={r}" for r in LOWERED), env=env)
    assert lowered.returncode == 0, lowered.stderr
    # the same answers on both sides (parity 100%), and the same exact-match score on the bundled questions
    assert "claim-grade: yes (rules turned off: power, setup)" in lowered.stdout.splitlines(), lowered.stdout
    assert "Setup differences, A vs B" in lowered.stdout and "GPU" in lowered.stdout
