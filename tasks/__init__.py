"""Tasks: one verb per module (load_config, launch_engine, measure, write_results, summarise, ...)."""

from __future__ import annotations

__all__: list[str] = []
