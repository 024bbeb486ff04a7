"""What a trace format module gives the reader: detection from the first line, the header's context, one parsed row.

A format module raises ``ValueError`` (or pydantic's ``ValidationError``) naming the field; the reader adds the file
and the line. Pydantic's first error becomes the message: a missing field is a missing column.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Annotated, Any, ClassVar, TypeAlias

from pydantic import BaseModel, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

from tcobench.schemas import TraceFormat, TraceMessage
from tcobench.tasks._registry import Registry

__all__ = ["LAYOUTS", "Parsed", "TraceLayout", "problem", "row_dicts"]


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


def row_dicts(model: type[BaseModel], *, applied: Collection[str] = ()) -> TypeAdapter[list[dict[str, Any]]]:
    """Validates a JSON array (or a list) of ``model``'s rows into plain dicts: the model's own fields (types, bounds,
    strictness, defaults) and config (``extra``, ``strict``), without building a model instance per row (the reader's
    cost per line: docs/dev/bench-log/2026-12-07-trace-parse-2.md). The model's validators are not run: ValueError
    when it has one that is not named in ``applied`` (the caller applies those to each row itself)."""
    decorators = model.__pydantic_decorators__
    validators = [
        *decorators.validators,
        *decorators.field_validators,
        *decorators.root_validators,
        *decorators.model_validators,
    ]
    skipped = sorted(set(validators) - set(applied))
    if skipped:
        raise ValueError(f"{model.__name__} has validators ({', '.join(skipped)}): validate its rows as models")
    typed_dict: Any = TypedDict  # built from the model's fields, so they are declared once, in schemas/
    fields = {name: Annotated[info.annotation, info] for name, info in model.model_fields.items()}
    row = with_config(model.model_config)(typed_dict(f"{model.__name__}Fields", fields))
    rows: Any = list[row]  # type: ignore[valid-type]  # a type made at run time
    return TypeAdapter(rows)


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
