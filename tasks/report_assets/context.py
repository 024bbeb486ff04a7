"""What the report's sections share: the runs in the report, grouped into platforms, and small HTML helpers.

A platform is (host, GPU, hardware key, model, workload, engine); a label is 'GPU @ host' plus whichever of the
other parts tell apart platforms of the same GPU and host.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import duckdb
import numpy as np

from .svg import PALETTE

__all__ = [
    "DASHES",
    "GROUP_FIELDS",
    "Platform",
    "ReportContext",
    "cheapest_level",
    "figure",
    "fmt",
    "group_platforms",
    "query_rows",
    "table",
    "usd",
]

DASHES = (None, "7 3", "2 3", "9 3 2 3", "4 4")

GROUP_FIELDS = ("host", "gpu", "hardware_key", "model_name", "workload", "engine_name")


@dataclass(frozen=True)
class Platform:
    """A group of runs drawn as one series: the same host, GPU, price row, model, workload and engine."""

    key: tuple[str, ...]
    label: str
    color: str
    run_ids: tuple[str, ...]


@dataclass(frozen=True)
class ReportContext:
    con: duckdb.DuckDBPyConnection
    runs: list[dict[str, Any]]  # runs + run_summary rows in the report, oldest first
    platforms: list[Platform]
    of_run: dict[str, Platform]
    select: str | None
    claim: float
    resamples: int
    seed: int

    @property
    def ids(self) -> list[str]:
        return [r["run_id"] for r in self.runs]


def query_rows(con: duckdb.DuckDBPyConnection, sql: str, ids: Sequence[str], **params: Any) -> list[dict[str, Any]]:
    """Rows of ``sql`` as dicts; ``$ids`` is bound to ``ids``, other ``$name`` parameters to ``params``."""
    found: list[dict[str, Any]] = con.sql(sql, params={"ids": list(ids), **params}).to_arrow_table().to_pylist()
    return found


def group_platforms(runs: list[dict[str, Any]]) -> list[Platform]:
    """Group runs; a label is 'GPU @ host' plus whichever of hardware key, model, workload, engine vary."""
    keys: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for r in runs:
        r["gpu"] = r["gpu_name"] or "CPU"
        keys[tuple(str(r[f]) for f in GROUP_FIELDS)].append(r["run_id"])
    # a field joins the label only where it tells apart platforms of the same GPU and host
    varying = [
        i for i in range(2, len(GROUP_FIELDS)) if len({k[:2] + (k[i],) for k in keys}) > len({k[:2] for k in keys})
    ]
    platforms = []
    for n, (key, ids) in enumerate(sorted(keys.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2:]))):
        label = " · ".join([f"{key[1]} @ {key[0]}", *(key[i] for i in varying)])
        platforms.append(Platform(key, label, PALETTE[n % len(PALETTE)], tuple(ids)))
    return platforms


def cheapest_level(p: Platform, owned: dict[str, dict[str, Any]]) -> int | None:
    costs: dict[int, list[float]] = defaultdict(list)
    for run_id in p.run_ids:
        if run_id in owned:
            costs[owned[run_id]["concurrency"]].append(owned[run_id]["output_tokens_per_usd"])
    return max(costs, key=lambda c: float(np.mean(costs[c]))) if costs else None


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
    headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = (), flagged: Sequence[bool] = ()
) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cells = "".join(f'<td class="num">{c}</td>' if j in numeric else f"<td>{c}</td>" for j, c in enumerate(row))
        cls = ' class="flagged"' if flagged and flagged[i] else ""
        body.append(f"<tr{cls}>{cells}</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def figure(caption: str, chart: str, legend_html: str = "", note: str = "") -> str:
    note_html = f'<p class="note">{note}</p>' if note else ""
    return f"<figure><figcaption>{escape(caption)}</figcaption>{chart}{legend_html}{note_html}</figure>"
