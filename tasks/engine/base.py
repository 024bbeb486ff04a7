"""What a launched engine looks like to the rest of tcobench, and the registry keyed by EngineKind."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcobench.schemas import BenchmarkConfig, EngineKind

from ..protocols import EngineInfo

__all__ = ["EngineLauncher", "RunningEngine", "launcher_for", "register"]


@dataclass
class RunningEngine:
    """An engine ready to take requests; ``stop`` undoes whatever ``start`` did."""

    base_url: str
    info: EngineInfo
    log_path: Path | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    handle: Any = None  # the launcher's own handle (a Popen, a container, ...)


class EngineLauncher(ABC):
    kind: EngineKind

    @abstractmethod
    def start(self, config: BenchmarkConfig, slots: int, log_dir: Path, model_cache: Path) -> RunningEngine:
        """Start (or find) the engine, wait until healthy, identify it; EngineError on failure."""

    @abstractmethod
    def stop(self, engine: RunningEngine) -> None:
        """Release the engine; never raises for an engine that is already gone."""

    def alive_error(self, engine: RunningEngine) -> str | None:
        """Why the engine is no longer usable, or None while it is."""
        return None


_REGISTRY: dict[EngineKind, EngineLauncher] = {}


def register(kind: EngineKind) -> Callable[[type[EngineLauncher]], type[EngineLauncher]]:
    def wrap(cls: type[EngineLauncher]) -> type[EngineLauncher]:
        cls.kind = kind
        _REGISTRY[kind] = cls()
        return cls

    return wrap


def launcher_for(kind: EngineKind) -> EngineLauncher:
    return _REGISTRY[kind]
