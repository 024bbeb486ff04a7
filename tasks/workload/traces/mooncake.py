"""Mooncake traces (kvcache-ai/Mooncake FAST25-release/README.md): JSON lines of ``timestamp`` (ms since the
first request), ``input_length``, ``output_length`` and ``hash_ids`` (one id per block of MOONCAKE_BLOCK_TOKENS
input tokens; equal ids, equal blocks)."""

from __future__ import annotations

from typing import Any

from tcobench.schemas import MooncakeRow, TraceFormat
from tcobench.tasks.workload.traces.base import LAYOUTS, Parsed, TraceLayout

__all__ = ["Mooncake"]


@LAYOUTS.register(
    TraceFormat.mooncake,
    format=TraceFormat.mooncake,
    describe="JSON lines with timestamp, input_length, output_length, hash_ids",
)
class Mooncake(TraceLayout):
    def detect(self, first: bytes) -> bool:
        return first.lstrip().startswith(b"{") and b'"input_length"' in first

    def parse(self, raw: bytes, context: Any) -> Parsed:
        row = MooncakeRow.model_validate_json(raw)
        return Parsed(round(row.timestamp * 1e6), row.input_length, row.output_length, row.hash_ids)
