"""units: the display conversions of figures that no view column holds, each written once.

A view converts its own columns (SQL, tcobench/sql). Python converts only what it computed itself from view
columns (a compare side's or a bootstrap replicate's night-weighted mean), by the formula of the view column it
stands beside; tests/unit/test_formulas_once.py finds any other copy.
"""

from __future__ import annotations

__all__ = ["tokens_per_kwh", "usd_per_m", "usd_per_m_term"]


def usd_per_m(tokens_per_usd: float) -> float:
    """USD per 1M tokens from tokens per USD: view platform_cost's ``usd_per_m_output_tokens``."""
    return 1e6 / tokens_per_usd


def usd_per_m_term(tokens_per_usd: float, term_usd_month: float, total_usd_month: float) -> float:
    """One monthly term's share of the cost per 1M tokens: view platform_cost's ``capital_usd_per_m_output_tokens``
    (and power, ops, adaptation), USD per 1M tokens x term / total; the terms add up to ``usd_per_m``."""
    return usd_per_m(tokens_per_usd) * term_usd_month / total_usd_month


def tokens_per_kwh(j_per_token: float) -> float:
    """Tokens per kWh from joules per token (1 kWh = 3.6e6 J): view efficiency's ``output_tokens_per_kwh``."""
    return 3.6e6 / j_per_token
