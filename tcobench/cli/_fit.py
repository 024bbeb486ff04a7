"""Tables that fit the terminal, and numbers printed with a sensible precision.

A table is laid out for the terminal's width (``COLUMNS`` when set, else what the terminal says, else 80):

1. as it is, when its natural width fits;
2. else with its headers and text cells wrapped (numbers never wrap: a number's cell keeps its full width);
3. else without its low-priority columns (``Col.drop``, lowest first), with a note naming what was left out;
4. else as a vertical record view: one small ``column  value`` table per row.

A number is never cut: every column is at least as wide as its longest number (or longest word, for text). A name
or identifier is never broken mid-word either: text wraps at spaces and after separators (``, - / : | _ . =``), and a
wrapped column is at least as wide as its longest piece between them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tcobench.cli._common import out

__all__ = ["Col", "fits", "number", "print_table", "terminal_width"]

_TEXT_MIN = 12  # a wrapped text column is never narrower than this (or its longest word, when shorter)
# a word of text that is a number (USD, percent, ratio, a range): a wrapped column is at least as wide as each
# where a wrapped cell may break besides spaces: after one of these separators
_PIECES = re.compile(r"[^\s,\-/:|_.=]*[,\-/:|_.=]+|[^\s,\-/:|_.=]+")
_NAME_PIECES = re.compile(r"[^_]*_+|[^_]+")  # a header that is a column name (run_id) may break after its "_"
_NUMBER = re.compile(r"^[(\[$~+\-]*\$?[\d.,]*\d[\d.,]*(%|x|ms|s|W|h)?[)\],;:]*$")


def terminal_width(console: Console = out) -> int:
    """``COLUMNS`` when it is set (read now, not when the console was made), else the console's width."""
    from tcobench.settings import terminal_columns

    columns = terminal_columns()
    return int(columns) if columns.isdigit() and int(columns) > 0 else console.width


def number(value: object) -> str:
    """A value for a table: numbers to about 4 significant digits (never exponent below 1e15, never '-0');
    integers in full with thousands separators; None as '-'."""
    if value is None:
        return "-"
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    size = abs(value)
    if size == 0:
        return "0"
    if size >= 1000:
        return f"{value:,.0f}"
    if size >= 1:
        digits = 3 - int(math.floor(math.log10(size)))  # 4 significant digits: 1.234, 12.35, 123.5
        return f"{value:,.{digits}f}".rstrip("0").rstrip(".") if digits else f"{value:,.0f}"
    if size >= 1e-4:
        return f"{value:.4g}"
    return f"{value:.3e}"


@dataclass(frozen=True)
class Col:
    """A table column: its header, alignment, whether it is text that may wrap (never a number), and its drop
    priority (0: always shown; higher: dropped first when the table does not fit)."""

    name: str
    justify: Literal["left", "right"] = "right"
    wrap: bool = False
    drop: int = 0


def _plain(cell: str) -> str:
    return Text.from_markup(cell).plain


def _widths(cols: Sequence[Col], rows: Sequence[Sequence[str]]) -> tuple[list[int], list[int]]:
    """(least, natural) content width of each column: a number or a header word never splits."""
    least, natural = [], []
    for i, col in enumerate(cols):
        cells = [_plain(r[i]) for r in rows]
        lines = [line for c in cells for line in c.splitlines()] or [""]
        header_word = max((len(p) for w in col.name.split() for p in _NAME_PIECES.findall(w)), default=1)
        if col.wrap:
            words = [w for c in cells for w in c.split()]
            number_word = max((len(w) for w in words if _NUMBER.match(w)), default=1)
            word = max((len(w) for w in words), default=1)
            piece = max((len(p) for w in words for p in _PIECES.findall(w)), default=1)
            need = max(header_word, number_word, piece, min(word, _TEXT_MIN))
        else:
            need = max(header_word, *(len(line) for line in lines))
        least.append(need)
        natural.append(max(need, len(col.name), *(len(line) for line in lines)))
    return least, natural


def _overhead(n: int) -> int:
    return 3 * n + 1  # a box edge each side, a separator between columns, one space of padding each side


def _layout(least: list[int], natural: list[int], width: int) -> list[int] | None:
    """Column widths that add up to at most ``width`` (with the borders), least first, then grown towards natural;
    None when even the least widths do not fit."""
    room = width - _overhead(len(least)) - sum(least)
    if room < 0:
        return None
    widths = list(least)
    while room > 0:
        short = [i for i, w in enumerate(widths) if w < natural[i]]
        if not short:
            break
        for i in short:
            if room == 0:
                break
            widths[i] += 1
            room -= 1
    return widths


def fits(cols: Sequence[Col], rows: Sequence[Sequence[str]], width: int, wrapped: bool = True) -> bool:
    """Whether the table fits ``width`` with its headers and text wrapped and no number cut (``wrapped=False``:
    at its natural width, nothing wrapped)."""
    least, natural = _widths(cols, rows)
    if not wrapped:
        return sum(natural) + _overhead(len(cols)) <= width
    return _layout(least, natural, width) is not None


def _break(cell: str, width: int) -> str:
    """A plain text cell wrapped to ``width`` at spaces and after separators (never inside a piece that fits); a
    cell with markup is left to rich, which wraps at spaces."""
    if _plain(cell) != cell or all(len(line) <= width for line in cell.splitlines()):
        return cell
    lines: list[str] = []
    for text_line in cell.splitlines():
        line = ""
        for word in text_line.split():
            pieces = [word] if len(word) <= width else _PIECES.findall(word)
            for k, piece in enumerate(pieces):
                joint = " " if k == 0 and line else ""
                if line and len(line) + len(joint) + len(piece) > width:
                    lines.append(line)
                    line, joint = "", ""
                line += joint + piece
        lines.append(line)
    return "\n".join(lines)


def _header(name: str, width: int | None) -> str:
    """A header for a column ``width`` wide: rich wraps it at its spaces; a word wider than that (a column name such
    as usd_per_m_output_tokens) is broken after its "_" here."""
    if width is None or all(len(w) <= width for w in name.split()):
        return name
    words = []
    for word in name.split():
        lines, line = [], ""
        for piece in _NAME_PIECES.findall(word) if len(word) > width else [word]:
            if line and len(line) + len(piece) > width:
                lines.append(line)
                line = ""
            line += piece
        words.append("\n".join([*lines, line]))
    return " ".join(words)


def _table(title: str | None, cols: Sequence[Col], rows: Sequence[Sequence[str]], widths: list[int] | None) -> Table:
    if widths is not None:
        rows = [[_break(c, widths[i]) if cols[i].wrap else c for i, c in enumerate(r)] for r in rows]
    table = Table(title=title, header_style="bold")
    for i, col in enumerate(cols):
        table.add_column(
            # a header wraps at its spaces, even over numbers
            Text(_header(col.name, widths[i] if widths else None), no_wrap=False, overflow="fold"),
            justify=col.justify,
            no_wrap=not col.wrap,
            overflow="fold",
            width=widths[i] if widths else None,
        )
    for row in rows:
        table.add_row(*row)
    return table


def _vertical(title: str | None, cols: Sequence[Col], rows: Sequence[Sequence[str]], width: int) -> list[Table]:
    """One ``column | value`` table per row; values wrap only at spaces unless a word is wider than the terminal."""
    label = max(len(c.name) for c in cols)
    value = max(8, width - _overhead(2) - label)
    tables = []
    for k, row in enumerate(rows, 1):
        table = Table(title=f"{title or 'row'} ({k} of {len(rows)})", show_header=False)
        table.add_column("column", style="bold", no_wrap=True, width=label)
        table.add_column("value", overflow="fold", width=value)
        for col, cell in zip(cols, row, strict=True):
            table.add_row(escape(col.name), _break(cell, value))
        tables.append(table)
    return tables


def print_table(title: str | None, cols: Sequence[Col], rows: Sequence[Sequence[str]], console: Console = out) -> None:
    """Print rows (cells already formatted; rich markup allowed) as a table that fits the terminal (module doc)."""
    width = terminal_width(console)
    cols, table_rows = list(cols), [list(r) for r in rows]
    dropped: list[str] = []
    while True:
        least, natural = _widths(cols, table_rows)
        if sum(natural) + _overhead(len(cols)) <= width:
            console.print(_table(title, cols, table_rows, natural), width=width)
            break
        widths = _layout(least, natural, width)
        if widths is not None:
            console.print(_table(title, cols, table_rows, widths), width=width)
            break
        candidates = [i for i, c in enumerate(cols) if c.drop > 0]
        if not candidates:
            for table in _vertical(title, cols, table_rows, width):
                console.print(table, width=width)
            break
        i = max(candidates, key=lambda j: (cols[j].drop, j))
        dropped.append(cols[i].name)
        del cols[i]
        for row in table_rows:
            del row[i]
    if dropped:
        console.print(
            f"({len(dropped)} column(s) left out to fit {width} columns: {', '.join(dropped)}; widen the terminal "
            "or set COLUMNS to see them)",
            style="dim",
            highlight=False,
            markup=False,
        )
