"""night_cost_markdown: the cost part of a night's closing summary (`tcobench nightly`, its artifact and webhook).

Per model and workload, each platform's cost per 1M output tokens that night (owned basis, at its cheapest
concurrency level), and the cheapest platform with how many times as cost-efficient it is as the next one: view
night_platform_cost. The nightly compares no sides and checks no claim, so this is a ranking, labelled as such,
never a verdict.
"""

from __future__ import annotations

from typing import TypedDict

from tcobench.schemas import PriceTable, config_label
from tcobench.schemas.units import usd_per_m
from tcobench.tasks.report.assets.context import usd
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.rows import fetch_rows
from tcobench.tasks.store.store import StoreRef

__all__ = ["NIGHT_COST_SQL", "NightPlatformCostRow", "night_cost_markdown"]

NIGHT_COST_SQL = "SELECT * FROM night_cost($batch)"  # macro night_cost (tcobench/sql/macros)


class NightPlatformCostRow(TypedDict):
    """View night_platform_cost (tcobench/sql/cost/night_platform_cost.sql)."""

    batch_id: str
    model_name: str
    workload: str
    hardware_key: str
    gpu: str
    levels: int
    runs: int
    output_tokens_per_usd: float
    concurrency: int
    engine_name: str
    config_id: str
    serving_config: str | None
    platform_rank: int
    next_gpu: str | None
    next_hardware_key: str | None
    next_output_tokens_per_usd: float | None
    advantage_over_next: float | None


def _cell(text: object) -> str:
    return str(text).replace("|", "/")


def night_cost_markdown(store: StoreRef, prices: PriceTable, batch_id: str) -> str:
    """The night's cost per 1M output tokens per platform, and the cheapest platform per model and workload."""
    con = connect(store, prices, needs=("night_cost",))
    try:
        rows = fetch_rows(con, NIGHT_COST_SQL, NightPlatformCostRow, {"batch": batch_id})
    finally:
        con.close()
    if not rows:
        return (
            "No cost for this night: no run with status ok or partial has a price (its host's hardware key needs a "
            "row in the price table).\n"
        )
    lines = [
        "## Cost per 1M output tokens this night (owned basis)",
        "",
        "| model | workload | platform | priced as | $/1M output tokens | at | runs |",
        "|---|---|---|---|---:|---|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {_cell(r['model_name'])} | {_cell(r['workload'])} | {_cell(r['gpu'])} | {_cell(r['hardware_key'])} "
            f"| {usd(usd_per_m(r['output_tokens_per_usd']))} | c={r['concurrency']} "
            f"({_cell(config_label(r['serving_config']) or r['engine_name'])}) "
            f"| {r['runs']} |"
        )
    lines += [
        "",
        "Each platform at its cheapest serving configuration and concurrency level of the night. Cheapest platform "
        "per model and workload (a ranking of this night's platforms, not a verdict: the nightly compares no sides "
        "and checks no claim):",
    ]
    lines += [_cheapest(r) for r in rows if r["platform_rank"] == 1]
    return "\n".join(lines) + "\n"


def _cheapest(r: NightPlatformCostRow) -> str:
    head = (
        f"- {r['model_name']} / {r['workload']}: cheapest {r['gpu']} ({r['hardware_key']}), "
        f"{usd(usd_per_m(r['output_tokens_per_usd']))} per 1M output tokens"
    )
    if r["advantage_over_next"] is None or r["next_output_tokens_per_usd"] is None:
        return f"{head}; the only priced platform, nothing to rank it against"
    return (
        f"{head}, {r['advantage_over_next']:.2f}x as cost-efficient as the next, {r['next_gpu']} "
        f"({r['next_hardware_key']}) at {usd(usd_per_m(r['next_output_tokens_per_usd']))}"
    )
