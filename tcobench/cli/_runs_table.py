"""The per-run summary tables that `tcobench run` and `tcobench summary` print."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa
from rich.markup import escape

from ._common import fmt, num, usd
from ._fit import Col, fits, print_table, terminal_width

if TYPE_CHECKING:
    from tcobench.tasks.rows import RunSummaryRow, TcoRow

__all__ = ["print_assumptions", "print_runs"]


def _hardware(c: TcoRow | None) -> str:
    if c is None:
        return "-"
    return f"{c['gpu_count']} x {c['gpu_name']}" if c["gpu_name"] and c["gpu_count"] else (c["gpu_name"] or "CPU")


_METRICS: list[tuple[str, Callable[[RunSummaryRow, TcoRow | None], str]]] = [
    ("started (UTC)", lambda r, c: r["started"].strftime("%Y-%m-%d %H:%M:%S")),
    ("host", lambda r, c: str(r["host"])),
    ("hardware", lambda r, c: _hardware(c)),
    ("priced as", lambda r, c: c["hardware_key"] if c else "-"),
    ("engine", lambda r, c: f"{r['engine_name']} {r['engine_version']}"),
    ("model", lambda r, c: str(r["model_name"])),
    ("workload / mode", lambda r, c: f"{r['workload']} / {r['load_mode']}"),
    ("concurrency", lambda r, c: str(r["concurrency"])),
    ("status", lambda r, c: str(r["status"])),
    ("requests measured / errors", lambda r, c: f"{r['n']} / {r['errors']}"),
    ("TTFT p50 / p90 / p99 (ms)", lambda r, c: " / ".join(fmt(v) for v in (r["ttft_p50_ms"], r["ttft_p90_ms"],
                                                                            r["ttft_p99_ms"]))),
    ("ITL p50 / p90 / p99 (ms)", lambda r, c: " / ".join(fmt(v) for v in (r["itl_p50_ms"], r["itl_p90_ms"],
                                                                           r["itl_p99_ms"]))),
    ("e2e p50 / p90 / p99 (ms)", lambda r, c: " / ".join(fmt(v, 0) for v in (r["e2e_p50_ms"], r["e2e_p90_ms"],
                                                                              r["e2e_p99_ms"]))),
    (
        "decode tok/s per request, mean / p50",
        lambda r, c: f"{fmt(r['req_decode_tok_s_mean'])} / {fmt(r['req_decode_tok_s_p50'])}",
    ),
    ("engine-reported decode tok/s, mean", lambda r, c: fmt(r["server_decode_tok_s_mean"])),
    ("aggregate output tok/s", lambda r, c: fmt(r["output_tok_s"])),
    ("aggregate total tok/s", lambda r, c: fmt(r["total_tok_s"])),
    ("cost per 1M output tokens", lambda r, c: usd(c["usd_per_m_output_tokens"] if c else None)),
    ("cost per 1M total tokens", lambda r, c: usd(c["usd_per_m_total_tokens"] if c else None)),
]  # fmt: skip


def _columns(chunk: list[RunSummaryRow], costs: dict[str, TcoRow]) -> tuple[list[Col], list[list[str]]]:
    # a run's column wraps its text (a long model name) only when a lone run is wider than the terminal
    cols = [Col("metric", "left", wrap=True)] + [Col(f"run {row['run_id'][:12]}", wrap=True) for row in chunk]
    cells = [[label, *[escape(cell(row, costs.get(row["run_id"]))) for row in chunk]] for label, cell in _METRICS]
    return cols, cells


def print_runs(runs: pa.Table, tco: pa.Table) -> None:
    """One column per run (metrics down the side), oldest run first (then host, concurrency), as many runs per
    table as the terminal's width takes."""
    from tcobench.tasks.rows import RunSummaryRow, TcoRow, typed_rows

    costs = {row["run_id"]: row for row in typed_rows(tco, TcoRow)}
    rows = sorted(typed_rows(runs, RunSummaryRow), key=lambda r: (r["started"], r["host"], r["concurrency"]))
    width, chunk = terminal_width(), list[RunSummaryRow]()
    for row in rows:
        # as many runs as fit with only the metric names wrapped
        cols, cells = _columns([*chunk, row], costs)
        if chunk and not fits([Col(c.name, c.justify) for c in cols[1:]], [r[1:] for r in cells], width - 15):
            print_table("Measured runs (warm-up excluded)", *_columns(chunk, costs))
            chunk = []
        chunk.append(row)
    if chunk:
        print_table("Measured runs (warm-up excluded)", *_columns(chunk, costs))


def print_assumptions(tco: pa.Table, sources: pa.Table) -> None:
    """The cost terms per month with their inputs, and where each price comes from."""
    from tcobench.tasks.rows import TcoRow, TcoSourcesRow, typed_rows

    seen: set[tuple[str, str, str, float]] = set()
    cited = {(s["run_id"], s["term"]): s for s in typed_rows(sources, TcoSourcesRow)}
    for row in typed_rows(tco, TcoRow):
        priced_as = (row["hardware_key"], row["site_key"], row["ops_key"], row["utilisation"])
        if priced_as in seen:
            continue
        seen.add(priced_as)
        lt = row["lifetime_months"]
        table: list[list[str]] = [
            ["hardware", usd(row["hardware_usd_month"]),
             f"({usd(row['purchase_usd'])} + {usd(row['server_share_usd'])} server share) / {lt} months"],
            ["power", usd(row["power_usd_month"]),
             f"{fmt(row['power_w'])} W x PUE {row['pue']} x {num(row['hours_per_month'])} h x "
             f"{usd(row['kwh_usd'])}/kWh ({row['power_basis']})"],
            ["ops labour", usd(row["ops_usd_month"]),
             f"{num(row['ops_hours_per_month'])} h x {usd(row['hourly_usd'])}/h"],
            ["adaptation", usd(row["adaptation_usd_month"]),
             f"{num(row['adaptation_days'])} days x {usd(row['daily_usd'])}/day / {lt} months"],
            ["total", usd(row["total_usd_month"]),
             f"tokens/month = aggregate tok/s x 3600 x {num(row['hours_per_month'])} h x utilisation "
             f"{row['utilisation']:.0%}"],
        ]  # fmt: skip
        for term, key in (("hardware", row["hardware_key"]), ("site", row["site_key"]), ("ops", row["ops_key"])):
            src = cited.get((row["run_id"], term))
            source, as_of = (src["source"], src["as_of"]) if src else (None, None)
            table.append([f"source: {term}", "", f"{key}: {source} (as of {as_of})"])
        cols = [Col("term", "left"), Col("USD/month"), Col("inputs", "left", wrap=True)]
        print_table(f"Cost per month behind those numbers: {row['hardware_key']}", cols,
                    [[escape(cell) for cell in r] for r in table])  # fmt: skip
