"""Two simulated GPU hosts through `tcobench nightly` (issue 16's acceptance): their labels reach the stored runs
and the progress shows while the night runs.

Real parts: two zero-cost streaming endpoints (bench/zero_endpoint.py, no GPU behind them), the `tcobench` command
in a pseudo-terminal (Python's pty: what a user's terminal shows), a DuckLake store in a temporary folder. The
inventory declares one host NVIDIA H200 and the other AMD MI300X; nothing here can detect a GPU, so every run
carries the declared hardware marked "declared". Prefect is off (--no-prefect): the same flow wiring, run in-process.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_helpers import tcobench

from tests.services import free_ports

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")  # colours, cursor moves, titles
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
name = "zero-nv"
endpoint = "{nv}"
hosts = ["sim-nv"]

[[engines]]
name = "zero-amd"
endpoint = "{amd}"
hosts = ["sim-amd"]

[[models]]
name = "zero"

[[workloads]]
name = "short"
requests = 12
warmup_requests = 1
max_tokens = 32
concurrency = [1, 2]
"""


@dataclass(frozen=True)
class Night:
    env: dict[str, str]
    transcript: list[tuple[float, str]]  # (seconds since start, text read from the terminal)
    exit_code: int


def _endpoints() -> Iterator[list[str]]:
    ports = free_ports(2)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "bench" / "zero_endpoint.py"),
                "--port",
                str(port),
                "--itl-ms",
                "4",
                "--tokens",
                "32",
            ],
            stdout=subprocess.PIPE,
            text=True,
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


def _in_terminal(args: list[str], env: dict[str, str], timeout_s: float) -> tuple[int, list[tuple[float, str]]]:
    """Run a command with a pseudo-terminal as its stdin, stdout and stderr; what it wrote, as it came."""
    main, side = pty.openpty()
    os.set_blocking(main, False)
    start = time.monotonic()
    proc = subprocess.Popen(args, stdin=side, stdout=side, stderr=side, env=env, close_fds=True)
    os.close(side)
    chunks: list[tuple[float, str]] = []
    try:
        while time.monotonic() - start < timeout_s:
            ready, _, _ = select.select([main], [], [], 0.2)
            if ready:
                try:
                    data = os.read(main, 65536)
                except OSError:  # EIO: every writer closed the terminal, the command is gone
                    data = b""
                if not data:
                    break
                chunks.append((time.monotonic() - start, data.decode("utf-8", "replace")))
            elif proc.poll() is not None:  # exited, nothing left to read
                break
        code = proc.wait(timeout=max(1.0, timeout_s - (time.monotonic() - start)))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(main)
    return code, chunks


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Night]:
    folder = tmp_path_factory.mktemp("labels")
    for urls in _endpoints():
        (folder / "inventory.toml").write_text(INVENTORY, "utf-8")
        (folder / "matrix.toml").write_text(MATRIX.format(nv=urls[0], amd=urls[1]), "utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
        env.update(TCOBENCH_STORE=str(folder / "store"), COLUMNS="160", TERM="xterm-256color")
        env.pop("NO_COLOR", None)
        exe = str(Path(sys.executable).parent / "tcobench")
        args = [exe, "nightly", "-i", str(folder / "inventory.toml"), "-m", str(folder / "matrix.toml"), "--no-prefect"]
        code, transcript = _in_terminal(args, env, timeout_s=300)
        yield Night(env, transcript, code)


def _plain(transcript: list[tuple[float, str]]) -> str:
    return ANSI.sub("", "".join(text for _, text in transcript)).replace("\r", "\n")


def test_a_terminal_shows_progress_and_level_results_before_the_end(night: Night) -> None:
    text = _plain(night.transcript)
    assert night.exit_code == 0, text[-3000:]
    end = text.index("# tcobench nightly")  # the night's summary: printed once everything is done
    before = text[:end]
    for host in ("sim-nv", "sim-amd"):  # a bar per host: its cell, requests done / total, errors, ETA
        assert re.search(rf"{host} 1/1 {host}/zero-\w+/zero/short c=[12].*\d+/26 .*\d+ errors .*ETA", before), host
        # each level's result, printed as it is stored
        assert re.search(rf"{host}: {host}/zero-\w+/zero/short c=1 ok: 12 ok, 0 errors, [\d,.]+ output tok/s", before)
    # and they came out while the night ran, not all at the end
    first = next(t for t, chunk in night.transcript if "ETA" in ANSI.sub("", chunk))
    last = night.transcript[-1][0]
    assert first < last - 1.0, (first, last)


def test_the_closing_summary_gives_each_platforms_cost_and_the_cheapest(night: Night) -> None:
    """The night's summary (issue 41): $/1M output tokens per platform (hardware key and GPU) at its cheapest level,
    and the cheapest platform with its advantage over the next, labelled as a ranking (the nightly checks no claim)."""
    assert night.exit_code == 0
    text = _plain(night.transcript)
    summary = " ".join(text[text.index("# tcobench nightly") :].split())
    assert "## Cost per 1M output tokens this night (owned basis)" in summary
    for gpu, key in (("H200", "nvidia-h200-sxm"), ("MI300X", "amd-mi300x")):
        assert re.search(rf"\| zero \| short \| {gpu} \| {key} \| \$[\d.,]+ \| c=[12] \(", summary), (gpu, summary)
    assert re.search(
        r"- zero / short: cheapest (H200|MI300X) \((nvidia-h200-sxm|amd-mi300x)\), \$[\d.,]+ per 1M output tokens, "
        r"[\d.]+x as cost-efficient as the next",
        summary,
    ), summary
    assert "not a verdict" in summary


def test_declared_labels_reach_compare_report_and_record_card(night: Night, tmp_path: Path) -> None:
    assert night.exit_code == 0
    compared = tcobench("compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--resamples", "200", env=night.env)
    assert compared.returncode == 0, compared.stderr
    assert "GPUs nvidia H200 (declared); engines zero-nv" in compared.stdout
    assert "GPUs amd MI300X (declared); engines zero-amd" in compared.stdout  # (engine= selection: test_compare)
    out = tmp_path / "report.html"
    reported = tcobench("report", "--out", str(out), "--resamples", "200", env=night.env)
    assert reported.returncode == 0, reported.stderr
    page = out.read_text("utf-8")
    headline = re.sub(r"<[^>]+>", "", re.search(r'<p class="headline">(.*?)</p>', page, re.S).group(1))  # type: ignore[union-attr]
    assert "(nvidia declared)" in headline and "(amd declared)" in headline, headline
    card = page[page.index('id="record-card"') :]
    assert "1 x H200 (declared)" in card and "1 x MI300X (declared)" in card
    assert "zero-nv: openai-compatible" in card  # the matrix's engine label beside what the engine reports
