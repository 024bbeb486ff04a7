"""Every CLI module imports alone in a fresh interpreter (no import cycles), and none imports a sibling command
module's registration or the app: command modules depend only on the shared helpers (`ALLOWED_SIBLINGS`: `_claim`,
`_common`, `_fit`, `_operations_table`, ... and `images`' option helpers). `main` (the app) and `reference`
(docs/cli/index.md, generated from the app) are the two that see every command."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import tcobench.cli

FOLDER = Path(tcobench.cli.__file__).parent
MODULES = sorted(f"tcobench.cli.{m.name}" for m in pkgutil.iter_modules([str(FOLDER)]))
ALLOWED_SIBLINGS = {
    "_claim",
    "_common",
    "_damage",
    "_fit",
    "_flags",
    "_help",
    "_history_table",
    "_operations_table",
    "_progress",
    "_run_display",
    "_runs_table",
    "_signals",
    "_summary_table",
    "_workload_table",
    "images",
}


def test_modules_found() -> None:
    assert {"tcobench.cli.main", "tcobench.cli.run", "tcobench.cli._common"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_imports_alone(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("module", [m for m in MODULES if m not in ("tcobench.cli.main", "tcobench.cli.reference")])
def test_command_modules_import_only_shared_siblings(module: str) -> None:
    tree = ast.parse((FOLDER / (module.rsplit(".", 1)[1] + ".py")).read_text("utf-8"))
    siblings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            siblings.add(node.module or "")
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("tcobench.cli"):
            siblings.add((node.module or "").removeprefix("tcobench.cli").removeprefix("."))
    assert siblings <= ALLOWED_SIBLINGS, f"{module} imports {sorted(siblings - ALLOWED_SIBLINGS)}"
