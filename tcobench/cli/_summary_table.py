"""`tcobench summary`'s compact output: one row per run, and the columns a user names with ``--select``.

The columns a user can name are those of the rows `summary` reads (``tasks.analysis.summarise.Summary``): view
run_summary's, then view tco's that run_summary lacks (the cost and every price assumption), then view goodput's
(owned basis) that neither has. The full card of a run (every metric, the cost terms behind it) is
``_runs_table.print_runs``, which `summary --run ID` prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from rich.markup import escape

from tcobench.cli._common import fmt, out, usd
from tcobench.cli._fit import Col, number, print_table
from tcobench.tasks.analysis.summarise import Summary

__all__ = ["DEFAULT_COLUMNS", "print_compact", "select_columns", "summary_columns"]

# the raw columns behind the compact table: what --format csv/json prints without --select
DEFAULT_COLUMNS = (
    "run_id",
    "started",
    "host",
    "model_name",
    "workload",
    "concurrency",
    "status",
    "n",
    "errors",
    "ttft_p50_ms",
    "output_tok_s",
    "usd_per_m_output_tokens",
)
_ID_LENGTH = 8  # the shortest run id prefix shown (longer where two shown runs share it)


def _ordered(result: Summary) -> list[dict[str, Any]]:
    """run_summary's rows in the order summary prints runs: oldest first, then host, then concurrency."""
    return sorted(result.runs.to_pylist(), key=lambda r: (r["started"], r["host"], r["concurrency"]))


def summary_columns(result: Summary) -> dict[str, tuple[pa.Table, pa.Field]]:
    """Every column a user can name: its name -> (the table it is read from, its field), in the module doc's order."""
    found: dict[str, tuple[pa.Table, pa.Field]] = {}
    for table in (result.runs, result.tco, result.goodput):
        for name in table.column_names:
            found.setdefault(name, (table, table.schema.field(name)))
    return found


def select_columns(result: Summary, names: Sequence[str]) -> pa.Table:
    """One row per run (summary's order) with exactly ``names`` (already checked against ``summary_columns``)."""
    columns = summary_columns(result)
    ids = [r["run_id"] for r in _ordered(result)]
    by_table: dict[int, dict[str, dict[str, Any]]] = {}
    arrays = []
    for name in names:
        table, field = columns[name]
        rows = by_table.setdefault(id(table), {r["run_id"]: r for r in table.to_pylist()})
        arrays.append(pa.array([rows.get(run_id, {}).get(name) for run_id in ids], type=field.type))
    return pa.table(arrays, names=list(names))


def _prefixes(ids: Sequence[str]) -> dict[str, str]:
    """Each run id's shortest prefix of at least _ID_LENGTH characters that no other shown id starts with."""
    found = {}
    for run_id in ids:
        n = _ID_LENGTH
        while n < len(run_id) and any(o != run_id and o.startswith(run_id[:n]) for o in ids):
            n += 1
        found[run_id] = run_id[:n]
    return found


# (header, column spec) of the compact table; drop: the order low-priority columns leave a narrow terminal
_COMPACT = (
    Col("run", "left"),
    Col("started (UTC)", "left", drop=5),
    Col("host", "left", wrap=True),
    Col("model", "left", wrap=True, drop=3),
    Col("workload", "left", wrap=True, drop=6),
    Col("c"),
    Col("status", "left", drop=1),
    Col("requests / errors", drop=4),
    Col("TTFT p50 ms", drop=2),
    Col("output tok/s"),
    Col("$/1M output"),
)


def _status(r: dict[str, Any]) -> str:
    """The run's status, and whether its client was a limit (its timings are then not trustworthy)."""
    return f"{r['status']}, client saturated" if r.get("client_saturated") else str(r["status"])


def print_compact(result: Summary) -> None:
    """One row per run: its id prefix, when and where it ran, what it measured, and its speed and cost."""
    rows = _ordered(result)
    cost = {r["run_id"]: r.get("usd_per_m_output_tokens") for r in result.tco.to_pylist()}
    short = _prefixes([r["run_id"] for r in rows])
    cells = [
        [
            short[r["run_id"]],
            r["started"].strftime("%Y-%m-%d %H:%M") if r["started"] is not None else "-",
            escape(str(r["host"])),
            escape(str(r["model_name"])),
            escape(str(r["workload"])),
            str(r["concurrency"]),
            escape(_status(r)),
            f"{r['n']} / {r['errors']}",
            fmt(r["ttft_p50_ms"]),
            number(r["output_tok_s"]),
            usd(cost.get(r["run_id"])),
        ]
        for r in rows
    ]
    print_table("Measured runs (warm-up excluded)", _COMPACT, cells)
    out.print(
        f"{len(rows)} run(s). $/1M output: cost per 1M output tokens on the owned basis ('-': not priced; the full "
        "card says why). `tcobench summary --run ID` prints a run's full card (every metric and the cost "
        "assumptions); --select COLUMNS prints other columns.",
        style="dim",
        highlight=False,
    )
