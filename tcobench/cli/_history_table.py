"""`tcobench history`'s output: one table with a row per series, each series' runs in full on request, and the
flagged changes one line each (tasks/analysis/history.py computes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from tcobench.cli._common import out, usd
from tcobench.cli._fit import Col, number, print_table

if TYPE_CHECKING:
    from tcobench.tasks.analysis.history import Point, Series

__all__ = ["print_flags", "print_overview", "print_series"]

_OVERVIEW_COLS = [
    Col("host", "left"),
    Col("GPU", "left", drop=5),
    Col("model", "left", wrap=True, drop=3),
    Col("workload", "left", wrap=True, drop=4),
    Col("c"),
    Col("runs", drop=6),
    Col("last night", "left", drop=2),
    Col("decode tok/s p50"),
    Col("$/1M out"),
    Col("$/1M change", drop=1),
    Col("flagged changes", "left", wrap=True),
]


def _flag_cell(s: Series) -> str:
    """'none', or how many flagged changes the series has and its latest one."""
    if not s.flags:
        return "none"
    point, change = s.flags[-1]
    latest = f"{point.date} {change.metric} {change.change_pct:+.1f}%"
    text = latest if len(s.flags) == 1 else f"{len(s.flags)}, latest {latest}"
    return f"[bold red]{escape(text)}[/]"


def print_overview(found: list[Series]) -> None:
    """One row per series: its latest run's decode rate and cost, the cost's change against the runs before it,
    and its flagged changes."""
    rows = []
    for s in found:
        last = s.points[-1]
        rows.append(
            [
                escape(s.host),
                escape(s.gpu_name or "CPU"),
                escape(s.model_name),
                escape(s.workload),
                str(s.concurrency),
                str(len(s.points)),
                last.date,
                number(last.decode_tok_s_p50),
                usd(last.usd_per_m_output_tokens),
                _pct(last.cost_change_pct),
                _flag_cell(s),
            ]
        )
    print_table("Nightly series, one row each: the latest run's figures", _OVERVIEW_COLS, rows)


_SERIES_COLS = [
    Col("night"),
    Col("date", "left"),
    Col("batch", "left", drop=4),
    Col("run", "left", drop=2),
    Col("decode tok/s p50"),
    Col("TTFT p50 ms"),
    Col("output tok/s", drop=3),
    Col("$/1M out"),
    Col("$/1M change", drop=1),
    Col("decode change"),
    Col("p", drop=5),
    Col("effect", drop=5),
    Col("flag", "left", wrap=True),
    Col("what changed", "left", wrap=True, drop=6),
]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"


def print_series(s: Series) -> None:
    """Every run of one series, its changes against the runs before it and what changed in its provenance."""
    rows = []
    for p in s.points:
        decode = next((c for c in p.changes if c.metric == "decode_tok_s"), None)
        flagged = ", ".join(f"{c.metric} {c.change_pct:+.1f}%" for c in p.changes if c.flagged)
        rows.append(
            [
                str(p.night),
                p.date,
                escape(p.batch_id[:12]),
                p.run_id[:12],
                number(p.decode_tok_s_p50),
                number(p.ttft_ms_p50),
                number(p.output_tok_s),
                usd(p.usd_per_m_output_tokens),
                _pct(p.cost_change_pct),
                _pct(decode.change_pct if decode else None),
                f"{decode.p_value:.2g}" if decode else "-",
                f"{decode.effect:+.2f}" if decode else "-",
                f"[bold red]{escape(flagged)}[/]" if flagged else "",
                escape("; ".join(p.provenance_changes)),
            ]
        )
    print_table(f"{escape(s.key)} ({escape(s.gpu_name or 'CPU')})", _SERIES_COLS, rows)


def _cost_change(p: Point) -> str:
    before, now = p.prior_usd_per_m_output_tokens, p.usd_per_m_output_tokens
    if before is None or now is None:
        return "cost per 1M output tokens: not priced"
    return f"cost per 1M output tokens {usd(before)} -> {usd(now)} ({_pct(p.cost_change_pct)})"


def print_flags(found: list[Series], flags: int, rule: str) -> None:
    """The flagged changes, one line each with the test's figures and what the change did to cost."""
    if not flags:
        out.print(f"{len(found)} series; no change beyond run-to-run noise ({rule}).", highlight=False)
        return
    flagged_series = sum(1 for s in found if s.flags)
    out.print(
        f"[bold]{flags} flagged change(s)[/] in {flagged_series} of {len(found)} series ({rule}):", highlight=False
    )
    for s in found:
        for p, c in s.flags:
            direction = "better" if c.better else "worse"
            out.print(
                f"  {escape(s.key)}, {p.date} (run {escape(p.run_id)}, batch {escape(p.batch_id)}): {c.metric} "
                f"{c.prior_median:.4g} -> {c.median:.4g} ({c.change_pct:+.1f}%, {direction}), p={c.p_value:.2g}, "
                f"effect {c.effect:+.2f}; {_cost_change(p)}"
                + (f"; {escape('; '.join(p.provenance_changes))}" if p.provenance_changes else ""),
                highlight=False,
            )
