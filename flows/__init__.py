"""Prefect flows: wiring of tasks, nothing else."""

from __future__ import annotations

from ._orchestrator import prefect_enabled, start_api_server
from .benchmark import BenchmarkResult, benchmark
from .compact import compact
from .fleet import FleetNight, fleet_host
from .nightly import NightlyResult, nightly
from .rebuild_images import ImageResult, rebuild_images

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
