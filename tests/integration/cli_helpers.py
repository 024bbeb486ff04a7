"""Running the `tcobench` command as a user does, for the integration tests."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["assert_charted_or_left_out", "one_line_error", "tcobench"]


def tcobench(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the venv's `tcobench` console script; output captured as text."""
    exe = Path(sys.executable).parent / "tcobench"
    if not exe.exists():
        exe = Path(shutil.which("tcobench") or "tcobench")
    return subprocess.run([str(exe), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def one_line_error(stderr: str) -> str:
    """The single `Kind: message` line of a failed command (progress bars and start-up notes aside)."""
    lines = [line for line in stderr.splitlines() if re.match(r"^[A-Z]\w*Error: ", line)]
    assert len(lines) == 1, stderr
    return lines[0]


def assert_charted_or_left_out(section: str, env: dict[str, str]) -> None:
    """Each engine chart is drawn where a run has a value above 0, else left out with the line saying why (issue 41:
    at or below the engine's slots no request waits, and a chart of zeros had an axis from -1 to 1)."""
    sql = "select max(waiting_mean) as waiting, max(kv_used_mean) as kv from engine_load"
    done = tcobench("query", sql, "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    (peak,) = json.loads(done.stdout)
    for caption, value in (
        ("Queue depth inside the engine vs concurrency", peak["waiting"]),
        ("KV-cache use vs concurrency", peak["kv"]),
    ):
        if value:
            assert re.match(r"[^<]*</figcaption><svg", section[section.index(caption) :]), f"{caption}: no chart"
        else:
            assert f'<p class="note left-out">Chart left out: {caption}: ' in section, f"{caption}: no line"
