"""Errors point at the file and field a value came from: the inventory's host entry for its price keys and host
fields, the matrix's entry for the rest of a cell, the price table's row for a price, the config file or the flag
for a `run`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.errors import ConfigError, PricingError
from tcobench.tasks.inventory import _origin, load_plan
from tcobench.tasks.prices import SHIPPED_TABLE, load_prices

PRICES = load_prices(None)
MATRIX = (
    '[[engines]]\nname = "llama"\nendpoint = "http://127.0.0.1:1"\n[[models]]\nname = "m"\n[[workloads]]\nname = "w"\n'
)


def _files(tmp_path: Path, host: str) -> tuple[Path, Path]:
    inventory, matrix = tmp_path / "inventory.toml", tmp_path / "matrix.toml"
    inventory.write_text(f'[[hosts]]\nname = "ok"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n{host}', "utf-8")
    matrix.write_text(MATRIX, "utf-8")
    return inventory, matrix


@pytest.mark.parametrize("key", ["hardware", "site", "ops"])
def test_a_mistyped_price_key_in_the_inventory_names_the_inventory_host_and_field(tmp_path: Path, key: str) -> None:
    host = '[[hosts]]\nname = "b"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n'
    host = (
        host.replace('hardware = "cpu-generic-2c"', f'{key} = "typo-key"')
        if key == "hardware"
        else (host + f'{key} = "typo-key"\n')
    )
    inventory, matrix = _files(tmp_path, host)
    with pytest.raises(PricingError) as info:
        load_plan(inventory, [matrix], PRICES)
    message = str(info.value)
    assert message.startswith(f"{inventory}: hosts.1.{key} (host b): no row 'typo-key' in [{key}]"), message
    assert str(matrix) not in message and "\n" not in message


def test_a_bad_host_field_names_the_inventory(tmp_path: Path) -> None:
    inventory, matrix = _files(tmp_path, '[[hosts]]\nname = "b"\nvendor = "cpu"\ngpu_count = -1\n')
    with pytest.raises(ConfigError, match=rf"^{inventory}: hosts.1.gpu_count: -1 is not >= 0"):
        load_plan(inventory, [matrix], PRICES)


def test_a_cell_field_is_traced_to_the_inventory_host_or_the_matrix_entry() -> None:
    inv, mat = Path("inv.toml"), Path("mat.toml")
    where = {"engines": 2, "models": 0, "workloads": 1}
    assert _origin(("pricing", "hardware"), inv, 3, mat, where) == "inv.toml: hosts.3.hardware"
    assert _origin(("engine", "container", "docker_host"), inv, 3, mat, where) == "inv.toml: hosts.3.docker_host"
    assert _origin(("engine", "container", "gpu", "vendor"), inv, 0, mat, where) == "inv.toml: hosts.0.gpu.vendor"
    assert _origin(("declared", "gpu_count"), inv, 1, mat, where) == "inv.toml: hosts.1.gpu_count"
    assert _origin(("workload", "slo", "ttft_ms"), inv, 1, mat, where) == "mat.toml: workloads.1.slo.ttft_ms"
    assert _origin(("engine", "container", "image"), inv, 1, mat, where) == "mat.toml: engines.2.container.image"
    assert _origin(("model", "path"), inv, 1, mat, where) == "mat.toml: models.0.path"
    assert _origin((), inv, 1, mat, where) == "mat.toml"


def test_a_bad_matrix_value_names_the_matrix_entry(tmp_path: Path) -> None:
    inventory, matrix = _files(tmp_path, "")
    matrix.write_text(MATRIX + "requests = 0\n", "utf-8")
    with pytest.raises(ConfigError, match=rf"^{matrix}: workloads.0.requests: 0 is not > 0"):
        load_plan(inventory, [matrix], PRICES)


def test_a_bad_price_names_the_price_file_row_and_field(tmp_path: Path) -> None:
    table = tmp_path / "prices.toml"
    shipped = (Path(__file__).resolve().parents[3] / SHIPPED_TABLE).read_text("utf-8")
    table.write_text(shipped.replace("purchase_usd", "purchse_usd", 1), "utf-8")
    with pytest.raises(PricingError, match=rf"^{table}: hardware\.[\w-]+\.purchase_usd: required, but missing"):
        load_prices(table)


def test_run_names_the_flag_or_the_config_file_of_a_price_key(tmp_path: Path) -> None:
    runner, store = CliRunner(), tmp_path / "store"
    flag = runner.invoke(app, ["run", "--site", "nowhere", "--store", str(store)])
    assert flag.exit_code == 1 and flag.stderr.startswith("PricingError: --site: no row 'nowhere' in [site]")
    config = tmp_path / "bench.toml"
    config.write_text('[pricing]\nhardware = "cpu-generic-2x"\n', "utf-8")
    filed = runner.invoke(app, ["run", "--config", str(config), "--store", str(store)])
    assert filed.exit_code == 1 and filed.stderr.startswith(f"PricingError: {config}: pricing.hardware: no row")
    assert not store.exists()
