"""What the report's sections share: the runs in the report, grouped into platforms, and small HTML helpers.

A platform is (host, GPU, hardware key, model, workload, engine); a label is 'GPU @ host' plus whichever of the
other parts tell apart platforms of the same GPU and host.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any, TypedDict, cast

import duckdb
import pyarrow as pa

from tcobench.tasks.report.assets.svg import PALETTE
from tcobench.tasks.store.rows import Row, RunRow, arrow_of, fetch_rows, id_list

__all__ = [
    "DASHES",
    "accelerator",
    "GROUP_FIELDS",
    "PLATFORM_TABLE",
    "NightWeightedRow",
    "Platform",
    "PlatformKey",
    "ReportContext",
    "ReportRun",
    "cheapest_levels",
    "cheapest_tokens_per_usd",
    "figure",
    "fmt",
    "group_platforms",
    "left_out",
    "night_weighted_rows",
    "platform_costs",
    "platform_key",
    "query_rows",
    "register_platforms",
    "table",
    "usd",
]

DASHES = (None, "7 3", "2 3", "9 3 2 3", "4 4")
WIDE_TABLE = 12  # a table of more columns is set tighter (class "wide", page.PAGE_CSS), so it wraps less

GROUP_FIELDS = ("host", "gpu", "hardware_key", "model_name", "workload", "engine_name")
PlatformKey = tuple[str, str, str, str, str, str]  # GROUP_FIELDS' values
PLATFORM_TABLE = "_report_platform"  # registered by register_platforms: run_id -> platform label and its number


@dataclass(frozen=True)
class Platform:
    """A group of runs drawn as one series: the same host, GPU, price row, model, workload and engine."""

    key: PlatformKey
    label: str
    color: str
    run_ids: tuple[str, ...]


class ReportRun(RunRow):
    """A run in the report: view runs' provenance and view run_summary's request counts (report.REPORT_RUNS_SQL)."""

    gpu_count: int | None
    host_cpu_count: int | None
    driver_version: str | None
    cuda_version: str | None
    rocm_version: str | None
    hardware_key: str
    site_key: str
    ops_key: str
    utilisation: float
    engine_name: str
    engine_label: str | None
    gpu_source: str | None
    engine_version: str
    image_digest: str | None
    model_name: str
    model_digest: str | None
    workload: str
    prompt_set_hash: str
    num_ctx: int
    max_tokens: int
    concurrency: int
    status: str
    ok: int
    errors: int
    tool_version: str
    git_revision: str | None
    source: str | None  # imported:<tool> <version>; None: measured by tcobench
    client_saturated: bool | None
    client_check_note: str | None


class _NightWeightedBy(TypedDict, total=False):
    """The keys a night_weighted_rows query adds with ``by``, ``every`` or ``lists``."""

    basis: str  # view cost_basis
    value: float  # view sensitivity
    i: int  # the latency distributions: 1-based index into the probabilities
    every: bool  # the energy figure: every run measured


class NightWeightedRow(_NightWeightedBy):
    """One row of night_weighted_rows: a platform at one concurrency (and ``by`` value)."""

    platform: str
    concurrency: int
    mean: float  # night_weighted_mean of the value
    lowest: float  # the lowest night's mean
    highest: float  # the highest night's mean
    nights: int
    runs: int


@dataclass(frozen=True)
class ReportContext:
    con: duckdb.DuckDBPyConnection
    runs: list[ReportRun]  # oldest first
    platforms: list[Platform]
    of_run: dict[str, Platform]
    select: str | None
    claim: float | None  # the claimed ratio the headline is checked against; None: no claim is stated
    resamples: int
    seed: int
    a: str | None = None  # the headline pair (report --a/--b); None: the cheapest pair of different vendors
    b: str | None = None
    interactivity: float | None = None  # the headline's target, tok/s per user; None: the middle of the overlap
    # platform_costs' rows, read once per report (the headline, the cost figure, the energy and targets sections)
    costs: list[NightWeightedRow] = field(default_factory=list, compare=False)

    @property
    def ids(self) -> list[str]:
        return [r["run_id"] for r in self.runs]


def query_rows(
    con: duckdb.DuckDBPyConnection, sql: str, row: type[Row], ids: Sequence[str], **params: object
) -> list[Row]:
    """Rows of ``sql`` as ``row`` (tasks/store/rows.py); ``$ids`` is bound to ``ids`` (read it as rows.IDS), other
    ``$name`` parameters to ``params``."""
    return fetch_rows(con, sql, row, {"ids": id_list(ids), **params})


def platform_key(
    host: str, gpu_name: str | None, hardware_key: str, model: str, workload: str, engine: str
) -> PlatformKey:
    """A platform's key in GROUP_FIELDS order: host, GPU ('CPU' without one), price row, model, workload, engine."""
    return (host, gpu_name or "CPU", hardware_key, model, workload, engine)


def group_platforms(runs: Sequence[ReportRun]) -> list[Platform]:
    """Group runs; a label is 'GPU @ host' plus whichever of hardware key, model, workload, engine vary."""
    keys: dict[PlatformKey, list[str]] = defaultdict(list)
    for r in runs:
        key = platform_key(
            r["host"], r["gpu_name"], r["hardware_key"], r["model_name"], r["workload"], r["engine_name"]
        )
        keys[key].append(r["run_id"])
    # a field joins the label only where it tells apart platforms of the same GPU and host
    varying = [
        i for i in range(2, len(GROUP_FIELDS)) if len({k[:2] + (k[i],) for k in keys}) > len({k[:2] for k in keys})
    ]
    platforms = []
    for n, (key, ids) in enumerate(sorted(keys.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2:]))):
        label = " · ".join([f"{key[1]} @ {key[0]}", *(key[i] for i in varying)])
        platforms.append(Platform(key, label, PALETTE[n % len(PALETTE)], tuple(ids)))
    return platforms


def register_platforms(con: duckdb.DuckDBPyConnection, of_run: dict[str, Platform]) -> None:
    """Create PLATFORM_TABLE (run_id, platform label and its number) for the runs in the report: a temporary table,
    not the registered Arrow table (every join with it would scan the Arrow table through Python's interface, slower:
    docs/dev/performance.md#report-platform-table)."""
    labels = [p.label for p in of_run.values()]
    number = {label: i for i, label in enumerate(dict.fromkeys(labels))}  # a small key for grouping (platform_id)
    ids = pa.array([number[x] for x in labels], pa.int32())
    con.register("_tcob_platforms", pa.table({"run_id": list(of_run), "platform": labels, "platform_id": ids}))
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {PLATFORM_TABLE} AS SELECT * FROM _tcob_platforms")
    finally:
        con.unregister("_tcob_platforms")


_NIGHT_INPUT = "_night_weighted_input"  # the view night_weighted_rows hands to the macros it calls
_NIGHT_WEIGHTED = "SELECT * FROM platform_night_weighted($source, $platforms)"
_NIGHT_WEIGHTED_LISTS = "SELECT * FROM platform_night_weighted_lists($source, $platforms)"


def night_weighted_rows(
    ctx: ReportContext,
    source: str | duckdb.DuckDBPyRelation,
    value: str,
    by: str | None = None,
    every: duckdb.Expression | None = None,
    lists: bool = False,
) -> list[NightWeightedRow]:
    """Per report platform, concurrency and ``by`` column of ``source`` (a view's name, or a relation with a run_id
    column), over the report's runs with a ``value``: ``mean``, the night-weighted mean of ``value`` (SQL table
    macro platform_night_weighted: table macro night_weighted, the mean over nights of each night's mean over its
    runs, the rule of macro night_weighted_mean), the ``lowest`` and ``highest`` night's mean, and the number of
    ``nights`` and ``runs``. ``every``: a condition on ``source``'s columns; each row then says whether ``every``
    row of its group meets it. ``lists``: ``value`` is a list column whose positions are figures of their own (a
    run's quantiles): each position is night-weighted on its own (table macro platform_night_weighted_lists, the
    same rule position by position; ``nights`` and ``runs`` then count lists), one row per position with its
    1-based position ``i``. Python picks the columns (DuckDB's relational API); the SQL is the macros'."""
    relation = ctx.con.view(source) if isinstance(source, str) else source
    nothing = duckdb.ConstantExpression(None)
    relation.select(
        duckdb.ColumnExpression("run_id"),
        duckdb.ColumnExpression(value).alias("value"),
        (duckdb.ColumnExpression(by) if by is not None else nothing).alias("facet"),
        (every if every is not None else nothing).alias("every"),
    ).create_view(_NIGHT_INPUT)
    try:
        found = arrow_of(
            ctx.con,
            _NIGHT_WEIGHTED_LISTS if lists else _NIGHT_WEIGHTED,
            {"source": _NIGHT_INPUT, "platforms": PLATFORM_TABLE},
        ).to_pylist()
    finally:
        ctx.con.execute(f"DROP VIEW IF EXISTS {_NIGHT_INPUT}")
    for row in found:
        facet, all_of = row.pop("facet"), row.pop("every", None)
        if by is not None:
            row[by] = facet
        if every is not None:
            row["every"] = all_of
    return cast(list[NightWeightedRow], found)


def platform_costs(ctx: ReportContext) -> list[NightWeightedRow]:
    """Night-weighted output tokens per USD per platform, concurrency and basis (night_weighted_rows of view
    cost_basis), read on first use and kept in ``ctx``."""
    if not ctx.costs:
        ctx.costs.extend(night_weighted_rows(ctx, "cost_basis", "output_tokens_per_usd", by="basis"))
    return list(ctx.costs)


def cheapest_tokens_per_usd(ctx: ReportContext) -> dict[str, float]:
    """Per platform label, its most output tokens per USD (owned basis) over its concurrency levels, each
    night-weighted (platform_costs)."""
    best: dict[str, float] = {}
    for row in platform_costs(ctx):
        if row["basis"] == "owned":
            best[row["platform"]] = max(best.get(row["platform"], 0.0), row["mean"])
    return best


def cheapest_levels(owned: Sequence[NightWeightedRow]) -> dict[str, int]:
    """Per platform label, the concurrency with the most tokens per USD, from night_weighted_rows of
    view cost_basis' output_tokens_per_usd on the owned basis."""
    best: dict[str, NightWeightedRow] = {}
    for row in owned:
        if row["platform"] not in best or row["mean"] > best[row["platform"]]["mean"]:
            best[row["platform"]] = row
    return {label: row["concurrency"] for label, row in best.items()}


def accelerator(gpu_name: str | None, gpu_count: int | None, host_cpu_count: int | None) -> str:
    """What a run computed on: 'NVIDIA H200 x8', or on a host without a GPU 'CPU (16 cores)' (never 'CPU x0')."""
    if gpu_name:
        return f"{gpu_name} x{gpu_count}" if gpu_count else gpu_name
    return f"CPU ({host_cpu_count} cores)" if host_cpu_count else "CPU"


def left_out(caption: str, why: str) -> str:
    """The one line that stands where a chart with nothing to show was left out: which chart, and why."""
    return f'<p class="note left-out">Chart left out: {escape(caption)}: {escape(why)}.</p>'


def fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return escape(str(value))


def usd(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:,.4f}" if abs(value) >= 1e-4 else f"${value:.3g}"


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    numeric: Sequence[int] = (),
    flagged: Sequence[bool] = (),
    row_attrs: Sequence[str] = (),
) -> str:
    """An HTML table; ``row_attrs``: per row, attributes for its <tr> (already escaped), e.g. the filter's. Its
    cells wrap (page.PAGE_CSS), so it never needs more than the page's width."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cells = "".join(f'<td class="num">{c}</td>' if j in numeric else f"<td>{c}</td>" for j, c in enumerate(row))
        cls = ' class="flagged"' if flagged and flagged[i] else ""
        attrs = f" {row_attrs[i]}" if row_attrs else ""
        body.append(f"<tr{cls}{attrs}>{cells}</tr>")
    wide = ' class="wide"' if len(headers) > WIDE_TABLE else ""
    return (
        f'<div class="scroll"><table{wide}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'
    )


def figure(caption: str, chart: str, legend_html: str = "", note: str = "") -> str:
    note_html = f'<p class="note">{escape(note)}</p>' if note else ""
    return f"<figure><figcaption>{escape(caption)}</figcaption>{chart}{legend_html}{note_html}</figure>"
