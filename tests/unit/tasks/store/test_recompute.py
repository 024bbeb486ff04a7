"""Independent recomputation: cost per 1M output tokens of sampled runs, straight from the store's Parquet data files
with pyarrow and the formula of docs/cost-model.md written out again here, must match the `tco` view to the cent.

Nothing here goes through DuckDB or the SQL views: the compacted store's data folder is read file by file, the
price table is the validated pydantic model, and energy comes from the telemetry samples' hardware counter.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tcobench.schemas import PriceTable
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.compact import compact_store
from tcobench.tasks.store.query import connect
from tests.unit.factories import write_fleet

HOURS_PER_MONTH = 730.0


@pytest.fixture(scope="module")
def compacted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("recompute")
    write_fleet(store, nights=4)
    compact_store(store, keep_days=0)  # merged files only, the pre-merge ones deleted: the folder is the store
    return store


def _table(store: Path, table: str) -> list[dict[str, Any]]:
    files = sorted((store / "data" / "main" / table).rglob("*.parquet"))
    assert files and not [f for f in files if f.name.endswith("-delete.parquet")]
    rows: list[dict[str, Any]] = pa.concat_tables(
        [pq.read_table(f) for f in files], promote_options="permissive"
    ).to_pylist()
    return rows


def _energy(run: dict[str, Any], samples: list[dict[str, Any]]) -> tuple[float, float | None] | None:
    """(mean W over the samples bracketing the window, idle W) from the energy counter, or None if not valid."""
    start, end = run["measure_start_ns"], run["measure_end_ns"]
    by_device: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for s in samples:
        by_device[s["device_index"]].append(s)
    joules, span = 0.0, 0.0
    for rows in by_device.values():
        rows.sort(key=lambda s: s["ts_ns"])
        before = [s for s in rows if s["ts_ns"] <= start]
        after = [s for s in rows if s["ts_ns"] >= end]
        first = before[-1] if before else rows[0]  # the samples bracketing the window, or the nearest ones
        last = after[0] if after else rows[-1]
        if last["ts_ns"] == first["ts_ns"]:
            return None  # fewer than 2 samples
        joules += (last["energy_mj"] - first["energy_mj"]) / 1e3
        span = max(span, (last["ts_ns"] - first["ts_ns"]) / 1e9)
    if span > 1.1 * (end - start) / 1e9:
        return None  # the counter's delta spread over a span much wider than the window
    idle = [s["power_mw"] for s in samples if s["phase"] == "idle"]
    return joules / span, (sum(idle) / len(idle) / 1e3 if idle else None)


def _usd_per_m_output(
    run: dict[str, Any], requests: list[dict[str, Any]], samples: list[dict[str, Any]], prices: PriceTable
) -> float:
    ok = [r for r in requests if r["phase"] == "measure" and r["error"] is None]
    tok_s = sum(r["output_tokens"] for r in ok) / ((run["measure_end_ns"] - run["measure_start_ns"]) / 1e9)
    hw, site, ops = prices.hardware[run["hardware_key"]], prices.site[run["site_key"]], prices.ops[run["ops_key"]]
    units = run["gpu_count"] / hw.accelerators if hw.accelerators > 0 and (run["gpu_count"] or 0) > 0 else 1.0
    measured = _energy(run, samples)
    load_w, idle_w = hw.load_watts * units, hw.idle_watts * units
    if measured is not None:
        load_w, idle_w = measured[0], measured[1] if measured[1] is not None else idle_w
    u = run["utilisation"]
    power_w = u * load_w + (1 - u) * idle_w
    monthly = (
        (hw.purchase_usd + hw.server_share_usd) * units / hw.lifetime_months
        + power_w * site.pue * HOURS_PER_MONTH / 1000 * site.kwh_usd
        + ops.hours_per_host_month * ops.hourly_usd
        + hw.adaptation_days * ops.daily_usd / hw.lifetime_months
    )
    return float(monthly / (tok_s * 3600 * HOURS_PER_MONTH * u) * 1e6)


def test_cost_per_million_output_tokens_matches_the_view_to_the_cent(compacted: Path) -> None:
    prices = load_prices(None)
    runs, requests, telemetry = (_table(compacted, t) for t in ("runs", "requests", "telemetry"))
    sample = random.Random(3).sample(runs, 8)
    con = connect(compacted, prices, needs={"tco"})
    try:
        from_view = dict(con.execute("SELECT run_id, usd_per_m_output_tokens FROM tco").fetchall())
    finally:
        con.close()
    for run in sample:
        mine = _usd_per_m_output(
            run,
            [r for r in requests if r["run_id"] == run["run_id"]],
            [s for s in telemetry if s["run_id"] == run["run_id"]],
            prices,
        )
        theirs = from_view[run["run_id"]]
        assert round(mine, 2) == round(theirs, 2), run["run_id"]
        assert mine == pytest.approx(theirs, rel=1e-9), run["run_id"]
