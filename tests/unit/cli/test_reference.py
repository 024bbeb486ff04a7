"""docs/cli.md is generated from the CLI (python -m tcobench.cli.reference) and must be current."""

from __future__ import annotations

from pathlib import Path

from tcobench.cli.reference import commands, reference

DOC = Path(__file__).resolve().parents[3] / "docs" / "cli.md"


def test_the_cli_reference_is_current() -> None:
    assert DOC.read_text("utf-8") == reference(), "docs/cli.md is stale: run python -m tcobench.cli.reference"


def test_it_covers_every_command() -> None:
    text = reference()
    for path, _, _ in commands():
        assert f"\n## {' '.join(['tcobench', *path])}\n" in text
    assert {"run", "nightly", "compare", "report", "query"} <= {p[0] for p, _, _ in commands() if p}
