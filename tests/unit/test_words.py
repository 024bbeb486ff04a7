"""Product text says where a figure or template comes from in terms a user can check (a public source, or
"assumption"): never an unnamed "seed article". Checked over the README, docs/, the price table, the SQL views
and the package's Python (CLI help, report text)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import tcobench

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(tcobench.__file__).resolve().parent
UNCHECKABLE = re.compile(r"seed article|the seed\b(?! \d)|seed's", re.IGNORECASE)


def _product_text() -> list[Path]:
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    for folder, _, names in os.walk(PACKAGE, followlinks=True):
        files += [Path(folder) / n for n in names if n.endswith((".py", ".sql", ".toml"))]
    return files


def test_no_product_text_cites_an_uncheckable_source() -> None:
    found = [
        f"{path}:{n}"
        for path in _product_text()
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if UNCHECKABLE.search(line)
    ]
    assert not found, found


def test_the_check_can_fail() -> None:
    assert UNCHECKABLE.search("adaptation_days: seed article (hours on CUDA)")
    assert UNCHECKABLE.search("the seed's record template")
    assert not UNCHECKABLE.search("seed 42 + request index; --seed of the bootstrap")
