"""launch_engine / stop_engine: one launcher module per ``schemas.EngineKind``."""

from __future__ import annotations

from pathlib import Path

from tcobench.schemas import BenchmarkConfig

from . import endpoint, local  # noqa: F401  (importing registers the launchers)
from .base import RunningEngine, launcher_for
from .endpoint import target_of

__all__ = ["RunningEngine", "engine_error", "launch_engine", "stop_engine", "target_of"]


def launch_engine(config: BenchmarkConfig, log_dir: Path, model_cache: Path) -> RunningEngine:
    """Start or find the engine, healthy and serving the model; EngineError otherwise."""
    slots = max(config.workload.concurrency)
    return launcher_for(config.engine.kind).start(config, slots, log_dir, model_cache)


def stop_engine(config: BenchmarkConfig, engine: RunningEngine) -> None:
    launcher_for(config.engine.kind).stop(engine)


def engine_error(config: BenchmarkConfig, engine: RunningEngine) -> str | None:
    """Why the engine died during the run, or None if it is still up."""
    return launcher_for(config.engine.kind).alive_error(engine)
