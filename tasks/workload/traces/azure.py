"""Azure LLM inference traces (Azure/AzurePublicDataset AzureLLMInferenceDataset2023.md and 2024.md): CSV with a
header naming ``TIMESTAMP`` (invocation time, ``2023-11-16 18:15:46.6805900``, UTC), ``ContextTokens`` and
``GeneratedTokens``; other columns are left alone."""

from __future__ import annotations

import csv
import datetime as dt
from typing import Any

from tcobench.schemas import AzureRow, TraceFormat
from tcobench.tasks.workload.traces.base import LAYOUTS, Parsed, TraceLayout

__all__ = ["Azure", "timestamp_ns"]

_COLUMNS = tuple(AzureRow.model_fields)  # TIMESTAMP, ContextTokens, GeneratedTokens


def timestamp_ns(text: str) -> int:
    """``YYYY-MM-DD HH:MM:SS[.fraction]`` (UTC; any number of fraction digits, the 2023 traces have 7) in ns since
    the Unix epoch; ValueError naming the value."""
    head, _, fraction = text.strip().partition(".")
    try:
        when = dt.datetime.fromisoformat(head).replace(tzinfo=dt.UTC)
        if fraction and not fraction.isdigit():
            raise ValueError
    except ValueError:
        raise ValueError(f'TIMESTAMP = "{text}": not a time of the form 2023-11-16 18:15:46.6805900') from None
    return int(when.timestamp()) * 1_000_000_000 + int(fraction[:9].ljust(9, "0") or 0)


def _cells(raw: bytes) -> list[str]:
    return next(csv.reader([raw.decode("utf-8-sig")]), [])  # -sig: a header saved with a byte order mark


@LAYOUTS.register(
    TraceFormat.azure,
    format=TraceFormat.azure,
    header=True,
    describe="CSV with header TIMESTAMP,ContextTokens,GeneratedTokens",
)
class Azure(TraceLayout):
    def detect(self, first: bytes) -> bool:
        return any(name in _cells(first) for name in _COLUMNS)

    def context(self, first: bytes) -> Any:
        names = [cell.strip() for cell in _cells(first)]
        missing = [name for name in _COLUMNS if name not in names]
        if missing:
            raise ValueError(f"missing column {', '.join(missing)} (the header has {', '.join(names)})")
        return [names.index(name) for name in _COLUMNS]

    def parse(self, raw: bytes, context: Any) -> Parsed:
        cells = _cells(raw)
        if len(cells) <= max(context):
            raise ValueError(f"{len(cells)} cells; the header names {max(context) + 1} or more")
        row = AzureRow.model_validate(dict(zip(_COLUMNS, (cells[i].strip() for i in context), strict=True)))
        return timestamp_ns(row.TIMESTAMP), row.ContextTokens, row.GeneratedTokens, (), None, None
