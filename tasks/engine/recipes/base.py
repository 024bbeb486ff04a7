"""A recipe turns (config, slots, address) into a container plan for one engine, and knows its health check,
its preparation once healthy (an Ollama model pull), how it names itself, and its smoke test.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker

from tcobench.schemas import BenchmarkConfig, ContainerEngine, Protocol
from tcobench.tasks._registry import Registry
from tcobench.tasks.engine.base import LaunchOptions
from tcobench.tasks.load.protocols import EngineInfo

__all__ = ["ContainerPlan", "Recipe", "SmokeAddress", "recipe_for", "register"]


@dataclass(frozen=True)
class ContainerPlan:
    """How to create the engine's container."""

    command: list[str]
    health_path: str
    environment: dict[str, str] = field(default_factory=dict)
    volumes: dict[str, dict[str, str]] = field(default_factory=dict)  # docker SDK form: {source: {bind, mode}}
    settings: dict[str, Any] = field(default_factory=dict)  # the engine's pinned settings (engine_settings)
    model_digest: str | None = None
    serving: dict[str, Any] = field(default_factory=dict)  # the serving configuration's fields (schemas.ServingConfig)


@dataclass(frozen=True)
class SmokeAddress:
    """Where a smoke-test server may listen on the Docker host and how to reach it."""

    bind: str
    connect: str
    port: int


class Recipe(ABC):
    engine: ContainerEngine
    protocol: Protocol

    @abstractmethod
    def plan(
        self, config: BenchmarkConfig, slots: int, bind: str, port: int, model_cache: Path, local: bool
    ) -> ContainerPlan:
        """The container for this run; EngineError when something it needs is missing."""

    def prepare(self, config: BenchmarkConfig, base_url: str, launch: LaunchOptions) -> dict[str, Any]:
        """Once healthy: get the model ready; returns settings to record (e.g. where the model sits)."""
        return {}

    @abstractmethod
    def identify(
        self, config: BenchmarkConfig, base_url: str, labels: Mapping[str, str], plan: ContainerPlan
    ) -> EngineInfo:
        """Who the engine says it is, serving the configured model; EngineError otherwise."""

    @abstractmethod
    def smoke(self, client: docker.DockerClient, image: str, address: SmokeAddress) -> str:
        """Start the image's engine and return the version it reports; ImageError otherwise."""


_REGISTRY: Registry[ContainerEngine, Recipe] = Registry("engine recipe")


def register(engine: ContainerEngine, protocol: Protocol) -> Callable[[type[Recipe]], type[Recipe]]:
    return _REGISTRY.register(engine, engine=engine, protocol=protocol)


def recipe_for(engine: ContainerEngine) -> Recipe:
    return _REGISTRY[engine]
