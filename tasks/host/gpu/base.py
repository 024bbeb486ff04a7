"""What a GPU vendor module provides, and the registry keyed by ``schemas.GpuVendor``.

A vendor module knows three things: the container options that hand its GPUs to a container
(never privileged), the command that proves inside a container that the GPU is visible, and the
preflight checks of a host (driver, devices, runtime) that ``tcobench doctor`` prints.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from tcobench.schemas import GpuConfig, GpuVendor
from tcobench.tasks._registry import Registry

__all__ = ["Check", "CheckStatus", "GpuOptions", "Vendor", "register", "vendor_for"]


class CheckStatus(StrEnum):
    ok = "ok"
    warn = "warn"
    fail = "fail"
    skip = "skip"


@dataclass(frozen=True)
class Check:
    """One preflight finding: what was checked, how it went, and what to do about it."""

    name: str
    status: CheckStatus
    message: str


@dataclass(frozen=True)
class GpuOptions:
    """Keyword arguments for ``containers.create`` plus what to record about them."""

    create_kwargs: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)  # JSON-able, stored in container_settings


class Vendor(ABC):
    vendor: GpuVendor

    @abstractmethod
    def options(self, gpu: GpuConfig, local: bool, root: Path = Path("/")) -> GpuOptions:
        """Container options for ``gpu``; ``local``: the Docker host is this machine (``root`` is its /)."""

    def visible_command(self) -> list[str] | None:
        """A command that fails inside a container unless the GPU is visible there (None: nothing to check)."""
        return None

    def doctor_checks(self, root: Path, docker_info: Mapping[str, Any], local: bool) -> list[Check]:
        """Preflight checks of the host for this vendor."""
        return []


_REGISTRY: Registry[GpuVendor, Vendor] = Registry("GPU vendor")


def register(vendor: GpuVendor) -> Callable[[type[Vendor]], type[Vendor]]:
    return _REGISTRY.register(vendor, vendor=vendor)


def vendor_for(vendor: GpuVendor) -> Vendor:
    return _REGISTRY[vendor]
