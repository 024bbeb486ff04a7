"""The per-run summary tables that `tcobench run` and `tcobench summary` print."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
from rich.markup import escape

from tcobench.cli._common import fmt, num, usd
from tcobench.cli._fit import Col, fits, print_table, terminal_width

__all__ = ["print_assumptions", "print_runs"]

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


def _steady(r: dict[str, Any]) -> str:
    """The steady state (view steady_window): its share of the measured window and its figures; short_steady
    says how to get a longer one."""
    share = r.get("steady_share")
    if share is None:
        return "-"
    figures = (
        f"{share:.0%} of the window; {fmt(r.get('steady_output_tok_s'))} tok/s, TPOT p50 "
        f"{fmt(r.get('steady_tpot_p50_ms'))} ms"
    )
    if r.get("short_steady"):
        return f"short_steady: {figures}; under 50% at full load: run more requests or use --duration"
    return figures


def _hardware(c: dict[str, Any]) -> str:
    if not c:
        return "-"
    return f"{c['gpu_count']} x {c['gpu_name']}" if c["gpu_name"] and c["gpu_count"] else (c["gpu_name"] or "CPU")


_METRICS: list[tuple[str, Cell]] = [
    ("started (UTC)", lambda r, c: r["started"].strftime("%Y-%m-%d %H:%M:%S")),
    ("host", lambda r, c: str(r["host"])),
    ("hardware", lambda r, c: _hardware(c)),
    ("priced as", lambda r, c: c.get("hardware_key") or "-"),
    ("engine", lambda r, c: f"{r['engine_name']} {r['engine_version']}"),
    ("model", lambda r, c: str(r["model_name"])),
    ("workload / mode", lambda r, c: f"{r['workload']} / {r['load_mode']}"),
    (
        "concurrency",
        lambda r, c: (
            str(r["concurrency"])
            + (
                f" (reached {r['concurrency_reached']})"
                if r.get("concurrency_reached") not in (None, r["concurrency"])
                else ""
            )
        ),
    ),
    ("status", lambda r, c: str(r["status"])),
    ("requests measured / errors", lambda r, c: f"{r['n']} / {r['errors']}"),
    ("stopped by", lambda r, c: _stop(r)),
    ("client self-check", lambda r, c: _client(r)),
    ("input tokens asked -> mean / p50 / p99", lambda r, c: _shape(r, "isl")),
    ("output tokens asked -> mean / p50 / p99", lambda r, c: _shape(r, "osl")),
    ("shape asked vs served", lambda r, c: _shape_check(c)),
    ("token counts from", lambda r, c: str(r.get("token_count_source") or "-")),
    (
        "prompt tokens served from cache",
        lambda r, c: "-" if r.get("cached_share") is None else f"{r['cached_share']:.1%}",
    ),
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
    ("steady state (all streams busy)", lambda r, c: _steady(r)),
    ("cost per 1M output tokens", lambda r, c: _cost(r, c, "usd_per_m_output_tokens")),
    ("cost per 1M total tokens", lambda r, c: _cost(r, c, "usd_per_m_total_tokens")),
    ("requests within SLO", lambda r, c: _slo(c)),
    ("goodput tok/s", lambda r, c: fmt(c.get("goodput_tok_s"))),
    ("cost per 1M good tokens", lambda r, c: _cost(r, c, "usd_per_m_good_tokens")),
]


def _columns(chunk: list[dict[str, Any]], costs: dict[str, dict[str, Any]]) -> tuple[list[Col], list[list[str]]]:
    # a run's column wraps its text (a long model name) only when a lone run is wider than the terminal
    cols = [Col("metric", "left", wrap=True)] + [Col(f"run {row['run_id'][:12]}", wrap=True) for row in chunk]
    cells = [[label, *[escape(cell(row, costs.get(row["run_id"], {}))) for row in chunk]] for label, cell in _METRICS]
    return cols, cells


def _shape_check(c: dict[str, Any]) -> str:
    """View run_shape's verdict: within the tolerance, or the mismatch with its likely cause."""
    if c.get("shape_mismatch") is None:
        return "-"
    if c["shape_mismatch"]:
        return f"MISMATCH: {c['shape_note']}"
    return f"ok (means within {c['shape_tolerance']:.0%} of the asked)"


def print_runs(runs: pa.Table, tco: pa.Table, goodput: pa.Table | None = None, shapes: pa.Table | None = None) -> None:
    """One column per run (metrics down the side), oldest run first (then host, concurrency), as many runs per
    table as the terminal's width takes; ``shapes`` (view run_shape) adds the asked-vs-served verdict."""
    costs = {row["run_id"]: row for row in tco.to_pylist()}
    for extra in [*(goodput.to_pylist() if goodput is not None else []), *(shapes.to_pylist() if shapes else [])]:
        costs[extra["run_id"]] = {**costs.get(extra["run_id"], {}), **extra}
    rows = sorted(runs.to_pylist(), key=lambda r: (r["started"], r["host"], r["concurrency"]))
    width, chunk = terminal_width(), list[dict[str, Any]]()
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
    from tcobench.tasks.store.rows import TcoRow, TcoSourcesRow, typed_rows

    seen: set[tuple[str, str, str, float]] = set()
    cited = {(s["run_id"], s["term"]): s for s in typed_rows(sources, TcoSourcesRow)}
    for row in typed_rows(tco, TcoRow):
        priced_as = (row["hardware_key"], row["site_key"], row["ops_key"], row["utilisation"])
        if priced_as in seen:
            continue
        seen.add(priced_as)
        lt = row["lifetime_months"]
        table: list[list[str]] = [
            [
                "hardware",
                usd(row["hardware_usd_month"]),
                f"({usd(row['purchase_usd'])} + {usd(row['server_share_usd'])} server share) / {lt} months",
            ],
            [
                "power",
                usd(row["power_usd_month"]),
                f"{fmt(row['power_w'])} W x PUE {row['pue']} x {num(row['hours_per_month'])} h x "
                f"{usd(row['kwh_usd'])}/kWh ({row['power_basis']})",
            ],
            [
                "ops labour",
                usd(row["ops_usd_month"]),
                f"{num(row['ops_hours_per_month'])} h x {usd(row['hourly_usd'])}/h",
            ],
            [
                "adaptation",
                usd(row["adaptation_usd_month"]),
                f"{num(row['adaptation_days'])} days x {usd(row['daily_usd'])}/day / {lt} months",
            ],
            [
                "total",
                usd(row["total_usd_month"]),
                f"tokens/month = aggregate tok/s x 3600 x {num(row['hours_per_month'])} h x utilisation "
                f"{row['utilisation']:.0%}",
            ],
        ]
        for term, key in (("hardware", row["hardware_key"]), ("site", row["site_key"]), ("ops", row["ops_key"])):
            src = cited.get((row["run_id"], term))
            source, as_of = (src["source"], src["as_of"]) if src else (None, None)
            table.append([f"source: {term}", "", f"{key}: {source} (as of {as_of})"])
        cols = [Col("term", "left"), Col("USD/month"), Col("inputs", "left", wrap=True)]
        print_table(
            f"Cost per month behind those numbers: {row['hardware_key']}",
            cols,
            [[escape(cell) for cell in r] for r in table],
        )
