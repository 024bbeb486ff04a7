"""The client-headroom scenario and its figures, shared by client_headroom.py (our client) and anchor.py (aiperf)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tcobench.tasks.analysis.quantile import quantile


@dataclass(frozen=True)
class Scenario:
    name: str
    ttft_ms: float
    itl_ms: float
    tokens: int
    levels: tuple[int, ...]
    requests_per_slot: int  # measured requests = concurrency x this (at least min_requests)
    min_requests: int


def figures(
    sc: Scenario, ttft_ns: list[int], gaps_ns: list[int], ok: int, errors: int, tokens: int, window_s: float
) -> dict[str, Any]:
    """The same figures for either client, from per-request TTFTs and every inter-chunk gap (ns)."""
    ttft_err = [t / 1e6 - sc.ttft_ms for t in ttft_ns]
    gap_err = [g / 1e6 - sc.itl_ms for g in gaps_ns]
    return {
        "ttft_ms": sc.ttft_ms,
        "itl_ms": sc.itl_ms,
        "tokens": sc.tokens,
        "ok": ok,
        "errors": errors,
        "window_s": window_s,
        "req_s": ok / window_s if window_s else None,
        "tok_s": tokens / window_s if window_s else None,
        "ttft_err_p50_ms": quantile(ttft_err, 0.5),
        "ttft_err_p99_ms": quantile(ttft_err, 0.99),
        "itl_err_p50_ms": quantile(gap_err, 0.5),
        "itl_err_p99_ms": quantile(gap_err, 0.99),
    }
