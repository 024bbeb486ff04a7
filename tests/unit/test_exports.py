"""Every public module's __all__ names exactly what it defines publicly (httpx's check)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import tcobench
import tcobench.flows
import tcobench.images
import tcobench.schemas
import tcobench.tasks

PACKAGES = [tcobench, tcobench.schemas, tcobench.tasks, tcobench.flows, tcobench.images]


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package.__name__)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not info.name.rsplit(".", 1)[-1].startswith("_") and info.name != "tcobench.cli":
                names.append(info.name)
    return sorted(set(names))


@pytest.mark.parametrize("name", _modules())
def test_all_matches_public_definitions(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"
    for symbol in exported:
        assert hasattr(module, symbol), f"{name}.__all__ names {symbol!r}, which does not exist"
    defined_here = {
        key
        for key, value in vars(module).items()
        if not key.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", None) == name
    }
    missing = defined_here - set(exported)
    assert not missing, f"{name} defines public {sorted(missing)} but does not export them"
