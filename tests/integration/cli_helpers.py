"""Running the `tcobench` command as a user does, for the integration tests."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["one_line_error", "tcobench"]


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
