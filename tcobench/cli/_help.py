"""``--help`` laid out for the terminal's width, with nothing cut.

Typer's boxed help cuts a help text that does not fit its column (``--partial-thresh…``) and shows a value
placeholder on plain flags (``<bool>``). This layout instead: the usage line, the command's help in paragraphs, then
each argument and option as ``--name, -n VALUE`` with its help wrapped below or beside it, only at spaces, the
options grouped in their panels (``rich_help_panel``, e.g. run's Engine, Workload, Load...). A plain
flag shows no placeholder (``--chat / --completion``); a default is shown once: the help's own (``[20]``), or else
``[default: X]``. Sub-commands are listed with the first sentence of their help (a group's ``listed_help`` gives it
without loading the command: the root's). Every line fits the width, unless a
single word is longer than the room left for it (then that line is longer; the word is never split).
"""

from __future__ import annotations

import inspect
import re
import shutil
from collections.abc import Iterator
from types import MethodType
from typing import Any

__all__ = ["help_width", "install", "render_help"]

_NAME_COL = 26  # an option's names up to this wide get their help beside them; longer ones get it below
_GAP = 2
_INDENT = 2
_KEEP = "\x00"  # a space the wrapping keeps (a default's "[default: X]"), a plain space once laid out


def help_width() -> int:
    """``COLUMNS`` when set, else the terminal's width (80 when unknown), at most 100 (long lines are hard to read)."""
    width = shutil.get_terminal_size((80, 24)).columns  # COLUMNS first (the stdlib reads it), then the terminal
    return max(40, min(width, 100))


def _plain(text: str) -> str:
    """Help text as shown: rich markup escapes (``\\[``) undone."""
    return text.replace("\\[", "[")


def _wrap(text: str, width: int) -> list[str]:
    """Words of ``text`` in lines of at most ``width`` characters, broken only at spaces."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines or [""]


def _paragraphs(text: str) -> Iterator[tuple[bool, str]]:
    """(verbatim, text) per paragraph: click's ``\\b`` marks a paragraph whose lines are kept as they are."""
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        if paragraph.startswith("\b"):
            yield True, paragraph.lstrip("\b\n")
        else:
            yield False, " ".join(paragraph.split())


def _metavar(param: Any, ctx: Any) -> str:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    if getattr(param, "metavar", None):
        return str(param.metavar)
    shown = param.display_type(ctx) if hasattr(param, "display_type") else None
    label = str(shown or param.type.name).strip("<>").removesuffix(" range")
    if label.startswith("list[") and label.endswith("]"):
        return label[5:-1].upper() + "..."
    return label if "|" in label else label.upper()


def _default(param: Any, ctx: Any, help_text: str) -> str:
    """``[default: X]`` where the option shows its default and its help does not already give one."""
    if not getattr(param, "show_default", False) or getattr(param, "is_flag", False):
        return ""
    value = param.default
    if value is None or value == "" or value == () or value == [] or callable(value):
        return ""
    shown = ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(getattr(value, "value", value))
    if any(shown in given for given in re.findall(r"\[([^\]]*)\]", help_text)):
        return ""  # the help gives it already
    return f"[default:{_KEEP}{shown}]".replace(" ", _KEEP)  # one unit: never wrapped inside


def _names(param: Any, ctx: Any) -> str:
    if param.param_type_name == "argument":
        return str(getattr(param, "metavar", None) or param.name).upper()
    first = ", ".join(sorted(param.opts, key=lambda o: (not o.startswith("--"), o)))
    names = first + (" / " + ", ".join(param.secondary_opts) if param.secondary_opts else "")
    metavar = _metavar(param, ctx)
    return f"{names} {metavar}" if metavar else names


def _entries(rows: list[tuple[str, str]], width: int) -> list[str]:
    """Name and help pairs: help beside a short name, below a long one; wrapped to ``width``."""
    col = min(_NAME_COL, max((len(n) for n, _ in rows), default=0))
    lines: list[str] = []
    for name, text in rows:
        room = width - _INDENT - col - _GAP
        if len(name) <= col and room >= 24:
            wrapped = _wrap(text, room)
            lines.append(" " * _INDENT + name.ljust(col + _GAP) + wrapped[0])
            lines += [" " * (_INDENT + col + _GAP) + w for w in wrapped[1:]]
        else:
            lines.append(" " * _INDENT + name)
            if text:
                lines += [" " * (_INDENT + 4) + w for w in _wrap(text, width - _INDENT - 4)]
    return lines


def _panels(command: Any, ctx: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """(title, name and help rows) of the arguments, then of the options by panel (an option's
    ``rich_help_panel``, in the order the options come; "Options" for those without one)."""
    panels: dict[str, list[tuple[str, str]]] = {}
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    for param in sorted(params, key=lambda p: p.param_type_name != "argument"):  # stable: arguments first
        text = _plain(" ".join((getattr(param, "help", None) or "").split()))
        title = "Arguments" if param.param_type_name == "argument" else getattr(param, "rich_help_panel", None)
        row = (_names(param, ctx), f"{text} {_default(param, ctx, text)}".strip())
        panels.setdefault(title or "Options", []).append(row)
    return list(panels.items())


def render_help(command: Any, ctx: Any, width: int | None = None) -> str:
    """The help of ``command`` (a click command or group) in context ``ctx``, laid out for ``width`` columns."""
    width = width or help_width()
    pieces = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    usage = re.sub(r"\{([\w-]+)\}|(?<=\[)([a-z][\w-]*)(?=\])", lambda m: m.group(0).strip("{}").upper(), pieces)
    lines = [*_wrap("Usage: " + usage, width), ""]
    for verbatim, text in _paragraphs(_plain(command.help or "")):
        lines += text.splitlines() if verbatim else _wrap(text, width)
        lines.append("")
    for title, rows in _panels(command, ctx):
        lines += [f"{title}:", *_entries(rows, width), ""]
    if hasattr(command, "list_commands"):
        rows = []
        listed = getattr(command, "listed_help", None)  # a group that lists its commands without loading them
        for name in command.list_commands(ctx):
            given = listed(ctx, name) if listed is not None else None
            if given is not None:
                rows.append((name, str(given)))
                continue
            sub = command.get_command(ctx, name)
            if sub is not None and not getattr(sub, "hidden", False):
                first = next(_paragraphs(_plain(sub.help or sub.short_help or "")), (False, ""))[1]
                rows.append((name, first))
        if rows:
            lines += ["Commands:", *_entries(rows, width), ""]
    return "\n".join(lines).rstrip().replace(_KEEP, " ") + "\n"


def _format_help(self: Any, ctx: Any, formatter: Any) -> None:
    formatter.write(render_help(self, ctx))


def install(command: Any) -> Any:
    """Give ``command`` and every sub-command below it this help layout; returns ``command``."""
    command.format_help = MethodType(_format_help, command)
    for sub in getattr(command, "commands", {}).values():
        install(sub)
    return command
