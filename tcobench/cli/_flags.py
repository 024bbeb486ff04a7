"""Options made from the flags declared on configuration fields (schemas/flags.py), and the values they set.

``parameters`` turns a model's flags into the parameters of a command (typer reads a function's signature);
``with_parameters`` gives a command function that signature; ``overrides`` nests the given values under the paths of
the fields they set. A command lists its options in ``--help`` panels (``in_panel``), in the order of its signature.
"""

from __future__ import annotations

import copy
import functools
import inspect
import operator
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

import typer
from pydantic import BaseModel

from tcobench.schemas.flags import Flag, flags_of

__all__ = ["Declared", "declared", "in_panel", "overrides", "parameter", "with_parameters"]

F = TypeVar("F", bound=Callable[..., Any])

Declared = tuple[tuple[str, ...], Flag, Any]  # (path of the field, its flag, the field's annotation)


def declared(model: type[BaseModel]) -> dict[str, Declared]:
    """The model's flags by parameter name."""
    found: dict[str, Declared] = {}
    for path, flag, annotation in flags_of(model):
        name = flag.name or path[-1]
        if name in found:
            raise ValueError(f"flag {name!r} is declared twice ({'.'.join(found[name][0])}, {'.'.join(path)})")
        found[name] = (path, flag, annotation)
    return found


def _field_default(model: type[BaseModel], path: tuple[str, ...]) -> Any:
    for name in path[:-1]:
        model = next(a for a in _args(model.model_fields[name].annotation) if isinstance(a, type))
    return model.model_fields[path[-1]].get_default(call_default_factory=True)


def _args(annotation: Any) -> tuple[Any, ...]:
    return getattr(annotation, "__args__", None) or (annotation,)


def _bare(annotation: Any) -> Any:
    """The annotation without the constraints inside it (``Annotated[int, Gt(0)] | None``: ``int | None``)."""
    if get_origin(annotation) is Annotated:
        return _bare(annotation.__origin__)
    if get_origin(annotation) in (Union, UnionType):
        return functools.reduce(operator.or_, [_bare(a) for a in get_args(annotation)])
    return annotation


def parameter(
    name: str, found: Declared, model: type[BaseModel] | None = None, panel: str | None = None
) -> inspect.Parameter:
    """The command parameter of one declared flag: the option's default is the flag's, else (``model`` given) the
    field's default, else None (not given); listed by ``--help`` in ``panel`` (None: with the ungrouped options)."""
    path, flag, annotation = found
    default = flag.default
    if default is ...:
        default = _field_default(model, path) if model is not None else None
    cli_type = flag.cli_type
    if cli_type is None:
        annotation = _bare(annotation)
        cli_type = annotation if default is not None or type(None) in _args(annotation) else annotation | None
    option = typer.Option(
        *flag.decls, help=flag.help, envvar=flag.envvar, show_default=flag.show_default, rich_help_panel=panel
    )
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[cli_type, option]
    )


def in_panel(param: inspect.Parameter, panel: str) -> inspect.Parameter:
    """``param`` (an ``Annotated[T, typer.Option(...)]`` parameter) listed by ``--help`` in ``panel``: a copy of its
    option, so an option type shared by several commands keeps its own panel elsewhere."""
    cli_type, *meta = get_args(param.annotation)
    options = [copy.copy(m) for m in meta]
    for option in options:
        if hasattr(option, "rich_help_panel"):
            option.rich_help_panel = panel
    return param.replace(annotation=Annotated[(cli_type, *options)])


def with_parameters(fn: F, params: Iterable[inspect.Parameter]) -> F:
    """``fn`` (which takes ``**values``) with the signature typer builds its options from."""
    listed = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
    fn.__signature__ = inspect.Signature(listed, return_annotation=None)  # type: ignore[attr-defined]
    fn.__annotations__ = {p.name: p.annotation for p in listed} | {"return": None}
    return fn


def _plain(value: Any) -> Any:
    """A command-line value as the configuration takes it (an enum's value, a path as text, a list as a tuple)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def overrides(flags: Mapping[str, Declared], values: Mapping[str, Any]) -> dict[str, Any]:
    """The given values of the flags that set their field directly, nested by the field's path (None, or an empty
    list of a repeatable option: not given)."""
    out: dict[str, Any] = {}
    for name, (path, flag, _) in flags.items():
        value = values.get(name)
        if flag.derived or value is None or (isinstance(value, list | tuple) and not value):
            continue
        node = out
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = _plain(value)
    return out
