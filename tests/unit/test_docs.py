"""The docs hold together: every relative link in README.md and docs/ points at a file that exists, and
docs/performance.md opens with the table of current figures, each row naming its command, date and machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code blocks hold no links
    return [m for m in LINK.findall(text) if not re.match(r"[a-z]+:|#", m)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = [link for link in _relative_links(page) if not (page.parent / link.split("#")[0]).exists()]
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"


def test_performance_opens_with_the_current_figures() -> None:
    lines = (ROOT / "docs" / "performance.md").read_text().splitlines()
    first_table = next(i for i, line in enumerate(lines) if line.startswith("|"))
    assert not any(line.startswith("## ") for line in lines[:first_table]), "the table comes before any section"
    header = [cell.strip() for cell in lines[first_table].strip("|").split("|")]
    assert header == ["target", "current figure", "met?", "command", "date, commit", "machine", "sitting"]
    rows = []
    for line in lines[first_table + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    assert len(rows) >= 10
    for row in rows:
        assert len(row) == len(header), row
        assert row[2] in {"yes", "no", "pending", "at the line"}, row
        assert row[3], f"no command for {row[0]}"


def test_every_bench_log_sitting_is_linked_from_performance() -> None:
    linked = set(_relative_links(ROOT / "docs" / "performance.md"))
    for sitting in (ROOT / "docs" / "bench-log").glob("*.md"):
        assert f"bench-log/{sitting.name}" in linked, f"{sitting.name} is not linked from docs/performance.md"
