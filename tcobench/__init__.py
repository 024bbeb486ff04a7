"""tcobench: measure LLM inference engines on your own hosts and price the tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    __version__: str

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:
    """``__version__`` read from the installed metadata on first use (importlib.metadata is slow to import)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("tcobench")
    except PackageNotFoundError:  # running from a source tree without an install
        value = "0.0.0+unknown"
    globals()["__version__"] = value
    return value
