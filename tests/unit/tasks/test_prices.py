"""load_prices / check_keys: the shipped table, and one-line errors naming the file and field path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.errors import PricingError
from tcobench.schemas import PricingConfig
from tcobench.tasks import prices as prices_module
from tcobench.tasks.prices import SHIPPED_TABLE, check_keys, load_prices

VALID = """
[hardware.box]
description = "a box"
vendor = "cpu"
accelerators = 0
purchase_usd = 1000
server_share_usd = 0.0
lifetime_months = 36
load_watts = 50.0
idle_watts = 10.0
adaptation_days = 0.0
source = "assumption: test"
as_of = 2026-01-01

[site.home]
description = "home"
kwh_usd = 0.2
pue = 1.0
source = "assumption: test"
as_of = 2026-01-01

[ops.me]
description = "me"
hours_per_host_month = 1.0
hourly_usd = 50.0
daily_usd = 400.0
source = "assumption: test"
as_of = "2026-01-01"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(path: Path) -> str:
    with pytest.raises(PricingError) as info:
        load_prices(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    return message


def test_public_names() -> None:  # that each exists: tests/unit/test_exports.py
    assert sorted(prices_module.__all__) == ["SHIPPED_TABLE", "check_keys", "load_prices"]


def test_shipped_table_validates_with_required_rows() -> None:
    table = load_prices(None)
    assert {"cpu-generic-2c", "nvidia-h100-sxm", "nvidia-h200-sxm", "amd-mi300x", "amd-mi325x"} <= set(table.hardware)
    assert "default" in table.site
    assert "default" in table.ops
    # The shipped table must satisfy the defaults of the pricing config.
    check_keys(table, PricingConfig(), where="defaults")


def test_shipped_table_cites_or_labels_every_row() -> None:
    table = load_prices(None)
    rows = [*table.hardware.values(), *table.site.values(), *table.ops.values()]
    for row in rows:
        assert "assumption" in row.source or "SemiAnalysis" in row.source
    assert table.hardware["cpu-generic-2c"].source.startswith("assumption:")
    # a row that is not a whole assumption names where each of its figures comes from
    figures = ("purchase_usd", "server_share_usd", "lifetime_months", "load_watts", "idle_watts", "adaptation_days")
    for key, hardware in table.hardware.items():
        if not hardware.source.startswith("assumption:"):
            assert all(f in hardware.source for f in figures), key
    for key, rate in table.rental.items():
        assert "InferenceX" in rate.source and rate.tier.value in rate.source, key
    # as_of is the date a cited figure was true, and its source says which date that is (a release, an on-sale
    # day, the commit that holds it), so a reader can check it; an assumption's is the day it was made
    for key, row in [*table.hardware.items(), *table.site.items(), *table.ops.items(), *table.rental.items()]:
        if not row.source.startswith("assumption"):
            assert str(row.as_of) in row.source, (key, row.as_of)
    assert str(table.hardware["nvidia-rtx-4090"].as_of) == "2022-10-12"  # its launch (MSRP) day, not when typed
    # All-in provisioned kW per GPU from SemiAnalysis InferenceX-app, as watts; 4-year life.
    all_in_watts = {"nvidia-h100-sxm": 1730, "nvidia-h200-sxm": 1730, "amd-mi300x": 1790, "amd-mi325x": 2180}
    for key, watts in all_in_watts.items():
        assert table.hardware[key].load_watts == watts
        assert table.hardware[key].lifetime_months == 48
        assert "InferenceX" in table.hardware[key].source


def test_valid_custom_table_accepts_toml_dates_strings_and_int_prices(tmp_path: Path) -> None:
    table = load_prices(_write(tmp_path, VALID))
    assert table.hardware["box"].purchase_usd == 1000.0
    assert str(table.ops["me"].as_of) == "2026-01-01"


def test_bad_toml_is_one_line_naming_the_file(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, VALID + "\n[site.home\n"))
    assert "invalid TOML" in message
    assert "line" in message


def test_negative_price_names_the_field_path(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, VALID.replace("purchase_usd = 1000", "purchase_usd = -5")))
    assert message == f"{tmp_path / 'prices.toml'}: hardware.box.purchase_usd: -5 is not >= 0"


@pytest.mark.parametrize(
    ("section", "after", "field"),
    [("ops.me", "daily_usd = 400.0", "downtime_usd_per_hour"), ("site.home", "pue = 1.0", "grid_gco2e_per_kwh")],
)
def test_a_negative_or_non_numeric_downtime_rate_or_grid_intensity_is_one_line(
    tmp_path: Path, section: str, after: str, field: str
) -> None:
    path = tmp_path / "prices.toml"
    message = _error(_write(tmp_path, VALID.replace(after, f"{after}\n{field} = -1.0")))
    assert message == f"{path}: {section}.{field}: -1 is not >= 0"
    message = _error(_write(tmp_path, VALID.replace(after, f"{after}\n{field} = 'a lot'")))
    assert message.startswith(f"{path}: {section}.{field}: ") and "number" in message


def test_downtime_rate_and_grid_intensity_are_optional_and_shipped_as_labelled_assumptions(tmp_path: Path) -> None:
    custom = load_prices(_write(tmp_path, VALID))
    assert custom.ops["me"].downtime_usd_per_hour is None and custom.site["home"].grid_gco2e_per_kwh is None
    shipped = load_prices(None)
    for row, field in [(shipped.ops["default"], "downtime_usd_per_hour")] + [
        (site, "grid_gco2e_per_kwh") for site in shipped.site.values()
    ]:
        assert getattr(row, field) is not None and getattr(row, field) > 0
        assert f"{field}: assumption (made " in row.source


def test_zero_lifetime_names_the_field_path(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, VALID.replace("lifetime_months = 36", "lifetime_months = 0")))
    assert message.endswith(": hardware.box.lifetime_months: 0 is not > 0")


def test_missing_source_names_the_field_path(tmp_path: Path) -> None:
    text = VALID.replace('kwh_usd = 0.2\npue = 1.0\nsource = "assumption: test"\n', "kwh_usd = 0.2\npue = 1.0\n")
    message = _error(_write(tmp_path, text))
    assert message.endswith(": site.home.source: required, but missing")


@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_non_finite_number_names_the_field_path(tmp_path: Path, value: str) -> None:
    message = _error(_write(tmp_path, VALID.replace("purchase_usd = 1000", f"purchase_usd = {value}")))
    assert message.endswith(": hardware.box.purchase_usd: Input should be a finite number")


def test_unknown_field_names_the_field_path(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, VALID.replace("daily_usd = 400.0", "daily_usd = 400.0\ncolour = 'red'")))
    assert message.endswith(": ops.me.colour: unknown field (given 'red'); check its spelling and section")


def test_several_errors_are_all_listed_on_one_line(tmp_path: Path) -> None:
    text = VALID.replace("kwh_usd = 0.2", "kwh_usd = -1").replace("pue = 1.0", "pue = 9.0")
    message = _error(_write(tmp_path, text))
    assert "site.home.kwh_usd: -1 is not > 0; site.home.pue: 9 is not <= 3" in message
    assert "more" not in message and "\n" not in message


def test_missing_file_is_a_pricing_error(tmp_path: Path) -> None:
    _error(tmp_path / "prices.toml")


def test_check_keys_names_the_missing_key_and_the_valid_ones() -> None:
    table = load_prices(None)
    with pytest.raises(PricingError) as info:
        check_keys(table, PricingConfig(hardware="nvidia-b999"), where="bench.toml")
    message = str(info.value)
    assert message.startswith("bench.toml: pricing.hardware: no row 'nvidia-b999' in [hardware] of " + SHIPPED_TABLE)
    assert "amd-mi300x" in message and "cpu-generic-2c" in message


@pytest.mark.parametrize(("section", "field"), [("site", "site"), ("ops", "ops")])
def test_check_keys_checks_site_and_ops(tmp_path: Path, section: str, field: str) -> None:
    path = _write(tmp_path, VALID)
    table = load_prices(path)
    config = PricingConfig(table=path, hardware="box", site="home", ops="me")
    check_keys(table, config, where="cli")
    bad = config.model_copy(update={field: "nowhere"})
    with pytest.raises(
        PricingError, match=rf"^cli: pricing\.{section}: no row 'nowhere' in \[{section}\] of .*prices\.toml"
    ):
        check_keys(table, bad, where="cli")


def test_shipped_rental_rates_and_latency_targets() -> None:
    table = load_prices(None)
    assert table.rental["h200-rental-3yr"].usd_per_gpu_hour == 1.60  # InferenceX constants
    assert table.rental["mi300x-hyperscaler-own"].usd_per_gpu_hour == 1.12
    assert {r.tier for r in table.rental.values()} == {"hyperscaler-own", "neocloud-own", "rental-3yr"}
    assert all("SemiAnalysis" in r.source and r.hardware in table.hardware for r in table.rental.values())
    assert {"nvidia-rtx-4090", "amd-rx-7900-xtx", "amd-radeon-pro-w7900"} <= set(table.hardware)
    assert table.hardware["amd-rx-7900-xtx"].adaptation_days > table.hardware["nvidia-rtx-4090"].adaptation_days
    assert set(table.latency_target) == {"interactive", "relaxed"}


def test_rental_row_must_name_a_platform(tmp_path: Path) -> None:
    text = (
        VALID
        + """
[rental.cloud]
description = "a cloud"
hardware = "nope"
tier = "rental-3yr"
usd_per_gpu_hour = 1.5
source = "assumption: test"
as_of = 2026-01-01
"""
    )
    message = _error(_write(tmp_path, text))
    assert "rental.cloud.hardware: no row 'nope' in [hardware] (valid: box)" in message


def test_tables_without_the_optional_sections_stay_valid(tmp_path: Path) -> None:
    table = load_prices(_write(tmp_path, VALID))
    assert table.rental == {} and table.latency_target == {}
