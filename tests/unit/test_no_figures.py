"""Comments and docstrings keep a rule and its reason, never a measured figure ("0.08 s against 0.56 s", "96 commits
took 559 s"): figures go stale silently, so they live in docs/ (docs/dev/performance.md and docs/dev/bench-log/) next to
the command that measured them, under an anchor the comment names. Module docstrings stay short (the design prose is in
docs/dev/architecture/index.md). Checked over every .py file of the package (its linked folders included) and bench/,
and over the ``--`` comments of every .sql file of tcobench/sql."""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import tcobench

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(tcobench.__file__).resolve().parent
MAX_MODULE_DOCSTRING_LINES = 12

_NUMBER = r"(?<![\w.])~?\d[\d,]*(?:\.\d+)?"
_UNIT = r"(?:ms|µs|us|ns|s|secs?|seconds?|min|minutes?|h|hours?|[kKMG]i?B|[kKMG]B|req/s|tok/s|CPU-s|%)"
_QUANTITY = rf"{_NUMBER}(?:-\d[\d,]*(?:\.\d+)?)?\s?{_UNIT}(?![\w/])"
# A word that says the quantity beside it was observed, not chosen: a sitting, a comparison, a machine.
_CUE = (
    r"\btook\b|\btakes\b|\bmeasured:|\bmedian\b|\bagainst\b|\bon (?:a |the |this )?\d-core|"
    r"\bon \d (?:busy |idle |loaded )?cores\b|\bidle machine\b|\ba (?:year|quarter|night)(?:'s| of)\b|"
    r"\bcosts? (?:the \w+ (?:\w+ )?|about |most |(?=\d))|\b(?:was|were) (?=\d)"
)
FIGURE = re.compile(
    rf"{_QUANTITY}[^.;:]{{0,60}}?(?:{_CUE})|(?:{_CUE})[^.;]{{0,60}}?{_QUANTITY}"
    rf"|{_NUMBER}\s?{_UNIT}?\s?->\s?{_QUANTITY}|~\d[\d,.]*\s?{_UNIT}(?![\w/])|{_NUMBER}\s?x (?:faster|slower|quicker)\b"
    rf"|{_QUANTITY} of (?:a|its|the \w+'s) (?:core|CPU)|{_QUANTITY} of a \w+ host run's CPU"
    rf"|{_QUANTITY} each\b|\bp[59]\d\s?{_QUANTITY}"
    r"|\b(?:twice|three times|four times|\d+ times) (?:as (?:slow|fast)|slower|faster|the time)\b",
    re.IGNORECASE,
)
# Modules whose docstring may be longer, and why.
LONG_DOCSTRING_ALLOWED = {"tcobench/errors.py": "STYLE.md: the error tree is drawn in the module docstring (httpx)"}


def _sources() -> Iterator[Path]:
    seen: set[Path] = set()
    for top in (PACKAGE, ROOT / "bench"):
        for folder, _, names in os.walk(top, followlinks=True):
            for name in sorted(names):
                path = (Path(folder) / name).resolve()
                if name.endswith(".py") and path not in seen:
                    seen.add(path)
                    yield path


def _sql_sources() -> list[Path]:
    return sorted((PACKAGE / "sql").rglob("*.sql"))


def sql_prose(source: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of every block of consecutive whole-line ``--`` comments of a SQL file, and of every
    comment that ends a line of SQL."""
    block: list[str] = []
    start = 0
    for number, line in enumerate([*source.splitlines(), ""], start=1):
        if line.lstrip().startswith("--"):
            start = start if block else number
            block.append(line.lstrip().removeprefix("--").strip())
            continue
        if block:
            yield start, " ".join(block)
            block = []
        if "--" in line:
            yield number, line.split("--", 1)[1].strip()


def _docstrings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                yield first.lineno, first.value.value


def prose(source: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of every comment block (consecutive whole-line comments joined) and every docstring."""
    block: list[str] = []
    start = last = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        whole_line = token.line.lstrip().startswith("#")
        if block and not (whole_line and token.start[0] == last + 1):
            yield start, " ".join(block)
            block = []
        if not block:
            start = token.start[0]
        block.append(token.string.lstrip("#").strip())
        last = token.start[0] if whole_line else -1
    if block:
        yield start, " ".join(block)
    for line, text in _docstrings(ast.parse(source)):
        yield line, " ".join(text.split())


def figures(path: Path) -> list[str]:
    """Each measured figure in the file's comments and docstrings, as 'path:line: match'."""
    return [
        f"{path}:{line}: {m.group(0)}" for line, text in prose(path.read_text("utf-8")) for m in FIGURE.finditer(text)
    ]


def test_no_measured_figure_in_comments_or_docstrings() -> None:
    found = [hit for path in _sources() for hit in figures(path)]
    assert not found, "move these figures to docs/dev/performance.md under an anchor the comment names:\n" + "\n".join(
        found
    )


def test_no_measured_figure_in_sql_comments() -> None:
    found = [
        f"{path}:{line}: {m.group(0)}"
        for path in _sql_sources()
        for line, text in sql_prose(path.read_text("utf-8"))
        for m in FIGURE.finditer(text)
    ]
    assert not found, "move these figures to docs/ (a bench-log page) and name the page in the comment:\n" + "\n".join(
        found
    )


def test_sql_prose_joins_a_comment_block_across_lines() -> None:
    """A figure split over two comment lines is one text, found, and so is one after a line of SQL; the SQL itself
    is not prose."""
    source = "-- a year of groups: 0.23 s here\n-- against 6.2 s by the list macros\nSELECT 1; -- took 5 s\nSELECT 2;\n"
    blocks = list(sql_prose(source))
    assert blocks == [(1, "a year of groups: 0.23 s here against 6.2 s by the list macros"), (3, "took 5 s")]
    assert all(FIGURE.search(text) for _, text in blocks)


def test_module_docstrings_are_short() -> None:
    long = []
    for path in _sources():
        text = ast.get_docstring(ast.parse(path.read_text("utf-8")), clean=False)
        relative = path.relative_to(ROOT).as_posix()
        if text and len(text.splitlines()) > MAX_MODULE_DOCSTRING_LINES and relative not in LONG_DOCSTRING_ALLOWED:
            long.append(f"{path}: {len(text.splitlines())} lines")
    assert not long, "move the design prose to a page of docs/dev/architecture/ and leave a pointer:\n" + "\n".join(
        long
    )


def _anchors(page: Path) -> set[str]:
    text = page.read_text("utf-8")
    headings = re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)
    slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}
    return slugs | set(re.findall(r'<a id="([^"]+)"></a>', text))


def test_every_anchor_a_comment_names_exists() -> None:
    """A comment's "docs/dev/performance.md#name" (or any docs page's) leads somewhere: the page has that anchor."""
    named = re.compile(r"docs/([\w/-]+\.md)#([\w-]+)")
    tests = (p for p in sorted((ROOT / "tests").rglob("*.py")) if p != Path(__file__).resolve())
    files = [*_sources(), *_sql_sources(), *tests]
    missing = []
    for path in files:
        for page, anchor in named.findall(path.read_text("utf-8")):
            doc = ROOT / "docs" / page
            if not doc.exists() or anchor not in _anchors(doc):
                missing.append(f"{path}: docs/{page}#{anchor}")
    assert not missing, missing


def test_the_pattern_flags_figures_and_passes_rules() -> None:
    for figure in (
        "report's cost whiskers over a year, 0.08 s against 0.56 s for every column",
        "(96 commits of a shared SQLite catalog took 559 s; in turn)",
        "a quarter's owned runs query, 0.113 -> 0.077 s",
        "no Prefect import (6-7 s on 2 cores)",
        "one commit per run cost ~1 s each",
        "the new parser is 3x faster",
        "each task run cost the Prefect server about 0.07 CPU-s",
        "not np.unique's inverse (three times slower on a year's series)",
        "a quarter's compare, median of 6: 0.97 s with the collector on",
    ):
        assert FIGURE.search(figure), figure
    for rule in (
        "a probe waits at most the request timeout, and 10 s: a server that hangs must not stall the run",
        "the worker's own heartbeat interval (Prefect's default 30 s)",
        "1 MiB: a streamed line (one SSE data line or NDJSON object) or network chunk",
        "see docs/dev/performance.md#client-overhead",
        "``shape_tolerance`` (default 5%) apart, relative to B's",
    ):
        assert not FIGURE.search(rule), rule
