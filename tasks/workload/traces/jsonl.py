"""tcobench traces: JSON lines of ``timestamp`` (ms) and ``prompt`` or ``messages``, optionally ``output_tokens``:
the ``--dataset`` JSONL with arrival times."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tcobench.schemas import TcobenchTraceRow, TraceFormat
from tcobench.tasks.workload.traces.base import LAYOUTS, Parsed, TraceLayout, row_dicts

__all__ = ["TcobenchJsonl"]

# a chunk's rows as dicts, no model per row (docs/dev/bench-log/2026-12-07-trace-parse-2.md); parse_many applies
# the model's one validator, TcobenchTraceRow.one_of, to each
_ROWS = row_dicts(TcobenchTraceRow, applied=("_prompt_or_messages",))


@LAYOUTS.register(
    TraceFormat.tcobench,
    format=TraceFormat.tcobench,
    describe="JSON lines with timestamp and prompt or messages",
)
class TcobenchJsonl(TraceLayout):
    def detect(self, first: bytes) -> bool:
        return first.lstrip().startswith(b"{") and (b'"prompt"' in first or b'"messages"' in first)

    def parse(self, raw: bytes, context: Any) -> Parsed:
        return _parsed([dict(TcobenchTraceRow.model_validate_json(raw))])[0]

    def parse_many(self, raws: Sequence[bytes], context: Any) -> list[Parsed]:
        rows = _ROWS.validate_json(b"[" + b",".join(raws) + b"]")
        for row in rows:
            TcobenchTraceRow.one_of(row["prompt"], row["messages"])
        return _parsed(rows)


def _parsed(rows: list[dict[str, Any]]) -> list[Parsed]:
    return [
        (round(row["timestamp"] * 1e6), None, row["output_tokens"], (), row["prompt"], row["messages"]) for row in rows
    ]
