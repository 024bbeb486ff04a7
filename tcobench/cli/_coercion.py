"""Option values that need no conversion skip typer's pydantic adapter.

Typer (>= 0.2x) converts each option's value with a pydantic ``TypeAdapter`` that it builds, per option, on the
first value it converts, even a default of ``None``. A command with a dozen options then builds a dozen adapters
before it starts, most of them for values that need no conversion (docs/dev/performance.md#small-store).
``defer_coercion`` gives each option of a command a converter that returns such values as they are: ``None``
(what typer's own converter returns for it, without using its adapter), and a ``str``, ``int`` or ``float`` that is
already of the option's type, within the option's ``min`` and ``max``, when it has no ``parser`` (what the adapter
would return unchanged). Any other value (a number given as text, an enum, a path, a list) goes to typer's
converter, built on first use, with typer's own errors. A typer without this converter (``_runtime_param``) is
left as it is. A flag not given on the command line (``--help``) comes as ``None``, which typer's converter
returns unchanged too.
"""

from __future__ import annotations

from typing import Any

__all__ = ["defer_coercion"]

_PLAIN = (str, int, float)


class _Deferred:
    """Typer's ``RuntimeParam`` contract (``coerce(value, param, ctx)``), its adapter built only when needed."""

    __slots__ = ("_plain", "_real")

    def __init__(self, plain: tuple[type, Any, Any] | None) -> None:
        self._plain = plain  # (the option's type, its min, its max) where a value of that type may need no conversion
        self._real: Any = None

    def _as_is(self, value: Any) -> bool:
        if self._plain is None:
            return False
        kind, low, high = self._plain
        return type(value) is kind and (low is None or value >= low) and (high is None or value <= high)

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        if self._as_is(value):
            return value
        if self._real is None:
            from typer._coercion import build_runtime_param

            self._real = build_runtime_param(param.type_descriptor)
        return self._real.coerce(value, param=param, ctx=ctx)


def _plain_type(param: Any) -> tuple[type, Any, Any] | None:
    descriptor = param.type_descriptor
    info = descriptor.parameter_info
    if descriptor.annotation not in _PLAIN or param.multiple or param.nargs != 1:
        return None
    if getattr(info, "parser", None) is not None or descriptor.file_annotation is not None:
        return None
    return descriptor.annotation, getattr(info, "min", None), getattr(info, "max", None)


def _defer(param: Any) -> None:
    if getattr(param, "_runtime_param", 1) is None and hasattr(param, "type_descriptor"):
        param._runtime_param = _Deferred(_plain_type(param))


def defer_coercion(command: Any) -> Any:
    """Give ``command``'s options, its ``--help`` (made on first use) and those of every sub-command below it the
    deferred converter; returns ``command``. An option whose converter typer already built keeps it."""
    for param in getattr(command, "params", ()):
        _defer(param)
    if hasattr(command, "get_help_option") and not hasattr(command.get_help_option, "deferred"):
        made = command.get_help_option

        def get_help_option(ctx: Any) -> Any:
            option = made(ctx)
            if option is not None:
                _defer(option)
            return option

        get_help_option.deferred = True  # type: ignore[attr-defined]
        command.get_help_option = get_help_option
    for sub in getattr(command, "commands", {}).values():
        defer_coercion(sub)
    return command
