"""`tcobench history` (issue 41): one table with a row per series (its latest run's figures and its flagged changes)
by default; each run of a series with --series NAME picking one series, or --detail for every series."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.cli._common import usd
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect

runner = CliRunner()


def _history(fleet: Path, *args: str, width: int = 160) -> str:
    done = runner.invoke(app, ["history", "--store", str(fleet), *args], env={"COLUMNS": str(width)})
    assert done.exit_code == 0, done.stderr
    assert all(len(line) <= width for line in done.stdout.splitlines())
    return done.stdout


def _latest_costs(fleet: Path) -> list[tuple[str, int, float]]:
    con = connect(fleet, load_prices(None), needs=("nightly_trend",))  # the view it reads
    try:
        return con.execute(
            "SELECT host, concurrency, arg_max(usd_per_m_output_tokens, started) FROM nightly_trend GROUP BY ALL "
            "ORDER BY host, concurrency"
        ).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("width", [80, 160])
def test_one_table_with_a_row_per_series(fleet: Path, width: int) -> None:
    text = _history(fleet, width=width)
    assert text.count("┏") == 1, text  # one table, not one per series
    rows = [line for line in text.splitlines() if line.startswith("│ gpu-")]
    assert len(rows) == 6
    for (host, concurrency, cost), row in zip(_latest_costs(fleet), rows, strict=True):
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert cells[0] == host and str(concurrency) in cells and usd(cost) in cells, (row, cost)
    flagged = next(r for r in rows if r.startswith("│ gpu-amd-1 ") and "│  4 │" in r)
    assert "2026-11-26" in flagged.split("│")[-2]  # the series' flag, summarised in its row
    assert sum("│ none" in r for r in rows) == 5
    assert "1 flagged change(s) in 1 of 6 series" in text  # the flags, one line each, as before
    assert "--detail" in text and "--series NAME" in " ".join(text.split())  # how to see each run


def test_a_series_named_in_full_or_detail_shows_each_run(fleet: Path) -> None:
    one = _history(fleet, "--series", "gpu-amd-1 | llama3.2:3b | chat-short | c=4")
    assert "gpu-amd-1 | llama3.2:3b | chat-short | c=4 (AMD Instinct MI300X)" in one
    dates = [line.split("│")[2].strip() for line in one.splitlines() if line.startswith("│     ")]
    assert [d for d in dates if d] == [
        "2026-11-22",
        "2026-11-23",
        "2026-11-24",
        "2026-11-25",
        "2026-11-26",
    ]
    every = _history(fleet, "--detail")
    assert every.count("┏") == 6 and "--detail" not in every
    flagged_only = _history(fleet, "--flagged-only")
    assert "┏" not in flagged_only and "1 flagged change(s)" in flagged_only
