"""Sweeps of serving configurations in the matrix (issue 40): a grid expands into one cell per configuration, each with
its own settings; bad grids and configurations that need more GPUs than their host are refused at plan time in one
line naming the file, the field and the value; `nightly --dry-run` prints the plan and its estimate, and a plan over
--max-cells needs --yes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli.main import app
from tcobench.errors import ConfigError
from tcobench.tasks.inventory import load_plan
from tcobench.tasks.prices import load_prices

INVENTORY = """
[[hosts]]
name = "gpu-nv-01"
vendor = "nvidia"
gpu_model = "H200"
gpu_count = {gpus}
hardware = "nvidia-h200-sxm"
"""
MATRIX = """
[[engines]]
name = "vllm"
kind = "vllm"
{sweep}

[[models]]
name = "m"
shape = "llama-3b"

[[workloads]]
name = "w"
requests = 4
concurrency = [1, 4]
"""
GRID = "[engines.sweep]\ntensor_parallel = [1, 2]\nmax_num_seqs = [64, 256]"


def _files(tmp_path: Path, sweep: str = GRID, gpus: int = 8) -> tuple[Path, Path]:
    inventory, matrix = tmp_path / "inventory.toml", tmp_path / "matrix.toml"
    inventory.write_text(INVENTORY.format(gpus=gpus), "utf-8")
    matrix.write_text(MATRIX.format(sweep=sweep), "utf-8")
    return inventory, matrix


def test_a_grid_expands_into_one_cell_per_configuration(tmp_path: Path) -> None:
    inventory, matrix = _files(tmp_path)
    plan = load_plan(inventory, [matrix], load_prices(None))
    assert [c.engine for c in plan.cells] == [
        "vllm[tensor_parallel=1,max_num_seqs=64]",
        "vllm[tensor_parallel=1,max_num_seqs=256]",
        "vllm[tensor_parallel=2,max_num_seqs=64]",
        "vllm[tensor_parallel=2,max_num_seqs=256]",
    ]
    settings = [(c.config.engine.vllm.tensor_parallel, c.config.engine.vllm.max_num_seqs) for c in plan.cells]
    assert settings == [(1, 64), (1, 256), (2, 64), (2, 256)]
    # the matrix's engine name stays the runs' label: `engine=vllm` selects every configuration
    assert {c.config.engine.label for c in plan.cells} == {"vllm"}
    assert len({c.label for c in plan.cells}) == 4


@pytest.mark.parametrize(
    ("sweep", "gpus", "needle"),
    [
        ("[engines.sweep]\ntp = [1, 2]", 8, "engines.0.sweep: unknown sweep key 'tp' (valid: tensor_parallel,"),
        ("[engines.sweep]\nmax_num_seqs = []", 8, "sweep.max_num_seqs is an empty grid: give at least one value"),
        ("[engines.sweep]", 8, "sweep is empty: give at least one key (valid: tensor_parallel"),
        ("[engines.sweep]\ntensor_parallel = [1, 0]", 8, "engines.0.sweep (vllm.tensor_parallel): "),
        (
            "[engines.sweep]\ntensor_parallel = [4]",
            2,
            "the configuration needs 4 GPUs (tensor_parallel 4 x pipeline_parallel 1 x data_parallel 1), but host "
            "gpu-nv-01 has 2",
        ),
        ("[engines.sweep]\nnum_parallel = [1, 2]", 8, "sweep key 'num_parallel' does not apply to this engine"),
    ],
)
def test_a_bad_grid_is_refused_in_one_line_naming_it(tmp_path: Path, sweep: str, gpus: int, needle: str) -> None:
    inventory, matrix = _files(tmp_path, sweep, gpus)
    with pytest.raises(ConfigError) as raised:
        load_plan(inventory, [matrix], load_prices(None))
    message = str(raised.value)
    assert "\n" not in message and needle in message, message
    assert str(matrix) in message or "inventory.toml" in message


def test_a_sweep_value_the_settings_refuse_names_the_value(tmp_path: Path) -> None:
    inventory, matrix = _files(tmp_path, "[engines.sweep]\ntensor_parallel = [1, 0]")
    with pytest.raises(ConfigError, match=r"engines\.0\.sweep \(vllm\.tensor_parallel\): 0 is not > 0"):
        load_plan(inventory, [matrix], load_prices(None))


def test_dry_run_prints_the_plan_and_its_estimate_and_starts_nothing(tmp_path: Path) -> None:
    inventory, matrix = _files(tmp_path)
    store = tmp_path / "store"
    done = CliRunner().invoke(
        app, ["nightly", "-i", str(inventory), "-m", str(matrix), "--store", str(store), "--dry-run"]
    )
    assert done.exit_code == 0, done.stderr
    assert "plan: 4 cell(s) on 1 host(s) (gpu-nv-01 4)" in done.stderr
    assert "vllm[tensor_parallel=2,max_num_seqs=256]" in done.stderr
    assert "estimated time: no estimate: none of the 4 cells was measured before" in done.stderr
    assert not store.exists()  # nothing measured, nothing written


def test_a_plan_over_max_cells_needs_yes(tmp_path: Path) -> None:
    inventory, matrix = _files(tmp_path)
    args = ["nightly", "-i", str(inventory), "-m", str(matrix), "--store", str(tmp_path / "s"), "--max-cells", "3"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 1, refused.stderr  # a ConfigError (docs/failures.md)
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("ConfigError: the plan has 4 cells, more than --max-cells 3: pass --yes"), last
