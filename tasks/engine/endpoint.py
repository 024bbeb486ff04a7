"""An engine the user already runs: nothing to start or stop, only a preflight check."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from pydantic import SecretStr

from tcobench.errors import ConfigError
from tcobench.schemas import BenchmarkConfig, ClientPlacement, EngineKind
from tcobench.settings import current, secret_named
from tcobench.tasks.engine.base import EngineLauncher, LaunchOptions, Runner, RunningEngine, register
from tcobench.tasks.load.placement import placement_of_url
from tcobench.tasks.load.stream import Target, preflight

__all__ = ["EndpointLauncher", "api_key_of", "target_of"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def api_key_of(config: BenchmarkConfig, given: SecretStr | None = None) -> SecretStr | None:
    """The key sent as the Bearer token: only to an endpoint, never to an engine tcobench starts. The variable the
    config's ``engine.api_key_env`` names (read now, never stored; ConfigError if unset), else ``given`` (a
    command's Settings.api_key: `tcobench run --api-key`, TCOBENCH_API_KEY), else this process's TCOBENCH_API_KEY."""
    if config.engine.kind is not EngineKind.endpoint:
        return None
    name = config.engine.api_key_env
    if name is None:
        return given if given is not None else current().api_key
    key = secret_named(name)
    if key is None:
        raise ConfigError(f"engine.api_key_env: the environment variable {name} is not set or empty")
    return key


def target_of(config: BenchmarkConfig, base_url: str, api_key: SecretStr | None = None) -> Target:
    """Where the requests of ``config`` go; ``api_key``: as ``api_key_of``'s ``given``."""
    return Target(
        base_url=base_url,
        protocol=config.engine.protocol,
        model=config.model.name,
        chat=config.engine.chat,
        connect_timeout_s=config.engine.connect_timeout_s,
        api_key=api_key_of(config, api_key),
    )


@register(EngineKind.endpoint)
class EndpointLauncher(EngineLauncher):
    def start(
        self, config: BenchmarkConfig, slots: int, log_dir: Path, model_cache: Path, launch: LaunchOptions
    ) -> RunningEngine:
        assert config.engine.url is not None  # guaranteed by EngineConfig's validator
        info = preflight(target_of(config, config.engine.url, launch.api_key))
        return RunningEngine(base_url=config.engine.url, info=info)

    def telemetry_access(self, engine: RunningEngine) -> tuple[Runner | None, bool]:
        host = urlsplit(engine.base_url).hostname or ""
        return None, host not in _LOOPBACK  # this machine's power says nothing about a server elsewhere

    def stop(self, engine: RunningEngine) -> None:
        return None

    def runs_elsewhere(self, config: BenchmarkConfig) -> bool:
        return config.engine.url is None or placement_of_url(config.engine.url) is ClientPlacement.network
