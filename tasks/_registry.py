"""Variants registered under an enum value (aiperf's ``Factory.register(Enum)``): one helper for every registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

__all__ = ["Registry"]

K = TypeVar("K")
T = TypeVar("T")
C = TypeVar("C", bound=type)


class Registry(Generic[K, T]):
    """``@REG.register(key, attr=value)`` sets class attributes and stores the class (or, with
    ``instances=True``, one instance of it); ``REG[key]`` returns what was stored."""

    def __init__(self, what: str, instances: bool = True) -> None:
        self.what, self.instances = what, instances
        self._items: dict[K, T] = {}

    def register(self, key: K, **attrs: Any) -> Callable[[C], C]:
        def wrap(cls: C) -> C:
            for name, value in attrs.items():
                setattr(cls, name, value)
            self._items[key] = cast(T, cls() if self.instances else cls)
            return cls

        return wrap

    def __getitem__(self, key: K) -> T:
        try:
            return self._items[key]
        except KeyError:
            raise KeyError(
                f"no {self.what} registered for {key!r} (known: {', '.join(map(str, self._items))})"
            ) from None
