"""`tcobench docs [PAGE]`: the docs/ pages, read from the package (tcobench/docs links docs/, shipped as package data,
tests/integration/test_wheel.py), so a wheel install can read every page the commands point to."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.cli.docs import doc_names

ROOT = Path(__file__).resolve().parents[3]
runner = CliRunner()


def test_a_page_is_printed_as_it_is_in_docs() -> None:
    done = runner.invoke(app, ["docs", "fleet"])
    assert done.exit_code == 0, done.output
    assert done.stdout == (ROOT / "docs" / "fleet.md").read_text("utf-8")
    nested = runner.invoke(app, ["docs", "dev/decisions/0003-fleet-on-prefect-workers"])
    assert nested.stdout == (ROOT / "docs" / "dev" / "decisions" / "0003-fleet-on-prefect-workers.md").read_text(
        "utf-8"
    )
    assert runner.invoke(app, ["docs", "fleet.md"]).stdout == done.stdout  # as a link names it


def test_every_page_of_docs_is_there() -> None:
    pages = {str(p.relative_to(ROOT / "docs").with_suffix("")) for p in (ROOT / "docs").rglob("*.md")}
    assert set(doc_names()) == pages


def test_the_list_names_each_top_page_with_its_title() -> None:
    done = runner.invoke(app, ["docs"])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert any(line.split() == ["fleet", "Run", "a", "fleet"] for line in lines), done.stdout
    assert "dev/..." in lines[-1] and "cli/..." in lines[-1] and "tcobench docs PAGE" in lines[-1]


def test_an_unknown_page_is_one_usage_line_naming_the_pages() -> None:
    done = runner.invoke(app, ["docs", "flet"])
    assert done.exit_code == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "no documentation page flet" in done.stderr
    assert "fleet" in done.stderr and "getting-started" in done.stderr


def test_every_docs_page_a_command_names_exists() -> None:
    """Messages and written files point to pages as `tcobench docs NAME`: each must be a page."""
    import re

    sources = [*ROOT.joinpath("tasks").rglob("*.py"), *ROOT.joinpath("tcobench", "cli").glob("*.py")]
    sources += [p for p in ROOT.joinpath("docker").rglob("*") if p.is_file() and p.suffix != ".py"]
    named = {m for p in sources for m in re.findall(r"tcobench docs ([a-z][\w/-]*)", p.read_text("utf-8"))}
    assert named and named <= set(doc_names()) | {"PAGE"}, named - set(doc_names())
