"""Prefect flows: wiring of tasks, nothing else.

The flows load on first use (PEP 562): `tcobench run` needs only the benchmark flow, and importing every flow
(nightly, fleet, images, compaction) cost each command's start-up about a second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcobench import lazy

if TYPE_CHECKING:
    from tcobench.flows._orchestrator import in_process_settings, prefect_enabled, start_api_server, use_settings
    from tcobench.flows.benchmark import BenchmarkResult, benchmark
    from tcobench.flows.compact import compact
    from tcobench.flows.fleet import FleetNight, fleet_host
    from tcobench.flows.nightly import NightlyResult, nightly
    from tcobench.flows.rebuild_images import ImageResult, rebuild_images

_HOMES = {
    "prefect_enabled": "_orchestrator",
    "start_api_server": "_orchestrator",
    "use_settings": "_orchestrator",
    "in_process_settings": "_orchestrator",
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
    "in_process_settings",
    "nightly",
    "prefect_enabled",
    "rebuild_images",
    "start_api_server",
    "use_settings",
]


__getattr__, __dir__ = lazy.names(__name__, _HOMES, __all__)
lazy.keep_functions(__name__, _HOMES)
