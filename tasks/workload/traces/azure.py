"""Azure LLM inference traces (Azure/AzurePublicDataset AzureLLMInferenceDataset2023.md and 2024.md): CSV with a
header naming ``TIMESTAMP`` (invocation time, ``2023-11-16 18:15:46.6805900``, UTC), ``ContextTokens`` and
``GeneratedTokens``; other columns are left alone."""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
from collections.abc import Sequence
from typing import Any

from tcobench.schemas import AzureRow, TraceFormat
from tcobench.tasks.workload.traces.base import LAYOUTS, Parsed, TraceLayout, row_dicts

__all__ = ["Azure", "timestamp_ns"]

_COLUMNS = tuple(AzureRow.model_fields)  # TIMESTAMP, ContextTokens, GeneratedTokens
# a chunk's rows as dicts, no model per row (docs/dev/bench-log/2026-12-07-trace-parse-2.md)
_ROWS = row_dicts(AzureRow)


def timestamp_ns(text: str) -> int:
    """``YYYY-MM-DD HH:MM:SS[.fraction]`` (UTC; any number of fraction digits, the 2023 traces have 7) in ns since
    the Unix epoch; ValueError naming the value."""
    head, _, fraction = text.strip().partition(".")
    try:
        seconds = _seconds(head)
        if fraction and not fraction.isdigit():
            raise ValueError
    except ValueError:
        raise ValueError(f'TIMESTAMP = "{text}": not a time of the form 2023-11-16 18:15:46.6805900') from None
    return seconds * 1_000_000_000 + int(fraction[:9].ljust(9, "0") or 0)


@functools.lru_cache(maxsize=64)  # rows come in time order: those of one second follow each other
def _seconds(head: str) -> int:
    """``YYYY-MM-DD HH:MM:SS`` (UTC) in whole seconds since the Unix epoch: the rows of one second share it."""
    return int(dt.datetime.fromisoformat(head).replace(tzinfo=dt.UTC).timestamp())


def _cells(raw: bytes) -> list[str]:
    try:
        return next(csv.reader([raw.decode("utf-8-sig")]), [])  # -sig: a header saved with a byte order mark
    except csv.Error as exc:  # a carriage return inside an unquoted cell, a cell over the csv module's limit
        raise ValueError(f"not a CSV row: {str(exc).split(' - ')[0]}") from None


@LAYOUTS.register(
    TraceFormat.azure,
    format=TraceFormat.azure,
    header=True,
    describe="CSV with header TIMESTAMP,ContextTokens,GeneratedTokens",
)
class Azure(TraceLayout):
    def detect(self, first: bytes) -> bool:
        try:
            return any(name in _cells(first) for name in _COLUMNS)
        except ValueError:
            return False

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
        return _parsed([dict(AzureRow.model_validate(_named(cells, context)))])[0]

    def parse_many(self, raws: Sequence[bytes], context: Any) -> list[Parsed]:
        """The chunk read by one CSV reader: a row cut short, or a quoted cell across lines (then the rows are not
        the lines), is left to ``parse``'s messages."""
        try:
            rows = list(csv.reader(io.StringIO(b"".join(raws).decode("utf-8"))))
        except csv.Error as exc:
            raise ValueError("rows to parse one by one") from exc
        last = max(context)
        if len(rows) != len(raws) or any(len(cells) <= last for cells in rows):
            raise ValueError("rows to parse one by one")
        return _parsed(_ROWS.validate_python([_named(cells, context) for cells in rows]))


def _named(cells: list[str], context: list[int]) -> dict[str, str]:
    return dict(zip(_COLUMNS, (cells[i].strip() for i in context), strict=True))


def _parsed(rows: list[dict[str, Any]]) -> list[Parsed]:
    return [
        (timestamp_ns(row["TIMESTAMP"]), row["ContextTokens"], row["GeneratedTokens"], (), None, None) for row in rows
    ]
