"""The sampler interface and its registry keyed by ``schemas.SamplerKind``.

A sampler reads one instant from every device it covers; ``tasks.host.telemetry.session`` calls it at a
fixed rate in a background thread and turns the readings into TelemetryRecord rows.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcobench.schemas import SamplerKind
from tcobench.tasks._registry import Registry

__all__ = ["Reading", "Runner", "Sampler", "SamplerUnavailable", "pick_devices", "register", "sampler_class"]

Runner = Callable[[list[str]], str]  # runs a command (e.g. inside the engine container) and returns its stdout


class SamplerUnavailable(Exception):
    """This host has no such power source; the message says why (it ends up in the run row)."""


@dataclass(frozen=True)
class Reading:
    """One device at one instant, raw units (None where the source has no such value)."""

    device_index: int
    device_uuid: str | None = None
    power_mw: int | None = None
    energy_mj: int | None = None
    util_pct: float | None = None
    mem_used_bytes: int | None = None
    sm_clock_mhz: int | None = None
    temperature_c: float | None = None
    power_limit_mw: int | None = None


class Sampler(ABC):
    kind: SamplerKind
    source: str  # value of TelemetryRecord.source

    @abstractmethod
    def __init__(self, devices: tuple[int, ...] | None, runner: Runner | None = None) -> None:
        """Open the source; raise SamplerUnavailable with the reason if this host has none.

        ``runner`` runs a command where the engine runs (inside its container) and returns its stdout;
        only command-line samplers use it."""

    @abstractmethod
    def read(self) -> list[Reading]:
        """One reading per device; must not raise for a single failed field (use None)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Provenance for the RunRecord (gpu_vendor, gpu_name, gpu_count, gpu_uuids, driver_version, ...)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the source."""


_REGISTRY: Registry[SamplerKind, type[Sampler]] = Registry("telemetry sampler", instances=False)


def register(kind: SamplerKind, source: str) -> Callable[[type[Sampler]], type[Sampler]]:
    return _REGISTRY.register(kind, kind=kind, source=source)


def sampler_class(kind: SamplerKind) -> type[Sampler]:
    return _REGISTRY[kind]


def pick_devices(source: str, visible: int, devices: tuple[int, ...] | None) -> tuple[int, ...]:
    """The device indices to sample (all visible ones by default); SamplerUnavailable naming the bad ones."""
    indices = devices if devices is not None else tuple(range(visible))
    if visible == 0 or any(not 0 <= i < visible for i in indices):
        raise SamplerUnavailable(f"{source}: {visible} device(s) visible; asked for indices {list(indices)}")
    return indices
