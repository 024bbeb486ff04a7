"""The per-run summary tables that `tcobench run` and `tcobench summary` print."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa
from rich.markup import escape
from rich.table import Table

from ._common import fmt, num, out, usd

if TYPE_CHECKING:
    from tcobench.tasks.rows import RunSummaryRow, TcoRow

__all__ = ["print_assumptions", "print_runs"]

_RUNS_PER_TABLE = 6
_METRICS: list[tuple[str, Callable[[RunSummaryRow, TcoRow | None], str]]] = [
    ("model", lambda r, c: str(r["model_name"])),
    ("engine", lambda r, c: f"{r['engine_name']}"),
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


def print_runs(runs: pa.Table, tco: pa.Table) -> None:
    """One column per run (metrics down the side), a table per six runs."""
    from tcobench.tasks.rows import RunSummaryRow, TcoRow, typed_rows

    costs = {row["run_id"]: row for row in typed_rows(tco, TcoRow)}
    rows = typed_rows(runs, RunSummaryRow)
    for start in range(0, len(rows), _RUNS_PER_TABLE):
        chunk = rows[start : start + _RUNS_PER_TABLE]
        table = Table(title="Measured runs (warm-up excluded)", header_style="bold")
        table.add_column("metric")
        for row in chunk:
            table.add_column(f"run {row['run_id'][:8]}", justify="right")
        for label, cell in _METRICS:
            table.add_row(label, *[escape(cell(row, costs.get(row["run_id"]))) for row in chunk])
        out.print(table)


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
        table = Table(title=f"Cost per month behind those numbers: {row['hardware_key']}", header_style="bold")
        for name in ("term", "USD/month", "inputs"):
            table.add_column(name, justify="right" if name == "USD/month" else "left")
        table.add_row(
            "hardware",
            usd(row["hardware_usd_month"]),
            f"({usd(row['purchase_usd'])} + {usd(row['server_share_usd'])} server share) / {lt} months",
        )
        table.add_row(
            "power",
            usd(row["power_usd_month"]),
            f"{fmt(row['power_w'])} W x PUE {row['pue']} x {num(row['hours_per_month'])} h x "
            f"{usd(row['kwh_usd'])}/kWh ({row['power_basis']})",
        )
        table.add_row(
            "ops labour",
            usd(row["ops_usd_month"]),
            f"{num(row['ops_hours_per_month'])} h x {usd(row['hourly_usd'])}/h",
        )
        table.add_row(
            "adaptation",
            usd(row["adaptation_usd_month"]),
            f"{num(row['adaptation_days'])} days x {usd(row['daily_usd'])}/day / {lt} months",
        )
        table.add_row(
            "total",
            usd(row["total_usd_month"]),
            f"tokens/month = aggregate tok/s x 3600 x {num(row['hours_per_month'])} h x "
            f"utilisation {row['utilisation']:.0%}",
        )
        for term, key in (("hardware", row["hardware_key"]), ("site", row["site_key"]), ("ops", row["ops_key"])):
            src = cited.get((row["run_id"], term))
            source, as_of = (src["source"], src["as_of"]) if src else (None, None)
            table.add_row(f"source: {term}", "", f"{key}: {source} (as of {as_of})")
        out.print(table)  # fmt: skip
