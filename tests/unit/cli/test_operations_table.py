"""`tcobench history --availability | --changes` and `compare --adaptation` (cli/_operations_table.py): their
lines over the simulated history of tests/unit/operations_history.py and the fleet store, and bad input as one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.tasks.store.store import RunRows, write_runs
from tests.unit.factories import write_fleet
from tests.unit.operations_history import history

runner = CliRunner()
WIDE = {"COLUMNS": "240"}


@pytest.fixture(scope="module")
def ops_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fleet (priced, with requests) and the simulated operations history in one store."""
    store = tmp_path_factory.mktemp("ops")
    write_fleet(store)
    write_runs(store, [RunRows(r) for r in history()])
    return store


def test_history_availability_prints_each_platform_and_host(ops_store: Path) -> None:
    done = runner.invoke(app, ["history", "--availability", "--store", str(ops_store)], env=WIDE)
    assert done.exit_code == 0, done.stderr
    assert "Availability per platform and per host, every night" in done.stdout
    assert "amd-mi300x" in done.stdout and "nv-01" in done.stdout and "amd-01" in done.stdout
    windowed = runner.invoke(
        app, ["history", "--availability", "--since", "2023-11-18", "--store", str(ops_store)], env=WIDE
    )
    assert windowed.exit_code == 0 and "nights since 2023-11-18" in windowed.stdout


def test_a_window_without_nights_says_so_in_one_line(ops_store: Path) -> None:
    done = runner.invoke(app, ["history", "--availability", "--since", "2030-01-01", "--store", str(ops_store)])
    assert done.exit_code == 0, done.stderr
    assert done.stdout.strip() == f"no nightly cells in {ops_store} (nights since 2030-01-01)"


def test_bad_since_is_one_line(ops_store: Path) -> None:
    bad = runner.invoke(app, ["history", "--availability", "--since", "18/11/2023", "--store", str(ops_store)])
    assert bad.exit_code == 2
    assert bad.stderr.strip() == (
        "UsageError: Invalid value for --since: '18/11/2023': not a date, use YYYY-MM-DD "
        "(see `tcobench history --help`)"
    )
    alone = runner.invoke(app, ["history", "--since", "2023-11-18", "--store", str(ops_store)])
    assert alone.exit_code == 2 and len(alone.stderr.strip().splitlines()) == 1
    assert "needs --availability" in alone.stderr


def test_history_changes_lists_each_change_with_what_followed(ops_store: Path) -> None:
    done = runner.invoke(app, ["history", "--changes", "--store", str(ops_store)], env=WIDE)
    assert done.exit_code == 0, done.stderr
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert lines[0] == "5 environment change(s), each with what followed it:"
    assert lines[1:] == [
        "amd-01: ROCm 6.2 -> 6.3 on 2023-11-18; 3 platform failures in the next 2 nights",
        # the fleet's regression: a driver update on the last night, decode rate flagged; then back
        "gpu-amd-1: driver 6.10.5 -> 6.10.5.1 on 2026-11-26; 0 platform failures in the next 1 night; "
        "decode tok/s -11% (flagged)",
        "gpu-amd-1: driver 6.10.5.1 -> 6.10.5 on 2026-11-26; 0 platform failures in the next 1 night",
        "nv-01: kernel 6.1.0 -> 6.8.0 on 2023-11-17; 0 platform failures in the next 2 nights",
        "nv-01: image vllm/vllm-openai sha256:aa -> sha256:bb on 2023-11-18; 0 platform failures in the next 2 nights",
    ]


def test_compare_shows_and_can_use_the_measured_adaptation(ops_store: Path) -> None:
    args = ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--resamples", "100", "--store", str(ops_store)]
    assumed = runner.invoke(app, args, env=WIDE)
    measured = runner.invoke(app, [*args, "--adaptation", "measured"], env=WIDE)
    assert assumed.exit_code == 0 and measured.exit_code == 0, assumed.stderr + measured.stderr
    assert "used: assumed" in assumed.stdout and "used: measured" in measured.stdout
    row = next(line for line in measured.stdout.splitlines() if "amd-mi300x" in line and "1 of 2" in line)
    assert [cell for cell in row.split() if cell != "│"][1:5] == [
        "7",
        "2",
        "1",
        "of",
    ]  # assumed 7 days, measured 2 (amd-01; amd-02 never served)
    assert assumed.stdout != measured.stdout  # B's adaptation term: 2 days instead of 7


def test_unknown_adaptation_lists_the_valid_ones(ops_store: Path) -> None:
    args = ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--adaptation", "guess", "--store", str(ops_store)]
    done = runner.invoke(app, args)
    assert done.exit_code == 1
    assert done.stderr.strip() == "ConfigError: --adaptation 'guess': choose assumed or measured"


def test_compare_shows_the_compared_hosts_changes_and_availability(ops_store: Path, tmp_path: Path) -> None:
    args = ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--resamples", "100"]
    done = runner.invoke(app, [*args, "--store", str(ops_store)], env=WIDE)
    assert done.exit_code == 0, done.stderr
    lines = [line.strip() for line in done.stdout.splitlines()]
    changes = lines[lines.index("2 environment change(s), each with what followed it:") + 1 :]
    assert changes[:2] == [  # the compared hosts' changes only (not amd-01's or nv-01's), without history's flags
        "gpu-amd-1: driver 6.10.5 -> 6.10.5.1 on 2026-11-26; 0 platform failures in the next 1 night",
        "gpu-amd-1: driver 6.10.5.1 -> 6.10.5 on 2026-11-26; 0 platform failures in the next 1 night",
    ]
    assert "Availability per platform" not in done.stdout  # the compared runs are not nightly cells
    cells = tmp_path / "cells"
    write_fleet(cells, cells=True)
    nightly = runner.invoke(app, [*args, "--store", str(cells)], env=WIDE)
    assert nightly.exit_code == 0, nightly.stderr
    assert "Availability per platform and per host, every night (the compared hosts and their platforms)" in (
        nightly.stdout
    )
    rows = [line for line in nightly.stdout.splitlines() if "│ gpu-amd-1 " in line or "│ gpu-nv-1 " in line]
    assert len(rows) == 2 and all("100.0%" in row for row in rows)
