"""The docs hold together: every relative link in README.md and docs/ points at a file that exists, and
docs/dev/performance.md opens with the table of current figures, each row naming its command, date and machine."""

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


def test_no_page_is_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in PAGES if (n := len(p.read_text("utf-8").splitlines())) > 400}
    assert not long, f"split these pages (issue 42 item 6): {long}"


def test_the_site_leads_from_install_to_a_claim_in_three_clicks() -> None:
    """mkdocs.yml's nav opens Home, then Getting started (the install); Getting started links the claim's section.
    `make test` builds the site with --strict (a broken link or anchor, or a page left out of the nav, fails)."""
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    assert config["strict"] is True and config["docs_dir"] == "docs"
    assert config["theme"]["font"] is False, "no Google Fonts: the build works offline"
    assert {config["validation"][k] for k in ("omitted_files", "absolute_links", "unrecognized_links")} == {"warn"}
    assert config["nav"][:2] == [{"Home": "index.md"}, {"Getting started": "getting-started.md"}]
    assert "getting-started.md" in _relative_links(ROOT / "docs" / "index.md")
    assert "comparing.md#reproducing-a-published-claim" in _relative_links(ROOT / "docs" / "getting-started.md")
    assert "## Reproducing a published claim" in (ROOT / "docs" / "comparing.md").read_text("utf-8")


def test_performance_opens_with_the_current_figures() -> None:
    lines = (ROOT / "docs" / "dev" / "performance.md").read_text().splitlines()
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
    linked = set(_relative_links(ROOT / "docs" / "dev" / "performance.md"))
    for sitting in (ROOT / "docs" / "dev" / "bench-log").glob("*.md"):
        assert f"bench-log/{sitting.name}" in linked, f"{sitting.name} is not linked from docs/dev/performance.md"


# --- Nothing said twice (issue 41 item 8) -----------------------------------------------------------------------
# A paragraph, a table row or a sentence of 8+ words that appears twice in docs/ (in one page or in two) is a copy
# that will drift: keep it in one place and link to it. Code blocks are left out (a command may well be shown twice),
# and so are headings and table header rows.
DOC_PAGES = sorted((ROOT / "docs").rglob("*.md"))
# The provenance stamp every moved bench-log sitting opens with: the same words on purpose.
STAMPS = {"Moved verbatim from docs/dev/performance.md (2026-12-04); the current figures are in its first table."}
_FENCE = re.compile(r"^\s*```.*?^\s*```[^\n]*$", re.S | re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\[*])")
_MIN_WORDS = 8


def _units(text: str) -> tuple[list[str], list[str]]:
    """(paragraphs and table rows, sentences) of a page, whitespace collapsed, code blocks and headings left out."""
    blocks, sentences = [], []
    for block in re.split(r"\n\s*\n", _FENCE.sub("", text)):
        lines = block.splitlines()
        prose, rows = [], []
        for i, line in enumerate(lines):
            if line.lstrip().startswith("#"):
                continue
            if line.lstrip().startswith("|"):
                header = i + 1 < len(lines) and re.fullmatch(r"\s*\|[\s:|-]+\|\s*", lines[i + 1])
                if not header and not re.fullmatch(r"\s*\|[\s:|-]+\|\s*", line):
                    rows.append(" ".join(line.split()))
            else:
                prose.append(line)
        paragraph = " ".join(" ".join(prose).split())
        blocks += [u for u in [paragraph, *rows] if _long(u)]
        sentences += [s for unit in [paragraph, *rows] for s in _SENTENCE_END.split(unit) if _long(s)]
    return blocks, sentences


def _long(unit: str) -> bool:
    """Long enough that saying it twice is a copy, not a coincidence (a table's "exit status | 0" is not)."""
    return len(re.findall(r"[A-Za-z][A-Za-z'-]+", unit)) >= _MIN_WORDS


def _repeats(units: list[tuple[str, str]]) -> list[str]:
    seen: dict[str, str] = {}
    found = []
    for where, unit in units:
        if unit in STAMPS:
            continue
        if unit in seen:
            found.append(f"{seen[unit]} and {where}: {unit[:120]}")
        else:
            seen[unit] = where
    return found


def _all_units(pages: list[Path], root: Path = ROOT) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    blocks, sentences = [], []
    for page in pages:
        name = str(page.relative_to(root))
        page_blocks, page_sentences = _units(page.read_text("utf-8"))
        blocks += [(name, b) for b in page_blocks]
        sentences += [(name, s) for s in page_sentences]
    return blocks, sentences


def test_no_paragraph_is_said_twice_in_docs() -> None:
    blocks, _ = _all_units(DOC_PAGES)
    repeated = _repeats(blocks)
    assert not repeated, "said twice (keep one, link to it):\n" + "\n".join(repeated)


def test_no_sentence_is_said_twice_in_docs() -> None:
    _, sentences = _all_units(DOC_PAGES)
    repeated = _repeats(sentences)
    assert not repeated, "said twice (keep one, link to it):\n" + "\n".join(repeated)


def test_the_repetition_check_finds_a_repeated_heading_paragraph_and_sentence(tmp_path: Path) -> None:
    """The check itself can fail: the shape of the old nightly.md (heading and first paragraph twice) and of the
    old fleet.md (one sentence twice, in different paragraphs)."""
    page = tmp_path / "page.md"
    page.write_text(
        "# Nightly\n\nRunning each host's cells on the host itself: see the fleet page for the rest.\n\n"
        "## Nightly\n\nRunning each host's cells on the host itself: see the fleet page for the rest.\n\n"
        "One thing here. The deployed nightly's threshold is set by the option named here (default 0.05).\n\n"
        "Another thing. The deployed nightly's threshold is set by the option named here (default 0.05).\n\n"
        "```bash\ntcobench nightly -i a.toml\n```\n\n```bash\ntcobench nightly -i a.toml\n```\n"
    )
    blocks, sentences = _all_units([page], tmp_path)
    assert [r.split(": ", 1)[1] for r in _repeats(blocks)] == [
        "Running each host's cells on the host itself: see the fleet page for the rest."
    ]
    assert len(_repeats(sentences)) == 2  # the paragraph's sentence, and the threshold sentence
