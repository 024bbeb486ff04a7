"""lazy: a package's public names loaded on first use, so importing the package costs nothing until a name is read.

A package lists each name's home module (``homes``: name -> submodule) and binds what ``names`` returns:

    __getattr__, __dir__ = lazy.names(__name__, _HOMES, __all__)

``keep_functions(__name__, _HOMES)`` is for a package whose names are also the names of its submodules (flows'
``benchmark`` flow lives in benchmark.py): importing a submodule binds it on its package, which would then hide the
function; the package's class is switched to one that leaves those names alone, as the eager imports did.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["keep_functions", "names"]


def names(
    package: str, homes: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's module-level ``__getattr__`` (imports a name's home on first use, then keeps the value) and
    ``__dir__``."""
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *public])

    return __getattr__, __dir__


def keep_functions(package: str, homes: Mapping[str, str]) -> None:
    """Importing a submodule of ``package`` no longer binds it over a name of ``homes`` (a function of that name)."""

    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if name in homes and isinstance(value, types.ModuleType):
                return
            super().__setattr__(name, value)

    sys.modules[package].__class__ = _Package
