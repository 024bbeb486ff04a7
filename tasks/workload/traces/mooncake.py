"""Mooncake traces (kvcache-ai/Mooncake FAST25-release/README.md): JSON lines of ``timestamp`` (ms since the
first request), ``input_length``, ``output_length`` and ``hash_ids`` (one id per block of MOONCAKE_BLOCK_TOKENS
input tokens; equal ids, equal blocks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tcobench.schemas import MooncakeRow, TraceFormat
from tcobench.tasks.workload.traces.base import LAYOUTS, Parsed, TraceLayout, row_dicts

__all__ = ["Mooncake"]

# a chunk's rows as dicts, no model per row (docs/dev/bench-log/2026-12-07-trace-parse-2.md)
_ROWS = row_dicts(MooncakeRow)
_KEYS = ("input_length", "output_length", "hash_ids")  # any one: a line that lacks another is a missing column


@LAYOUTS.register(
    TraceFormat.mooncake,
    format=TraceFormat.mooncake,
    describe="JSON lines with timestamp, input_length, output_length, hash_ids",
)
class Mooncake(TraceLayout):
    def detect(self, first: bytes) -> bool:
        return first.lstrip().startswith(b"{") and any(f'"{name}"'.encode() in first for name in _KEYS)

    def parse(self, raw: bytes, context: Any) -> Parsed:
        return _parsed([dict(MooncakeRow.model_validate_json(raw))])[0]

    def parse_many(self, raws: Sequence[bytes], context: Any) -> list[Parsed]:
        return _parsed(_ROWS.validate_json(b"[" + b",".join(raws) + b"]"))


def _parsed(rows: list[dict[str, Any]]) -> list[Parsed]:
    return [
        (round(row["timestamp"] * 1e6), row["input_length"], row["output_length"], row["hash_ids"], None, None)
        for row in rows
    ]
