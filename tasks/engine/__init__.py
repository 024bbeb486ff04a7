"""launch_engine / stop_engine: one launcher module per ``schemas.EngineKind``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import SecretStr

from tcobench.errors import EngineDiedError
from tcobench.schemas import BenchmarkConfig, ClientPlacement
from tcobench.tasks.engine import container, endpoint, local, vllm  # noqa: F401  (importing registers the launchers)
from tcobench.tasks.engine.base import EngineEvent, LaunchOptions, OnEvent, Runner, RunningEngine, launcher_for
from tcobench.tasks.engine.endpoint import target_of
from tcobench.tasks.engine.sizing import reachable_concurrency
from tcobench.tasks.load.placement import probe_rtt_ns

__all__ = [
    "EngineEvent",
    "LaunchOptions",
    "OnEvent",
    "RunningEngine",
    "engine_error",
    "engine_runs_elsewhere",
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
    api_key: SecretStr | None = None,
) -> RunningEngine:
    """Start or find the engine, healthy and serving the model; EngineError otherwise.

    ``batch_id`` labels what the launcher starts (a container); ``on_event`` receives progress (model pulls);
    ``api_key``: an endpoint's key as a command gave it (`tcobench run --api-key`).
    The engine's provenance gains where this process is relative to it (``client_placement``) and, off loopback,
    the round trip to it (``rtt_p50_ns``).
    """
    slots = reachable_concurrency(config.workload)  # the embedded engine also caps it by memory (``sizing``)
    launch = LaunchOptions(batch_id=batch_id, on_event=on_event, api_key=api_key)
    launcher = launcher_for(config.engine.kind)
    engine = launcher.start(config, slots, log_dir, model_cache, launch)
    try:
        engine.provenance.update(_link(config, launcher.placement(engine), engine.base_url))
    except BaseException:
        launcher.stop(engine)
        raise
    return engine


def _link(config: BenchmarkConfig, placement: ClientPlacement | None, base_url: str) -> dict[str, Any]:
    """RunRecord columns on the client-engine link: placement, and the round trip where it is not loopback."""
    probe = placement is not None and placement is not ClientPlacement.loopback
    rtt = probe_rtt_ns(base_url, config.engine.protocol) if probe else None
    return {"client_placement": placement.value if placement else None, "rtt_p50_ns": rtt}


DEATH_SETTLE_S = 3.0


def stop_engine(config: BenchmarkConfig, engine: RunningEngine) -> None:
    launcher_for(config.engine.kind).stop(engine)


def engine_error(config: BenchmarkConfig, engine: RunningEngine, failures: bool = False) -> str | None:
    """Why the engine died during the run, or None if it is still up.

    ``failures``: the run's requests failed, so the engine may just have died: its death gets ``DEATH_SETTLE_S``
    to be reported (a killed engine refuses connections at once, and its container still reads "running" for a
    moment; without the wait the run would be called partial instead of failed with the engine's exit)."""
    return launcher_for(config.engine.kind).alive_error(engine, DEATH_SETTLE_S if failures else 0.0)


def engine_runs_elsewhere(config: BenchmarkConfig) -> bool:
    """True when the engine of ``config`` runs on another machine than this process."""
    return launcher_for(config.engine.kind).runs_elsewhere(config)


def ensure_engine_alive(error: str | None) -> None:
    """Raise the engine's death (from ``engine_error``) as an EngineDiedError (exit 3), so no further run starts."""
    if error is not None:
        raise EngineDiedError(error)


def telemetry_access(config: BenchmarkConfig, engine: RunningEngine) -> tuple[Runner | None, bool]:
    """(how to run a command where the engine runs, whether that is another host) for telemetry samplers."""
    return launcher_for(config.engine.kind).telemetry_access(engine)
