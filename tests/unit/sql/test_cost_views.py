"""Given / expect tests of the downtime term and the carbon column of the TCO views (tcobench/sql/cost) over a
simulated nightly history: every figure worked out here by hand, apart from the views' SQL."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from tcobench.schemas import FailureClass, PriceTable, RunRecord, RunStatus
from tests.unit.factories import T0_NS, make_prices, make_run
from tests.unit.sql.given_expect import given, run

H = 3_600_000_000_000  # ns per hour
DAY = 24 * H
MEASURED, ESTIMATED = "a/x-14", "a/x-13"  # the two runs that have a summary row (and so a TCO row)

# columns the downtime and carbon work added to view tco; every other column is the TCO without downtime
NEW_TCO_COLUMNS = {
    "downtime_usd_per_hour",
    "availability_nights",
    "availability",
    "platform_failures",
    "recovery_hours_mean",
    "downtime_min_nights",
    "downtime_usd_month",
    "downtime_basis",
    "total_with_downtime_usd_month",
    "usd_per_m_output_tokens_with_downtime",
    "grid_gco2e_per_kwh",
    "gco2e_per_m_output_tokens",
}


def _night(night: int, failed: bool = False, nightly: bool = True) -> RunRecord:
    """Host a's one cell (a/x) on night ``night``: 1 h ok, or 0.1 h failed with class platform; ``nightly`` False:
    the same run outside a nightly (no cell), which no availability counts."""
    start = T0_NS + night * DAY
    return make_run(
        run_id=f"a/x-{night}",
        batch_id=f"n{night:02}",
        host="a",
        cell="a/x" if nightly else None,
        hardware_key="test-hw",
        started_ns=start,
        finished_ns=start + (H // 10 if failed else H),
        status=RunStatus.failed if failed else RunStatus.ok,
        error="GPU not found" if failed else None,
        failure_class=FailureClass.platform if failed else None,
    )


def _history(nights: int, nightly: bool = True) -> list[RunRecord]:
    """Nights 1..``nights`` of host a; nights 5 and 6 fail (class platform: one outage of two nights), the others are
    ok for 1 h. Night 7 is the first ok night after the outage, 48 h after its first night."""
    return [_night(n, failed=n in (5, 6), nightly=nightly) for n in range(1, nights + 1)]


def _summary(run_id: str, night: int) -> dict[str, Any]:
    """run_summary's row as tco_scenarios reads it: 100 output tok/s, 110 tok/s in all."""
    return {
        "run_id": run_id,
        "batch_id": f"n{night:02}",
        "host": "a",
        "date": "2023-11-14",
        "started": dt.datetime(2023, 11, 14) + dt.timedelta(days=night),
        "engine_name": "llama.cpp",
        "engine_version": "b1234",
        "model_name": "test-model",
        "workload": "test-workload",
        "load_mode": "closed",
        "concurrency": 1,
        "status": "ok",
        "output_tok_s": 100.0,
        "total_tok_s": 110.0,
    }


def _energy(run_id: str, valid: bool) -> dict[str, Any]:
    """energy's row: 6 J per output token, 400 W at load, 120 W idle, over two devices (when valid)."""
    return {
        "run_id": run_id,
        "valid": valid,
        "mean_w": 400.0,
        "idle_w": 120.0,
        "devices": 2,
        "source": "nvml",
        "invalid_reason": None if valid else "no telemetry",
        "j_per_output_token": 6.0,
    }


def _section(prices: PriceTable, name: str) -> list[dict[str, Any]]:
    rows: dict[str, Any] = getattr(prices, name)
    return [{"key": key, **row.model_dump(mode="json")} for key, row in rows.items()]


def _view(
    view: str, nights: int, prices: PriceTable, min_nights: int | None = None, nightly: bool = True
) -> list[dict[str, Any]]:
    """The rows of ``view`` over ``_history(nights, nightly)``, the summary rows of the runs of nights 13 and 14 (the
    one of night 14 with measured energy), and ``prices`` (its rental row prices another platform)."""
    other = make_prices(rental={"hardware": "test-hw"})
    tables = {
        "runs": given("runs", *_history(nights, nightly)),
        "run_summary": [_summary(ESTIMATED, 13), _summary(MEASURED, 14)],
        "energy": [_energy(ESTIMATED, valid=False), _energy(MEASURED, valid=True)],
        "hardware": [*_section(prices, "hardware"), {**_section(other, "hardware")[0], "key": "other-hw"}],
        "site": _section(prices, "site"),
        "ops": _section(prices, "ops"),
        "rental": [{**_section(other, "rental")[0], "hardware": "other-hw"}],
    }
    setting = f"SET VARIABLE downtime_min_nights = {min_nights}; " if min_nights is not None else ""
    return run(view, tables, f"{setting}SELECT * FROM {view} ORDER BY ALL")


def _tco(
    nights: int, prices: PriceTable, min_nights: int | None = None, nightly: bool = True
) -> dict[str, dict[str, Any]]:
    """View tco's rows by run id (``_view``)."""
    return {r["run_id"]: r for r in _view("tco", nights, prices, min_nights, nightly)}


PRICED = make_prices(site={"grid_gco2e_per_kwh": 400.0}, ops={"downtime_usd_per_hour": 50.0})


def test_downtime_term_hand_worked_on_a_simulated_history() -> None:
    row = _tco(14, PRICED)[MEASURED]
    # 14 host nights, each 1 h scheduled (the median of the cell's ok nights); nights 5 and 6 down: 2 h of 14 h
    assert (row["availability_nights"], row["platform_failures"]) == (14, 1)
    assert row["availability"] == pytest.approx(1 - 2 / 14)
    # recovered at night 7: 48 h after night 5's start
    assert row["recovery_hours_mean"] == pytest.approx(48.0)
    # unavailability: 2/14 x 730 h x 50 USD/h = 5 214.29 USD/month
    # recovery: 1 failure / 14 nights x 730/24 nights a month = 2.1726 failures; x 48 h x 100 USD/h = 10 428.57
    unavailable = 2 / 14 * 730 * 50
    recovery = 1 / 14 * 730 / 24 * 48 * 100
    assert round(unavailable, 2) == 5_214.29 and round(recovery, 2) == 10_428.57
    assert round(row["downtime_usd_month"], 2) == 15_642.86
    assert row["downtime_basis"] == "measured: availability 0.8571 over 14 host nights, 1 platform failure(s)"
    # beside the total, never inside it: the total with downtime adds it
    assert row["total_with_downtime_usd_month"] == pytest.approx(row["total_usd_month"] + 15_642.857142857143)
    # 100 output tok/s x 3600 x 730 h x 0.5 = 131.4 M output tokens a month
    assert row["usd_per_m_output_tokens_with_downtime"] == pytest.approx(row["total_with_downtime_usd_month"] / 131.4)


def test_not_enough_history_leaves_the_term_out_and_the_total_unchanged() -> None:
    row = _tco(13, PRICED)[ESTIMATED]
    assert row["availability_nights"] == 13
    assert row["downtime_usd_month"] is None  # NULL, not 0
    assert row["downtime_basis"] == "not enough history: 13 of 14 host nights"
    assert row["total_with_downtime_usd_month"] == row["total_usd_month"]
    assert row["usd_per_m_output_tokens_with_downtime"] == row["usd_per_m_output_tokens"]


def test_the_history_needed_is_a_setting() -> None:
    rows = _tco(14, PRICED, min_nights=15)
    assert rows[MEASURED]["downtime_min_nights"] == 15
    assert rows[MEASURED]["downtime_usd_month"] is None
    assert rows[MEASURED]["downtime_basis"] == "not enough history: 14 of 15 host nights"
    assert _tco(13, PRICED, min_nights=13)[ESTIMATED]["downtime_usd_month"] is not None


def test_an_ops_row_without_a_downtime_rate_has_no_term() -> None:
    row = _tco(14, make_prices())[MEASURED]
    assert row["downtime_usd_month"] is None
    assert row["downtime_basis"] == "no downtime_usd_per_hour in the ops row"


def test_carbon_only_where_the_energy_is_measured() -> None:
    rows = _tco(14, PRICED)
    # 6 J per output token x 1e6 tokens = 6e6 J = 1.6667 kWh; x PUE 1.5 = 2.5 kWh; x 400 gCO2e/kWh = 1 000 gCO2e
    assert rows[MEASURED]["grid_gco2e_per_kwh"] == 400.0
    assert round(rows[MEASURED]["gco2e_per_m_output_tokens"], 6) == 1_000.0
    assert rows[ESTIMATED]["gco2e_per_m_output_tokens"] is None  # estimated power: no carbon figure
    assert _tco(14, make_prices())[MEASURED]["gco2e_per_m_output_tokens"] is None  # a site without an intensity


@pytest.mark.parametrize("nights", [13, 14])
def test_the_tco_without_downtime_is_unchanged_to_the_last_bit(nights: int) -> None:
    """Pricing downtime and carbon (and a history to price them from) changes only the new columns: every other
    column of view tco is bit for bit the one of a table without the new fields over the same runs outside a
    nightly (no availability at all)."""
    bare = _tco(nights, make_prices(), nightly=False)
    priced = _tco(nights, PRICED)
    assert set(bare) == set(priced) and ESTIMATED in priced
    assert any(row["downtime_usd_month"] is not None for row in priced.values()) == (nights == 14)
    for run_id, row in priced.items():
        old = {k: v for k, v in bare[run_id].items() if k not in NEW_TCO_COLUMNS}
        new = {k: v for k, v in row.items() if k not in NEW_TCO_COLUMNS}
        assert new == old  # == on floats: to the last bit
        assert row["total_usd_month"] == bare[run_id]["total_usd_month"]


def test_the_sensitivity_view_varies_the_downtime_rate() -> None:
    rows = [r for r in _view("sensitivity", 14, PRICED) if r["run_id"] == MEASURED]
    varied = {r["value"]: r for r in rows if r["parameter"] == "downtime_usd_per_hour"}
    assert sorted(varied) == [0.0, 25.0, 50.0, 100.0, 200.0]  # 50 USD/h x {0, 0.5, 1, 2, 4}
    recovery = 1 / 14 * 730 / 24 * 48 * 100  # the labour part does not change with the rate
    for rate, row in varied.items():
        assert row["downtime_usd_month"] == pytest.approx(2 / 14 * 730 * rate + recovery)
        # the TCO without downtime stays the baseline's; the cost with downtime moves with the rate
        assert row["usd_per_m_output_tokens"] == row["baseline_usd_per_m_output_tokens"]
        assert row["change_pct"] == 0.0
        with_downtime = row["usd_per_m_output_tokens_with_downtime"]
        assert with_downtime == pytest.approx(row["usd_per_m_output_tokens"] + row["downtime_usd_month"] / 131.4)
    assert varied[50.0]["usd_per_m_output_tokens_with_downtime"] == pytest.approx(
        varied[50.0]["baseline_usd_per_m_output_tokens_with_downtime"]
    )
    # an ops row without a rate has nothing to vary
    bare = _view("sensitivity", 14, make_prices())
    assert all(r["parameter"] != "downtime_usd_per_hour" for r in bare)
