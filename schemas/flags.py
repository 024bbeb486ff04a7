"""Command-line options declared on the configuration fields they set (``Annotated[T, Flag(...)]``).

A field's ``Flag`` says how the command line spells it: the parameter name, the option's declarations, its help,
its environment variable and the type the command line parses. ``flags_of`` lists a model's flags with the path
of the field each one sets; the CLI builds its options and its overrides from that list (cli/_flags.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

__all__ = ["Flag", "flags_of"]


@dataclass(frozen=True)
class Flag:
    """How the command line sets the annotated field.

    ``name`` is the parameter's name (``--name`` with dashes, unless ``decls`` spells the option, e.g.
    ``("--chat/--completion",)``); empty: the field's name. ``cli_type`` is the type the command line parses
    (default: the field's type, optional); ``default`` what the option holds when not given; ``...``: the field's
    default where the command takes the defaults from the model (compare), else None (run: the file, the preset or
    the field's default decide). ``derived``: the command computes the field's value from this
    option and others (cli/run.py says how), instead of setting the field to the option's value. ``panel``: the
    group ``--help`` lists the option in; empty: the command's default for the field's section (cli/run.py).
    """

    help: str
    name: str = ""
    decls: tuple[str, ...] = ()
    cli_type: Any = None
    envvar: str | None = None
    show_default: bool = True
    default: Any = ...
    derived: bool = False
    panel: str = ""


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (``X | None`` gives X)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if get_origin(annotation) in (Union, UnionType):
        return [m for arg in get_args(annotation) for m in _models(arg)]
    return []


def flags_of(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Flag, Any]]:
    """(path of the field, its Flag, the field's annotation) for every flag on ``model`` and the models below it,
    in declaration order."""
    for name, field in model.model_fields.items():
        path = (*prefix, name)
        for meta in field.metadata:
            if isinstance(meta, Flag):
                yield path, meta, field.annotation
        for sub in _models(field.annotation):
            yield from flags_of(sub, path)
