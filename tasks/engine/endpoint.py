"""An engine the user already runs: nothing to start or stop, only a preflight check."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from tcobench.schemas import BenchmarkConfig, ClientPlacement, EngineKind
from tcobench.tasks.engine.base import EngineLauncher, LaunchOptions, Runner, RunningEngine, register
from tcobench.tasks.load.placement import placement_of_url
from tcobench.tasks.load.stream import Target, preflight

__all__ = ["API_KEY_ENV", "EndpointLauncher", "api_key_env", "target_of"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
API_KEY_ENV = "TCOBENCH_API_KEY"  # the default key variable (`tcobench run --api-key` sets it for the process)


def api_key_env(config: BenchmarkConfig) -> str | None:
    """NAME of the variable whose value is sent as the Bearer token: only to an endpoint, never to an engine
    tcobench starts; the config's ``engine.api_key_env``, else TCOBENCH_API_KEY when it is set."""
    if config.engine.kind is not EngineKind.endpoint:
        return None
    return config.engine.api_key_env or (API_KEY_ENV if os.environ.get(API_KEY_ENV) else None)


def target_of(config: BenchmarkConfig, base_url: str) -> Target:
    return Target(
        base_url=base_url,
        protocol=config.engine.protocol,
        model=config.model.name,
        chat=config.engine.chat,
        connect_timeout_s=config.engine.connect_timeout_s,
        api_key_env=api_key_env(config),
    )


@register(EngineKind.endpoint)
class EndpointLauncher(EngineLauncher):
    def start(
        self, config: BenchmarkConfig, slots: int, log_dir: Path, model_cache: Path, launch: LaunchOptions
    ) -> RunningEngine:
        assert config.engine.url is not None  # guaranteed by EngineConfig's validator
        info = preflight(target_of(config, config.engine.url))
        return RunningEngine(base_url=config.engine.url, info=info)

    def telemetry_access(self, engine: RunningEngine) -> tuple[Runner | None, bool]:
        host = urlsplit(engine.base_url).hostname or ""
        return None, host not in _LOOPBACK  # this machine's power says nothing about a server elsewhere

    def stop(self, engine: RunningEngine) -> None:
        return None

    def runs_elsewhere(self, config: BenchmarkConfig) -> bool:
        return config.engine.url is None or placement_of_url(config.engine.url) is ClientPlacement.network
