"""Arrow schemas derived from the pydantic record models (never written by hand)."""

from __future__ import annotations

import types
from enum import Enum
from typing import Any, Union, get_args, get_origin

import pyarrow as pa
from pydantic import BaseModel

__all__ = ["arrow_schema", "arrow_type"]

_SCALARS: dict[type, pa.DataType] = {
    bool: pa.bool_(),
    int: pa.int64(),
    float: pa.float64(),
    str: pa.string(),
}


def arrow_type(annotation: Any) -> tuple[pa.DataType, bool]:
    """Map one field annotation to (Arrow type, nullable)."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union {annotation!r}")
        inner, _ = arrow_type(args[0])
        return inner, True
    if origin is list:
        (item,) = get_args(annotation)
        inner, _ = arrow_type(item)
        return pa.list_(inner), False
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return pa.string(), False
    if annotation in _SCALARS:
        return _SCALARS[annotation], False
    raise TypeError(f"no Arrow type for {annotation!r}")


def arrow_schema(model: type[BaseModel]) -> pa.Schema:
    """Arrow schema of a record model; field descriptions travel as field metadata."""
    fields = []
    for name, info in model.model_fields.items():
        dtype, nullable = arrow_type(info.annotation)
        meta = {"description": info.description or ""}
        fields.append(pa.field(name, dtype, nullable=nullable, metadata=meta))
    return pa.schema(fields)
