"""Prefect flows: wiring of tasks, nothing else.

The flows load on first use (PEP 562): `tcobench run` needs only the benchmark flow, and importing every flow
(nightly, fleet, images, compaction) cost each command's start-up about a second.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tcobench.flows._orchestrator import prefect_enabled, start_api_server
    from tcobench.flows.benchmark import BenchmarkResult, benchmark
    from tcobench.flows.compact import compact
    from tcobench.flows.fleet import FleetNight, fleet_host
    from tcobench.flows.nightly import NightlyResult, nightly
    from tcobench.flows.rebuild_images import ImageResult, rebuild_images

_HOMES = {
    "prefect_enabled": "_orchestrator",
    "start_api_server": "_orchestrator",
    "BenchmarkResult": "benchmark",
    "benchmark": "benchmark",
    "compact": "compact",
    "FleetNight": "fleet",
    "fleet_host": "fleet",
    "NightlyResult": "nightly",
    "nightly": "nightly",
    "ImageResult": "rebuild_images",
    "rebuild_images": "rebuild_images",
}

__all__ = [
    "BenchmarkResult",
    "FleetNight",
    "ImageResult",
    "NightlyResult",
    "benchmark",
    "compact",
    "fleet_host",
    "nightly",
    "prefect_enabled",
    "rebuild_images",
    "start_api_server",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


class _Flows(types.ModuleType):
    """Importing a submodule binds it on its package: ``tcobench.flows.benchmark`` would then be the module
    benchmark.py, not its flow. Keep those names for the flows, as the eager imports did."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Flows
