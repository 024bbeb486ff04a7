"""The CLI reference (docs/cli/), generated from the CLI itself: every command's ``--help`` at 80 columns.

    python -m tcobench.cli.reference            # rewrite docs/cli/
    python -m tcobench.cli.reference --check    # exit 1 when docs/cli/ is not current

One page a top-level command (``docs/cli/run.md``; a group's page holds its sub-commands), and ``docs/cli/index.md``
with ``tcobench --help`` and a link to each page. tests/unit/cli/test_reference.py checks that the committed pages
are current.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["WIDTH", "commands", "main", "pages", "stale", "write"]

WIDTH = 80
FOLDER = Path(__file__).resolve().parents[2] / "docs" / "cli"
_HEADER = """# CLI reference

Generated from the CLI by `python -m tcobench.cli.reference` (do not edit: a test checks it is current). Every
command's `--help`, as `tcobench COMMAND --help` prints it at 80 columns, one page a command. Exit codes:
[failures.md](../failures.md#errors-and-exit-status).
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


def pages() -> dict[str, str]:
    """Each page of docs/cli/ by file name: index.md (the root's help), then one page a top-level command."""
    from tcobench.cli._help import render_help

    sections: dict[str, list[str]] = {"index.md": [_HEADER]}
    links = ["## Commands\n"]
    for path, command, ctx in commands():
        title = " ".join(["tcobench", *path])
        block = f"```text\n{render_help(command, ctx, WIDTH)}```\n"
        if len(path) == 1:  # a command's page opens with its own help (its heading is the page's title)
            sections[f"{path[0]}.md"] = [f"# {title}\n\nGenerated; see the [CLI reference](index.md).\n", block]
            links.append(f"- [{title}]({path[0]}.md)")
        else:  # the root's help, in the index; a sub-command's, below its group's on the group's page
            sections[f"{path[0]}.md" if path else "index.md"].append(f"## {title}\n\n{block}")
    sections["index.md"] += links
    return {name: "\n".join(parts).rstrip("\n") + "\n" for name, parts in sections.items()}


def write(folder: Path = FOLDER) -> list[Path]:
    """Write the pages into folder, removing a page of a command that is gone; the paths written."""
    wanted = pages()
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()
    written = []
    for name, text in wanted.items():
        (folder / name).write_text(text, "utf-8")
        written.append(folder / name)
    return written


def stale(folder: Path = FOLDER) -> list[str]:
    """The page names in folder that differ from the CLI's, are missing, or belong to no command."""
    wanted = pages()
    present = {p.name: p.read_text("utf-8") for p in folder.glob("*.md")} if folder.is_dir() else {}
    return sorted(name for name in wanted.keys() | present.keys() if wanted.get(name) != present.get(name))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--check" in args:
        differ = stale()
        if differ:
            sys.stderr.write(f"{FOLDER}: {', '.join(differ)} not current: run python -m tcobench.cli.reference\n")
            return 1
        return 0
    written = write()
    sys.stdout.write(f"wrote {len(written)} pages to {FOLDER}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
