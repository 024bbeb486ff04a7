"""The formats `tcobench export` writes (tasks/export)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["EXPORT_TABLES", "ExportFormat"]


class ExportFormat(StrEnum):
    """An export format: one module of tasks/export writes each."""

    benchmark_report = "benchmark-report"  # llm-d's benchmark_report v0.2, one JSON document per run
    parquet = "parquet"  # the store's tables of the selected runs, one Parquet file per table
    csv = "csv"  # the same tables as CSV (list columns as JSON text)


# The store's tables a parquet or csv export writes, each the rows of the selected runs with every stored column in
# raw units: what the views' figures are computed from, so a store that takes these rows back computes the same ones.
EXPORT_TABLES = ("runs", "requests", "telemetry", "engine_metrics")
