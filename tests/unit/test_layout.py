"""The package layout of docs/dev/decisions/0001-package-layout.md: the top-level folders are the package's sub-packages
through committed relative links, so a checkout, an editable install and the wheel import the same modules."""

from __future__ import annotations

from pathlib import Path

import pytest

import tcobench

ROOT = Path(__file__).resolve().parents[2]
LINKED = ("schemas", "tasks", "flows", "images", "docker")


@pytest.mark.parametrize("name", LINKED)
def test_subpackage_is_a_relative_link_to_the_top_level_folder(name: str) -> None:
    link = ROOT / "tcobench" / name
    assert link.is_symlink(), f"tcobench/{name} must be a link to ../{name}"
    assert str(link.readlink()) == f"../{name}", link.readlink()
    assert link.resolve() == (ROOT / name).resolve()


def test_package_imports_from_the_checkout() -> None:
    assert Path(tcobench.__file__).resolve().parent == ROOT / "tcobench"
