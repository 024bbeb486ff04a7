"""The per-run summary tables that `tcobench run` and `tcobench summary` print."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from rich.markup import escape
from rich.table import Table

from ._common import fmt, num, out, usd

if TYPE_CHECKING:
    pass

__all__ = ["print_assumptions", "print_runs"]

_RUNS_PER_TABLE = 6
Cell = Callable[[dict[str, Any], dict[str, Any]], str]  # (run_summary row, tco + goodput row) -> text


def _slo(c: dict[str, Any]) -> str:
    keys = (("TTFT", "slo_ttft_ms"), ("TPOT", "slo_tpot_ms"), ("ITL", "slo_itl_ms"))
    targets = [f"{name} <= {c[key]:g} ms" for name, key in keys if c.get(key) is not None]
    if not targets:
        return "- (no SLO targets)"
    met = "-" if c.get("slo_met") is None else ("met" if c["slo_met"] else "not met")
    fraction = c.get("good_fraction")
    share = f"{c['good']}/{c['n']} = {fraction:.1%}" if fraction is not None else "-"
    return f"{share} ({', '.join(targets)}; {met} at {c['slo_quantile']:.0%})"


def _cost(r: dict[str, Any], c: dict[str, Any], key: str) -> str:
    """A cost per 1M tokens, or "-" with the reason it cannot be given."""
    if c.get(key) is not None:
        return usd(c[key])
    if not r.get("ok"):
        return "- (no request succeeded)"
    if c.get("total_usd_month") is None:
        return "- (no price row for this host)"
    if c.get("usd_per_m_output_tokens") is None:
        return "- (no token counts: the server reported none and no tokenizer was found)"
    if key == "usd_per_m_good_tokens":
        return "- (no SLO targets)" if c.get("slo_met") is None else "- (no request met the SLO)"
    return "-"


def _shape(r: dict[str, Any], side: str) -> str:
    """Requested shape, then the achieved mean / p50 / p99 as the server counted it."""
    spec = r.get(f"{'input' if side == 'isl' else 'output'}_tokens_spec")
    requested = r.get(f"requested_{side}_mean")
    asked = spec or (fmt(requested, 0) if requested is not None else "-")
    achieved = " / ".join(fmt(r.get(f"{side}_{k}"), 0) for k in ("mean", "p50", "p99"))
    return f"{asked} -> {achieved}"


def _stop(r: dict[str, Any]) -> str:
    rule = r.get("stop_rule") or "-"
    flagged = r.get("in_flight_at_stop") or 0
    return f"{rule} ({flagged} in flight at the end)" if flagged else rule


def _client(r: dict[str, Any]) -> str:
    """The client's self-check: ok, or SATURATED with why (its timings are then not trustworthy)."""
    if r.get("client_saturated") is None:
        return "-"
    return f"SATURATED: {r.get('client_check_note')}" if r["client_saturated"] else "ok (not saturated)"


_METRICS: list[tuple[str, Cell]] = [
    ("model", lambda r, c: str(r["model_name"])),
    ("engine", lambda r, c: f"{r['engine_name']}"),
    ("workload / mode", lambda r, c: f"{r['workload']} / {r['load_mode']}"),
    ("concurrency", lambda r, c: str(r["concurrency"])),
    ("status", lambda r, c: str(r["status"])),
    ("requests measured / errors", lambda r, c: f"{r['n']} / {r['errors']}"),
    ("stopped by", lambda r, c: _stop(r)),
    ("client self-check", lambda r, c: _client(r)),
    ("input tokens asked -> mean / p50 / p99", lambda r, c: _shape(r, "isl")),
    ("output tokens asked -> mean / p50 / p99", lambda r, c: _shape(r, "osl")),
    ("token counts from", lambda r, c: str(r.get("token_count_source") or "-")),
    ("TTFT p50 / p90 / p99 (ms)", lambda r, c: " / ".join(fmt(r[f"ttft_{p}_ms"]) for p in ("p50", "p90", "p99"))),
    ("ITL p50 / p90 / p99 (ms)", lambda r, c: " / ".join(fmt(r[f"itl_{p}_ms"]) for p in ("p50", "p90", "p99"))),
    ("e2e p50 / p90 / p99 (ms)", lambda r, c: " / ".join(fmt(r[f"e2e_{p}_ms"], 0) for p in ("p50", "p90", "p99"))),
    (
        "decode tok/s per request, mean / p50",
        lambda r, c: f"{fmt(r['req_decode_tok_s_mean'])} / {fmt(r['req_decode_tok_s_p50'])}",
    ),
    ("engine-reported decode tok/s, mean", lambda r, c: fmt(r["server_decode_tok_s_mean"])),
    ("aggregate output tok/s", lambda r, c: fmt(r["output_tok_s"])),
    ("aggregate total tok/s", lambda r, c: fmt(r["total_tok_s"])),
    ("cost per 1M output tokens", lambda r, c: _cost(r, c, "usd_per_m_output_tokens")),
    ("cost per 1M total tokens", lambda r, c: _cost(r, c, "usd_per_m_total_tokens")),
    ("requests within SLO", lambda r, c: _slo(c)),
    ("goodput tok/s", lambda r, c: fmt(c.get("goodput_tok_s"))),
    ("cost per 1M good tokens", lambda r, c: _cost(r, c, "usd_per_m_good_tokens")),
]


def print_runs(runs: pa.Table, tco: pa.Table, goodput: pa.Table | None = None) -> None:
    """One column per run (metrics down the side), a table per six runs."""
    costs = {row["run_id"]: row for row in tco.to_pylist()}
    for row in goodput.to_pylist() if goodput is not None else []:
        costs[row["run_id"]] = {**costs.get(row["run_id"], {}), **row}
    rows = runs.to_pylist()
    for start in range(0, len(rows), _RUNS_PER_TABLE):
        chunk = rows[start : start + _RUNS_PER_TABLE]
        table = Table(title="Measured runs (warm-up excluded)", header_style="bold")
        table.add_column("metric")
        for row in chunk:
            table.add_column(f"run {row['run_id'][:8]}", justify="right")
        for label, cell in _METRICS:
            table.add_row(label, *[escape(cell(row, costs.get(row["run_id"], {}))) for row in chunk])
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
