"""`tcobench docs [PAGE]`: the documentation pages shipped in the package, printed as markdown (no checkout needed).

tcobench/docs links the repository's docs/ (as tcobench/tasks links tasks/), shipped whole as package data. A page's
name is its path under docs/ without ``.md`` (``fleet``, ``cli/run``,
``dev/decisions/0003-fleet-on-prefect-workers``).
"""

from __future__ import annotations

import sys
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Annotated

import typer

from tcobench.cli._common import guard, out
from tcobench.errors import ConfigError

__all__ = ["doc_names", "doc_text", "doc_title", "register"]


def _root() -> Traversable:
    return files("tcobench").joinpath("docs")


def _pages(folder: Traversable, prefix: str = "") -> dict[str, Traversable]:
    found: dict[str, Traversable] = {}
    for node in folder.iterdir():
        if node.is_dir():
            found.update(_pages(node, f"{prefix}{node.name}/"))
        elif node.name.endswith(".md"):
            found[prefix + node.name.removesuffix(".md")] = node
    return found


def doc_names() -> list[str]:
    """Every page's name, the top-level pages first."""
    return sorted(_pages(_root()), key=lambda name: (name.count("/"), name))


def doc_text(name: str) -> str:
    """A page's markdown; ConfigError naming the page and the pages there are when there is no such page."""
    page = _pages(_root()).get(name.removesuffix(".md").removeprefix("docs/"))
    if page is None:
        top = [n for n in doc_names() if "/" not in n]
        raise ConfigError(f"no documentation page {name}; the pages: {', '.join(top)} (and {_folders()})")
    return page.read_text("utf-8")


def _folders() -> str:
    """The folders of pages below the top ("cli/..., dev/...")."""
    return ", ".join(f"{f}/..." for f in sorted({name.split("/")[0] for name in doc_names() if "/" in name}))


def doc_title(name: str) -> str:
    """A page's first heading, without its #."""
    for line in doc_text(name).splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return name


def _docs(
    page: Annotated[
        str | None, typer.Argument(help="The page, e.g. fleet, engines, failures; none: list the pages.")
    ] = None,
) -> None:
    """Print a documentation page (markdown), or list the pages: the docs/ folder, shipped in the package."""
    if page is None:
        top = [name for name in doc_names() if "/" not in name]
        width = max(len(name) for name in top)
        for name in top:
            out.print(f"{name:{width}}  {doc_title(name)}", highlight=False, markup=False, soft_wrap=True)
        out.print(
            f"also {_folders()}; `tcobench docs PAGE` prints one",
            highlight=False,
            markup=False,
        )
        return
    try:
        text = doc_text(page)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="PAGE") from None
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def register(app: typer.Typer) -> None:
    app.command("docs")(guard(_docs))
