"""Prefect flows: wiring of tasks, nothing else."""

from __future__ import annotations

from .benchmark import BenchmarkResult, benchmark

__all__ = ["BenchmarkResult", "benchmark"]
