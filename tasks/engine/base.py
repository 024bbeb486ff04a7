"""What a launched engine looks like to the rest of tcobench, and the registry keyed by EngineKind."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from tcobench.schemas import BenchmarkConfig, ClientPlacement, EngineKind
from tcobench.tasks._registry import Registry
from tcobench.tasks.load.placement import placement_of_url
from tcobench.tasks.load.protocols import EngineInfo

__all__ = [
    "EngineEvent",
    "EngineLauncher",
    "LaunchOptions",
    "OnEvent",
    "Runner",
    "RunningEngine",
    "launcher_for",
    "register",
]

Runner = Callable[[list[str]], str]  # runs a command where the engine runs; returns its stdout


@dataclass(frozen=True)
class EngineEvent:
    """Progress while an engine starts (a model pull, a warning), for the progress display."""

    message: str
    completed: int | None = None  # bytes (or steps) done, when the step has a size
    total: int | None = None
    warning: bool = False


OnEvent = Callable[[EngineEvent], None]


@dataclass(frozen=True)
class LaunchOptions:
    """What a launch needs beyond the config: the batch it serves and where to report progress."""

    batch_id: str = ""
    on_event: OnEvent | None = None
    api_key: SecretStr | None = None  # an endpoint's key as a command gave it (tasks.engine.endpoint.api_key_of)

    def report(self, event: EngineEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)


@dataclass
class RunningEngine:
    """An engine ready to take requests; ``stop`` undoes whatever ``start`` did."""

    base_url: str
    info: EngineInfo
    log_path: Path | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    handle: Any = None  # the launcher's own handle (a Popen, a container, ...)
    provenance: dict[str, Any] = field(default_factory=dict)  # RunRecord columns (image, image_digest, ...)
    # host_* RunRecord columns read where the engine runs when that is another machine (a remote Docker daemon)
    host_facts: dict[str, Any] = field(default_factory=dict)
    # the fields of its serving configuration that its launcher knows (schemas.ServingConfig less engine, version,
    # model and GPUs: tasks/engine/serving.py adds those)
    serving: dict[str, Any] = field(default_factory=dict)


class EngineLauncher(ABC):
    kind: EngineKind

    @abstractmethod
    def start(
        self, config: BenchmarkConfig, slots: int, log_dir: Path, model_cache: Path, launch: LaunchOptions
    ) -> RunningEngine:
        """Start (or find) the engine, wait until healthy, identify it; EngineError on failure."""

    @abstractmethod
    def stop(self, engine: RunningEngine) -> None:
        """Release the engine; never raises for an engine that is already gone."""

    def telemetry_access(self, engine: RunningEngine) -> tuple[Runner | None, bool]:
        """(a way to run a command where the engine runs, whether that is another host than this one)."""
        return None, False

    def alive_error(self, engine: RunningEngine, settle_s: float = 0.0) -> str | None:
        """Why the engine is no longer usable, or None while it is.

        ``settle_s``: how long to wait for the engine's death to be reported before calling it alive, for a run
        whose requests failed (a killed engine refuses connections at once; its process or container is reported
        dead a moment later)."""
        return None

    def runs_elsewhere(self, config: BenchmarkConfig) -> bool:
        """True when the engine runs on another machine than this process (this machine's facts are not its)."""
        return False

    def placement(self, engine: RunningEngine) -> ClientPlacement | None:
        """Where this process (the load generator) is relative to the engine: from the address it talks to."""
        return placement_of_url(engine.base_url)


_REGISTRY: Registry[EngineKind, EngineLauncher] = Registry("engine launcher")


def register(kind: EngineKind) -> Callable[[type[EngineLauncher]], type[EngineLauncher]]:
    return _REGISTRY.register(kind, kind=kind)


def launcher_for(kind: EngineKind) -> EngineLauncher:
    return _REGISTRY[kind]
