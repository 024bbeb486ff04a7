"""What a trace format module gives the reader: detection from the first line, the header's context, one parsed row.

A format module raises ``ValueError`` (or pydantic's ``ValidationError``) naming the field; the reader adds the file
and the line. Pydantic's first error becomes the message: a missing field is a missing column.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar, TypeAlias

from pydantic import ValidationError

from tcobench.schemas import TraceFormat, TraceMessage
from tcobench.tasks._registry import Registry

__all__ = ["LAYOUTS", "Parsed", "TraceLayout", "problem"]


# One row of a trace in any format, a plain tuple (a reader builds one per line): its arrival on the trace's own clock
# (ns), input tokens, output tokens (None: not recorded), hash ids, prompt and messages (None: synthetic).
Parsed: TypeAlias = tuple[int, int | None, int | None, tuple[int, ...], str | None, tuple[TraceMessage, ...] | None]


class TraceLayout:
    """A trace format. ``header``: the first line names the columns (CSV) rather than being a request."""

    format: ClassVar[TraceFormat]
    header: ClassVar[bool] = False
    describe: ClassVar[str]  # how a user recognises the format: its columns

    def detect(self, first: bytes) -> bool:
        """Whether the file's first non-blank line is of this format."""
        raise NotImplementedError

    def context(self, first: bytes) -> Any:
        """What parsing the rows needs from the first line (a CSV header's column positions); ValueError naming a
        missing column."""
        return None

    def parse(self, raw: bytes, context: Any) -> Parsed:
        """One line; ValueError or ValidationError naming the field."""
        raise NotImplementedError

    def parse_many(self, raws: Sequence[bytes], context: Any) -> list[Parsed]:
        """Many lines at once (a JSON format validates them in one call, in pydantic's compiled code); ValueError or
        ValidationError when any is bad (the reader then parses them one by one to name the first)."""
        return [self.parse(raw, context) for raw in raws]


LAYOUTS: Registry[TraceFormat, TraceLayout] = Registry("trace format")


def problem(exc: ValueError) -> str:
    """The first thing wrong with a row, in one phrase: ``missing column output_length``, ``input_length -5: ...``."""
    if not isinstance(exc, ValidationError):
        return str(exc)
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    if error["type"] == "missing":
        return f"missing column {where}"
    message = error["msg"].removeprefix("Value error, ")
    if not where:
        return message
    given = error.get("input")
    if isinstance(given, str):
        shown = given if len(given) <= 40 else given[:40] + "..."
    else:
        shown = json.dumps(given) if isinstance(given, int | float | bool) or given is None else "..."
    return f"{where} = {shown}: {message}"
