"""columns: every view's columns, declared once, in a YAML file beside its SQL (dbt's ``models/*.yml``).

``tcobench/sql/<layer>/<view>.yml`` lists the columns of ``<view>.sql`` in the view's order: each one's name and
DuckDB type, and either its declaration (description, unit, better direction, label, symbol) or ``same_as: <view>``;
its data tests (``not_null``, ``unique``, ``accepted_range``), and the view's ``key``, are checked on a small store
by tests/unit/schemas/test_columns.py. ``not_null`` also makes the column's Python type non-optional.

A view with ``row: <ClassName>`` is read typed: its full declarations are the metric catalogue (``metrics()``).
``python -m tcobench.schemas.columns`` writes the TypedDicts (tasks/store/view_rows.py) and a docs page per view
(docs/reference/columns/, listed in mkdocs.yml's nav), and the stored tables' column names
(tasks/store/table_columns.py, from their record models); tests check they are current. docs/dev/columns.md shows
how to add a column.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tcobench.schemas.layers import LAYERS

__all__ = [
    "LAYERS",
    "NAV_BEGIN",
    "NAV_END",
    "PAGES",
    "AcceptedRange",
    "Column",
    "DataTest",
    "Metric",
    "RangeTest",
    "ViewColumns",
    "column_pages",
    "column_mismatches",
    "data_test_sql",
    "key_test_sql",
    "declaration",
    "declarations",
    "index_page",
    "metric",
    "metrics",
    "mkdocs_with_pages",
    "parse_declaration",
    "rule",
    "typed_rows_module",
    "view_page",
]


DuckType = Literal[
    "VARCHAR",
    "BIGINT",
    "INTEGER",
    "HUGEINT",
    "DOUBLE",
    "BOOLEAN",
    "DATE",
    "TIMESTAMP",
    "DOUBLE[]",
    "BIGINT[]",
    "BOOLEAN[]",
]
# DuckDB type -> the Python type its values arrive as through Arrow (typed rows: tasks/store/view_rows.py)
PYTHON_TYPE: Mapping[str, str] = {
    "VARCHAR": "str",
    "BIGINT": "int",
    "INTEGER": "int",
    "HUGEINT": "int",
    "DOUBLE": "float",
    "BOOLEAN": "bool",
    "DATE": "dt.date",
    "TIMESTAMP": "dt.datetime",
}
Better = Literal["higher", "lower"]
_STRICT = ConfigDict(frozen=True, extra="forbid")


class AcceptedRange(BaseModel):
    """The bounds every non-NULL value lies within (inclusive)."""

    model_config = _STRICT

    min: float | None = Field(default=None, description="the least value allowed")
    max: float | None = Field(default=None, description="the greatest value allowed")

    @model_validator(mode="after")
    def _a_bound(self) -> AcceptedRange:
        if self.min is None and self.max is None:
            raise ValueError("accepted_range needs min, max or both")
        return self


class RangeTest(BaseModel):
    """Data test: ``{accepted_range: {min: 0, max: 1}}``."""

    model_config = _STRICT

    accepted_range: AcceptedRange


DataTest = Literal["not_null", "unique"] | RangeTest


class Column(BaseModel):
    """One column of a view, as its YAML file declares it."""

    model_config = _STRICT

    name: str = Field(pattern=r"^[a-z_][a-z0-9_]*$", description="the column's name in the view")
    type: DuckType = Field(description="its DuckDB type, as DESCRIBE names it")
    same_as: str | None = Field(default=None, description="the view whose declaration of this column it carries")
    description: str | None = Field(default=None, description="its formula or meaning, in one line")
    unit: str = Field(default="", description="its unit ('' for a name, an id, a flag or a label)")
    better: Better | None = Field(default=None, description="whether higher or lower is better (None: neither)")
    label: str | None = Field(default=None, description="how the CLI's and the report's tables name it")
    symbol: str | None = Field(default=None, description="its unit as those tables print it, e.g. 'ms'")
    tests: tuple[DataTest, ...] = Field(default=(), description="its data tests")

    @model_validator(mode="after")
    def _declared_once(self) -> Column:
        own = {k for k in ("description", "label", "symbol", "better") if getattr(self, k) is not None}
        if self.unit:
            own.add("unit")
        if self.same_as is not None and own:
            raise ValueError(f"{self.name}: same_as {self.same_as!r} carries that view's declaration; drop {own}")
        if self.same_as is None and not self.description:
            raise ValueError(f"{self.name}: give a description (or same_as: the view that declares it)")
        if self.description is not None and "\n" in self.description:
            raise ValueError(f"{self.name}: the description is one line")
        if self.better is not None and not self.unit:
            raise ValueError(f"{self.name}: a better direction needs a unit")
        return self

    @property
    def not_null(self) -> bool:
        return "not_null" in self.tests

    @property
    def python_type(self) -> str:
        """Its Python type in a typed row, e.g. 'float | None' (optional unless a not_null test says otherwise)."""
        base = PYTHON_TYPE.get(self.type)
        if base is None:
            raise ValueError(f"{self.name}: no Python type for {self.type} in a typed row")
        return base if self.not_null else f"{base} | None"


class ViewColumns(BaseModel):
    """A view's YAML file: its columns in the view's order, and the typed row Python reads it as."""

    model_config = _STRICT

    view: str = Field(description="the view's name (its .sql file's)")
    row: str | None = Field(default=None, pattern=r"^[A-Z]\w*Row$", description="its TypedDict in view_rows.py")
    key: tuple[str, ...] = Field(
        default=(), description="the columns that name a row: no two rows share their values (a data test)"
    )
    columns: tuple[Column, ...] = Field(min_length=1, description="its columns, in the view's order")

    @model_validator(mode="after")
    def _unique(self) -> ViewColumns:
        names = [c.name for c in self.columns]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"columns declared twice: {twice}")
        unknown = [k for k in self.key if k not in names]
        if unknown:
            raise ValueError(f"key names undeclared columns: {unknown}")
        return self

    def column(self, name: str) -> Column:
        """The column called ``name``; KeyError when the view has none."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"view {self.view!r} declares no column {name!r}")


def parse_declaration(text: str, source: str) -> ViewColumns:
    """A view's declaration from its YAML text; ValueError naming ``source`` when it is not one."""
    import yaml  # here: importing it costs the CLI's start time, and only the checks and generator read YAML

    try:
        return ViewColumns.model_validate(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except (yaml.YAMLError, ValueError) as exc:
        raise ValueError(f"{source}: {exc}") from exc


def _files() -> list[tuple[str, Traversable]]:
    root = files("tcobench").joinpath("sql")
    found = []
    for layer in LAYERS:
        for path in sorted(root.joinpath(layer).iterdir(), key=lambda p: p.name):
            if path.name.endswith(".yml"):
                found.append((f"tcobench/sql/{layer}/{path.name}", path))
    return found


@cache
def _source_of() -> dict[str, str]:
    """View -> its declaration's path in the source tree, e.g. 'tcobench/sql/run/run_summary.yml'."""
    return {path.name.removesuffix(".yml"): source for source, path in _files()}


@cache
def declarations() -> Mapping[str, ViewColumns]:
    """View -> its declaration, for every tcobench/sql/<layer>/<view>.yml (layer by layer, then by name); read once
    per process. ValueError when a file is not a declaration, names another view, or a same_as names a view that
    does not declare that column."""
    out: dict[str, ViewColumns] = {}
    for source, path in _files():
        declared = parse_declaration(path.read_text("utf-8"), source)
        if declared.view != path.name.removesuffix(".yml"):
            raise ValueError(f"{source}: declares view {declared.view!r}, not the view of its file name")
        out[declared.view] = declared
    for declared in out.values():
        for c in declared.columns:
            if c.same_as is not None:
                home = out.get(c.same_as)
                if home is None or c.name not in {h.name for h in home.columns} or home.column(c.name).same_as:
                    raise ValueError(f"{declared.view}.{c.name}: same_as {c.same_as!r}, which does not declare it")
    return out


def declaration(view: str, name: str) -> Column:
    """The full declaration of ``view``'s column ``name`` (followed through same_as); KeyError when undeclared."""
    column = declarations()[view].column(name)
    return declarations()[column.same_as].column(name) if column.same_as else column


def column_mismatches(view: str, actual: Sequence[tuple[str, str]]) -> list[str]:
    """How the columns a view returns, (name, DuckDB type) in order, differ from its declaration ([]: they do not)."""
    path = _source_of().get(view, f"tcobench/sql/<layer>/{view}.yml")
    if view not in declarations():
        return [f"view {view!r} has no declaration: write {path} (docs/dev/columns.md)"]
    declared = [(c.name, c.type) for c in declarations()[view].columns]
    if declared == list(actual):
        return []
    names, got = [n for n, _ in declared], [n for n, _ in actual]
    out = [f"{view}: {n} is declared but not a column of the view" for n in names if n not in got]
    out += [f"{view}: {n} is a column of the view but not declared in {path}" for n in got if n not in names]
    types = dict(declared)
    out += [f"{view}.{n}: declared {types[n]}, the view has {t}" for n, t in actual if n in types and types[n] != t]
    if not out:
        out.append(f"{view}: columns in another order than declared: the view has {got}")
    return out


def rule(test: DataTest) -> str:
    """A data test as a failure message names it: 'not_null', 'unique', 'accepted_range [0, 1]'."""
    if isinstance(test, str):
        return test
    low, high = test.accepted_range.min, test.accepted_range.max
    if low is None or high is None:
        return f"accepted_range >= {low:g}" if high is None else f"accepted_range <= {high:g}"
    return f"accepted_range [{low:g}, {high:g}]"


def _row_of(view: str) -> str:
    """SQL naming a row of ``view`` by its key (else its first column), e.g. ``{'run_id': run1, 'basis': owned}``."""
    declared = declarations().get(view)
    names = (declared.key or (declared.columns[0].name,)) if declared else ()
    return f"CAST(struct_pack({', '.join(f'{n} := {n}' for n in names)}) AS VARCHAR)" if names else f"'a row of {view}'"


def data_test_sql(view: str, column: str, test: DataTest) -> str:
    """SQL giving, when a data test of ``view``'s ``column`` fails, one row: (the rows or values that fail, one of
    them as text: the value out of range, the value repeated, or for a NULL the key of its row); no row when it
    holds."""
    if test == "not_null":
        return (
            f"SELECT count(*) OVER (), 'NULL at ' || {_row_of(view)} FROM {view} WHERE {column} IS NULL "
            f"ORDER BY 2 LIMIT 1"
        )
    if test == "unique":
        return (
            f"SELECT count(*) OVER (), coalesce(CAST({column} AS VARCHAR), 'NULL') || ' (' || n || ' rows)' FROM "
            f"(SELECT {column}, count(*) AS n FROM {view} GROUP BY {column} HAVING count(*) > 1) ORDER BY 2 LIMIT 1"
        )
    assert isinstance(test, RangeTest)
    bounds = test.accepted_range
    failing = [f"{column} < {bounds.min!r}"] * (bounds.min is not None) + [f"{column} > {bounds.max!r}"] * (
        bounds.max is not None
    )
    return (
        f"SELECT count(*) OVER (), CAST({column} AS VARCHAR) || ' at ' || {_row_of(view)} FROM {view} "
        f"WHERE {' OR '.join(failing)} ORDER BY {column} LIMIT 1"
    )


def key_test_sql(view: str, key: Sequence[str]) -> str:
    """SQL giving, when two rows of ``view`` share the values of ``key``, one row: (the key values shared, one of them
    as text); no row when no two rows share them."""
    names = ", ".join(key)
    packed = f"CAST(struct_pack({', '.join(f'{n} := {n}' for n in key)}) AS VARCHAR)"
    return (
        f"SELECT count(*) OVER (), {packed} || ' (' || n || ' rows)' FROM "
        f"(SELECT {names}, count(*) AS n FROM {view} GROUP BY {names} HAVING count(*) > 1) ORDER BY 2 LIMIT 1"
    )


def typed_rows_module() -> str:
    """The source of tasks/store/view_rows.py: a TypedDict per view declared with ``row:``."""
    rows = [d for d in declarations().values() if d.row is not None]
    names = sorted(["VIEW_ROWS", *(d.row for d in rows if d.row)])
    out = [
        '"""view_rows: the typed rows of the views Python reads (one TypedDict per view declared with ``row:``).',
        "",
        "Generated by ``python -m tcobench.schemas.columns`` from tcobench/sql/<layer>/<view>.yml: edit those, not",
        'this file (tests/unit/schemas/test_columns.py checks that it is current)."""',
        "",
        "from __future__ import annotations",
        "",
        "import datetime as dt",
        "from collections.abc import Mapping",
        "from typing import Any, TypedDict",
        "",
        "__all__ = [",
        *(f'    "{n}",' for n in names),
        "]",
    ]
    for d in rows:
        out += ["", "", f"class {d.row}(TypedDict):"]
        out.append(f'    """View {d.view}; its columns are declared in {_source_of()[d.view]}."""')
        out.append("")
        out += [f"    {c.name}: {c.python_type}" for c in d.columns]
    out += ["", "", "VIEW_ROWS: Mapping[str, type[Any]] = {"]
    out += [f'    "{d.view}": {d.row},' for d in rows]
    out += ["}", ""]
    return "\n".join(out)


class Metric(BaseModel):
    """A metric of the catalogue: a column of a typed view, as its declaring view declares it."""

    model_config = _STRICT

    name: str = Field(description="the column's name, the same in every view that carries it")
    views: tuple[str, ...] = Field(min_length=1, description="the typed views whose rows carry it, declaring first")
    unit: str = Field(description="its unit ('' for a name, an id, a flag or a label)")
    better: Better | None = Field(description="whether higher or lower is better (None: neither)")
    formula: str = Field(description="how it is computed, in one line")
    label: str | None = Field(default=None, description="how the CLI's and the report's tables name it")
    symbol: str | None = Field(default=None, description="its unit as those tables print it, e.g. 'ms'")


@cache
def metrics() -> tuple[Metric, ...]:
    """Every metric, view by view (in declaration order), then in its view's column order."""
    typed = [d for d in declarations().values() if d.row is not None]
    out = []
    for d in typed:
        for c in (c for c in d.columns if c.same_as is None):
            carried = [
                t.view for t in typed if t is not d and c.name in {x.name for x in t.columns if x.same_as == d.view}
            ]
            out.append(
                Metric(
                    name=c.name,
                    views=(d.view, *carried),
                    unit=c.unit,
                    better=c.better,
                    formula=c.description or "",
                    label=c.label,
                    symbol=c.symbol,
                )
            )
    return tuple(out)


def metric(name: str) -> Metric:
    """The catalogue's entry for a column; KeyError when it is not catalogued (or catalogued twice)."""
    found = [m for m in metrics() if m.name == name]
    if len(found) != 1:
        raise KeyError(f"{name!r} is catalogued {len(found)} times")
    return found[0]


PAGES = "docs/reference/columns"
NAV_BEGIN = "# view pages: generated by `python -m tcobench.schemas.columns` from tcobench/sql/*/*.yml"
NAV_END = "# end of view pages"


def _cell(text: str) -> str:
    return text.replace("|", "\\|") or "-"


def _tests_cell(column: Column) -> str:
    return ", ".join(rule(test) for test in column.tests) or "-"


def _intro(view: str) -> str:
    """The first paragraph of the view's header comment, without its name: what a row of it is."""
    source = _source_of()[view].removesuffix(".yml") + ".sql"
    text = files("tcobench").joinpath(source.removeprefix("tcobench/")).read_text("utf-8")
    lines = []
    for line in text.splitlines():
        words = line.removeprefix("--").strip()
        if not line.startswith("--") or not words or words.startswith(("Its columns", "reads:")):
            break
        lines.append(words)
    intro = " ".join(lines).removeprefix(f"{view}:").strip()
    return intro[:1].upper() + intro[1:]


def view_page(view: str) -> str:
    """docs/reference/columns/<view>.md: a view's columns as its declaration gives them, one table row each."""
    declared = declarations()[view]
    source = _source_of()[view]
    carried = {
        (d.view, c.name) for d in declarations().values() for c in d.columns if c.same_as == view and d.view != view
    }
    out = [f"# `{view}`", "", _intro(view), ""]
    out.append(
        f"Its columns are declared once, in `{source}` (beside `{source.removesuffix('.yml')}.sql`); "
        f"`python -m tcobench.schemas.columns` writes this page from it."
    )
    if declared.key:
        out += ["", f"No two rows of `{view}` share their {', '.join(f'`{k}`' for k in declared.key)} (its key)."]
    if declared.row:
        out += ["", f"Python reads `{view}` typed, as `{declared.row}` (tasks/store/view_rows.py)."]
    out += [
        "",
        "| column | type | unit | better | formula or meaning | data tests | also in |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in declared.columns:
        name = f"`{view}.{c.name}`"
        if c.same_as is not None:
            out.append(f"| {name} | {c.type} | | | as in [`{c.same_as}`]({c.same_as}.md) | {_tests_cell(c)} | |")
            continue
        also = ", ".join(f"[`{v}`]({v}.md)" for v, n in sorted(carried) if n == c.name) or "-"
        cells = [name, c.type, _cell(c.unit), c.better or "-", _cell(c.description or ""), _tests_cell(c), also]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return "\n".join(out)


def index_page() -> str:
    """docs/reference/columns/index.md: every view, layer by layer, linked to its page."""
    out = [
        "# View columns",
        "",
        "Every column of every SQL view, as the view's declaration beside its SQL gives it (`tcobench/sql/<layer>/"
        "<view>.yml`): its type, unit, direction, formula or meaning, and data tests. A column carried unchanged from "
        "another view links to the view that declares it. `python -m tcobench.schemas.columns` writes these pages; "
        "[dev/columns.md](../../dev/columns.md) says how to add a column, and [formulas.md](../../formulas.md) how "
        "the formulas hang together.",
    ]
    for layer in LAYERS:
        views = [v for v, source in _source_of().items() if source.startswith(f"tcobench/sql/{layer}/")]
        if views:
            out += ["", f"## {layer}", ""]
            out += [f"- [`{v}`]({v}.md)" for v in views]
    out.append("")
    return "\n".join(out)


def column_pages() -> dict[str, str]:
    """The generated pages, by their path under docs/reference/columns/: index.md and one page per view."""
    return {"index.md": index_page(), **{f"{view}.md": view_page(view) for view in declarations()}}


def mkdocs_with_pages(text: str) -> str:
    """mkdocs.yml's text with the nav lines between NAV_BEGIN and NAV_END listing the generated pages."""
    if NAV_BEGIN not in text or NAV_END not in text:
        raise ValueError(f"mkdocs.yml lacks the markers {NAV_BEGIN!r} ... {NAV_END!r}")
    head, rest = text.split(NAV_BEGIN, 1)
    indent = head[head.rindex("\n") + 1 :]
    lines = [f"- {PAGES.removeprefix('docs/')}/{page}" for page in column_pages()]
    return (
        f"{head}{NAV_BEGIN}\n"
        + "".join(f"{indent}{line}\n" for line in lines)
        + f"{indent}{NAV_END}{rest.split(NAV_END, 1)[1]}"
    )


def _main() -> None:
    """Write tasks/store/view_rows.py, the pages of docs/reference/columns/ (removing a page of a view that is gone)
    and their lines of mkdocs.yml's nav, from the declarations, and tasks/store/table_columns.py from the stored
    tables' record models (run from a source checkout: the package's tasks/, docs/ and mkdocs.yml are the
    checkout's)."""
    from tcobench.tasks.store.store import table_columns_module

    package = Path(str(files("tcobench")))
    rows, pages, nav = (
        package / "tasks" / "store" / "view_rows.py",
        package.parent / PAGES,
        package.parent / "mkdocs.yml",
    )
    rows.write_text(typed_rows_module(), "utf-8")
    (package / "tasks" / "store" / "table_columns.py").write_text(table_columns_module(), "utf-8")
    pages.mkdir(parents=True, exist_ok=True)
    wanted = column_pages()
    for stale in (p for p in pages.glob("*.md") if p.name not in wanted):
        stale.unlink()
    for name, text in wanted.items():
        (pages / name).write_text(text, "utf-8")
    nav.write_text(mkdocs_with_pages(nav.read_text("utf-8")), "utf-8")
    sys.stdout.write(f"wrote {rows}, {len(wanted)} pages in {pages} and {nav}'s nav\n")


if __name__ == "__main__":
    _main()
