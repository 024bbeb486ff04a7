"""tcobench traces: JSON lines of ``timestamp`` (ms) and ``prompt`` or ``messages``, optionally ``output_tokens``:
the ``--dataset`` JSONL with arrival times."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from tcobench.schemas import TcobenchTraceRow, TraceFormat
from tcobench.tasks.workload.traces.base import LAYOUTS, Parsed, TraceLayout

__all__ = ["TcobenchJsonl"]

_ROWS = TypeAdapter(list[TcobenchTraceRow])


@LAYOUTS.register(
    TraceFormat.tcobench,
    format=TraceFormat.tcobench,
    describe="JSON lines with timestamp and prompt or messages",
)
class TcobenchJsonl(TraceLayout):
    def detect(self, first: bytes) -> bool:
        return first.lstrip().startswith(b"{") and (b'"prompt"' in first or b'"messages"' in first)

    def parse(self, raw: bytes, context: Any) -> Parsed:
        return _parsed([TcobenchTraceRow.model_validate_json(raw)])[0]

    def parse_many(self, raws: Sequence[bytes], context: Any) -> list[Parsed]:
        return _parsed(_ROWS.validate_json(b"[" + b",".join(raws) + b"]"))


def _parsed(rows: list[TcobenchTraceRow]) -> list[Parsed]:
    return [(round(row.timestamp * 1e6), None, row.output_tokens, (), row.prompt, row.messages) for row in rows]
