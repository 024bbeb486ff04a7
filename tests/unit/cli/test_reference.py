"""docs/cli/ is generated from the CLI (python -m tcobench.cli.reference) and must be current."""

from __future__ import annotations

from pathlib import Path

from tcobench.cli.reference import FOLDER, commands, pages, stale, write

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_the_cli_reference_is_current() -> None:
    assert FOLDER == DOCS / "cli"
    assert not stale(), "docs/cli/ is stale: run python -m tcobench.cli.reference"


def test_it_covers_every_command_once_with_a_page_a_command() -> None:
    text = pages()
    for path, _, _ in commands():
        title = " ".join(["tcobench", *path])
        page = text[f"{path[0]}.md" if path else "index.md"]
        heading = "#" if len(path) == 1 else "##"
        assert page.count(f"{heading} {title}\n") == 1, title
        if len(path) == 1:
            assert f"- [{title}]({path[0]}.md)\n" in text["index.md"]
    assert {"run", "nightly", "compare", "report", "query"} <= {p[0] for p, _, _ in commands() if p}
    assert set(text) == {"index.md"} | {f"{p[0]}.md" for p, _, _ in commands() if p}


def test_no_page_is_over_400_lines() -> None:
    long = {name: n for name, page in pages().items() if (n := len(page.splitlines())) > 400}
    assert not long, long


def test_the_check_finds_a_stale_page_a_missing_one_and_one_of_no_command(tmp_path: Path) -> None:
    write(tmp_path)
    assert stale(tmp_path) == []
    (tmp_path / "run.md").write_text("# tcobench run\n", "utf-8")
    (tmp_path / "store.md").unlink()
    (tmp_path / "gone.md").write_text("# tcobench gone\n", "utf-8")
    assert stale(tmp_path) == ["gone.md", "run.md", "store.md"]
    write(tmp_path)
    assert stale(tmp_path) == [] and not (tmp_path / "gone.md").exists()
