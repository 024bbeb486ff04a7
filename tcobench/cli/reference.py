"""The CLI reference (docs/cli.md), generated from the CLI itself: every command's ``--help`` at 80 columns.

    python -m tcobench.cli.reference            # rewrite docs/cli.md
    python -m tcobench.cli.reference --check    # exit 1 when docs/cli.md is not current

tests/unit/cli/test_reference.py checks that the committed file is current.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["WIDTH", "commands", "main", "reference"]

WIDTH = 80
_HEADER = """# CLI reference

Generated from the CLI by `python -m tcobench.cli.reference` (do not edit: a test checks it is current). Every
command's `--help`, as `tcobench COMMAND --help` prints it at 80 columns. Exit codes:
[failures.md](failures.md#errors-and-exit-status).
"""


def commands() -> Iterator[tuple[list[str], Any, Any]]:
    """(path, click command, its context) of the root and every command below it, in the order --help lists them."""
    import typer

    from tcobench.cli.main import app

    root = typer.main.get_command(app)
    root_ctx = root.make_context("tcobench", [], resilient_parsing=True)

    def walk(path: list[str], command: Any, ctx: Any) -> Iterator[tuple[list[str], Any, Any]]:
        yield path, command, ctx
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and not getattr(sub, "hidden", False):
                    yield from walk([*path, name], sub, sub.make_context(name, [], parent=ctx, resilient_parsing=True))

    yield from walk([], root, root_ctx)


def reference() -> str:
    """docs/cli.md's text."""
    from tcobench.cli._help import render_help

    parts = [_HEADER]
    for path, command, ctx in commands():
        title = " ".join(["tcobench", *path])
        parts.append(f"## {title}\n\n```text\n{render_help(command, ctx, WIDTH)}```\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
    text = reference()
    if "--check" in args:
        current = target.read_text("utf-8") if target.exists() else ""
        if current != text:
            sys.stderr.write(f"{target} is not current: run python -m tcobench.cli.reference\n")
            return 1
        return 0
    target.write_text(text, "utf-8")
    sys.stdout.write(f"wrote {target}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
