"""tcobench traces: JSON lines of ``timestamp`` (ms) and ``prompt`` or ``messages``, optionally ``output_tokens``:
the ``--dataset`` JSONL with arrival times."""

from __future__ import annotations

from typing import Any

from tcobench.schemas import TcobenchTraceRow, TraceFormat
from tcobench.tasks.workload.traces.base import LAYOUTS, Parsed, TraceLayout

__all__ = ["TcobenchJsonl"]


@LAYOUTS.register(
    TraceFormat.tcobench,
    format=TraceFormat.tcobench,
    describe="JSON lines with timestamp and prompt or messages",
)
class TcobenchJsonl(TraceLayout):
    def detect(self, first: bytes) -> bool:
        return first.lstrip().startswith(b"{") and (b'"prompt"' in first or b'"messages"' in first)

    def parse(self, raw: bytes, context: Any) -> Parsed:
        row = TcobenchTraceRow.model_validate_json(raw)
        return Parsed(round(row.timestamp * 1e6), None, row.output_tokens, (), row.prompt, row.messages)
