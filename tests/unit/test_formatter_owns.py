"""The formatter owns the code (issue 42): no formatter fences (fmt skip, fmt off) and no relative imports in any
tracked Python file; `ruff format --check` (make check) then holds for every line."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"#\s*fmt:\s*(skip|off|on)\b")
_RELATIVE = re.compile(r"^\s*from\s+\.", re.M)


def _python_files() -> list[Path]:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "*.py"], capture_output=True, text=True, check=True)
    return [ROOT / name for name in listed.stdout.split()]


def test_python_files_are_found() -> None:
    assert len(_python_files()) > 100


def test_no_formatter_fence() -> None:
    fenced = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in _python_files()
        for n, line in enumerate(p.read_text("utf-8").splitlines(), 1)
        if _FENCE.search(line)
    ]
    assert not fenced, f"ruff format owns the layout; remove the fence at {', '.join(fenced[:10])}"


def test_imports_are_absolute() -> None:
    relative = [str(p.relative_to(ROOT)) for p in _python_files() if _RELATIVE.search(p.read_text("utf-8"))]
    assert not relative, f"relative imports in {', '.join(relative[:10])}: import from tcobench.<package> instead"
