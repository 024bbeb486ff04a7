"""launch_engine / stop_engine: one launcher module per ``schemas.EngineKind``."""

from __future__ import annotations

from pathlib import Path

from tcobench.errors import EngineDiedError
from tcobench.schemas import BenchmarkConfig

from . import container, endpoint, local  # noqa: F401  (importing registers the launchers)
from .base import EngineEvent, LaunchOptions, OnEvent, Runner, RunningEngine, launcher_for
from .endpoint import target_of

__all__ = [
    "EngineEvent",
    "LaunchOptions",
    "OnEvent",
    "RunningEngine",
    "engine_error",
    "ensure_engine_alive",
    "launch_engine",
    "stop_engine",
    "target_of",
    "telemetry_access",
]


def launch_engine(
    config: BenchmarkConfig,
    log_dir: Path,
    model_cache: Path,
    batch_id: str = "",
    on_event: OnEvent | None = None,
) -> RunningEngine:
    """Start or find the engine, healthy and serving the model; EngineError otherwise.

    ``batch_id`` labels what the launcher starts (a container); ``on_event`` receives progress (model pulls).
    """
    slots = max(config.workload.concurrency)
    launch = LaunchOptions(batch_id=batch_id, on_event=on_event)
    return launcher_for(config.engine.kind).start(config, slots, log_dir, model_cache, launch)


def stop_engine(config: BenchmarkConfig, engine: RunningEngine) -> None:
    launcher_for(config.engine.kind).stop(engine)


def engine_error(config: BenchmarkConfig, engine: RunningEngine) -> str | None:
    """Why the engine died during the run, or None if it is still up."""
    return launcher_for(config.engine.kind).alive_error(engine)


def ensure_engine_alive(error: str | None) -> None:
    """Raise the engine's death (from ``engine_error``) as an EngineDiedError (exit 3), so no further run starts."""
    if error is not None:
        raise EngineDiedError(error)


def telemetry_access(config: BenchmarkConfig, engine: RunningEngine) -> tuple[Runner | None, bool]:
    """(how to run a command where the engine runs, whether that is another host) for telemetry samplers."""
    return launcher_for(config.engine.kind).telemetry_access(engine)
