"""`tcobench summary` (issue 41): one row per run by default, --select COLUMNS of the summary views, --run ID for a
run's full card, --format csv/json; an unknown column is one usage error naming it and the valid ones."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.cli._common import usd
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect, views_named

runner = CliRunner()


def _summary(fleet: Path, *args: str, width: int = 80) -> str:
    done = runner.invoke(app, ["summary", "--store", str(fleet), *args], env={"COLUMNS": str(width)})
    assert done.exit_code == 0, done.stderr
    assert all(len(line) <= width for line in done.stdout.splitlines())
    return done.stdout


def _rows(fleet: Path, sql: str) -> list[tuple[object, ...]]:
    con = connect(fleet, load_prices(None), needs=views_named(sql))  # the views the query reads
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("width", [80, 160])
def test_one_row_per_run_oldest_first_with_its_cost(fleet: Path, width: int) -> None:
    text = _summary(fleet, width=width)
    runs = _rows(fleet, "SELECT t.run_id, t.usd_per_m_output_tokens FROM tco AS t ORDER BY t.started, t.host")
    assert len(runs) == 30
    table = [line for line in text.splitlines() if line.startswith("│ gpu-")]
    assert len(table) == 30, text  # one line each: no run wraps onto a second line
    assert [line.split("│")[1].strip() for line in table] == [run_id for run_id, _ in runs]
    for (_, cost), line in zip(runs, table, strict=True):
        assert line.rstrip("│ ").endswith(usd(cost)), line
    assert len(text.splitlines()) < 30 + 15  # the cards of 30 runs take over a thousand lines
    assert "TTFT p50 / p90 / p99" not in text and "Cost per month behind" not in text
    assert "tcobench summary --run ID" in " ".join(text.split())  # how to see the full card


def test_select_prints_exactly_those_columns(fleet: Path) -> None:
    text = _summary(fleet, "--select", "run_id,concurrency,usd_per_m_good_tokens,hardware_key", width=160)
    header = next(line for line in text.splitlines() if "run_id" in line)
    assert [h.strip() for h in header.strip("┃ ").split("┃")] == [
        "run_id",
        "concurrency",
        "usd_per_m_good_tokens",
        "hardware_key",
    ]
    assert "30 row(s)" in text and "amd-mi300x" in text
    # a column name wider than its numbers breaks after its "_" at 80 columns, rather than the table turning into
    # one record per run
    narrow = _summary(fleet, "--select", "run_id,concurrency,output_tok_s,usd_per_m_output_tokens,good_fraction")
    assert "row (1 of" not in narrow and "usd_per_m_" in narrow and "30 row(s)" in narrow


def test_select_as_csv_and_json_keeps_full_precision(fleet: Path) -> None:
    picked = "run_id,output_tok_s,usd_per_m_output_tokens"
    rows = list(csv.DictReader(io.StringIO(_summary(fleet, "--select", picked, "--format", "csv", "--run", "gpu-nv"))))
    expected = _rows(
        fleet,
        "SELECT s.run_id, s.output_tok_s, t.usd_per_m_output_tokens FROM run_summary AS s JOIN tco AS t "
        "USING (run_id) WHERE s.run_id LIKE 'gpu-nv%' ORDER BY s.started, s.concurrency",
    )
    assert [(r["run_id"], float(r["output_tok_s"]), float(r["usd_per_m_output_tokens"])) for r in rows] == expected
    plain = json.loads(_summary(fleet, "--format", "json", "--run", "gpu-amd-1-n4-c16"))
    assert [r["run_id"] for r in plain] == ["gpu-amd-1-n4-c16"] and "usd_per_m_output_tokens" in plain[0]


def test_run_prints_the_full_card(fleet: Path) -> None:
    text = _summary(fleet, "--run", "gpu-nv-1-n4-c16")
    for label in ("TTFT p50 / p90 / p99 (ms)", "cost per 1M total tokens", "Cost per month behind those numbers"):
        assert label in text, label


def test_an_unknown_column_is_one_usage_error_naming_it_and_the_valid_ones(fleet: Path) -> None:
    done = runner.invoke(app, ["summary", "--store", str(fleet), "--select", "run_id,tok_s,usd_per_m_output_tokens"])
    assert done.exit_code == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    message = " ".join(done.stderr.split())
    assert message.startswith("UsageError: Invalid value for --select: unknown column tok_s; valid columns: run_id,")
    for valid in ("output_tok_s", "usd_per_m_output_tokens", "good_fraction", "hardware_key"):
        assert f" {valid}," in message or f" {valid} " in message, valid
    empty = runner.invoke(app, ["summary", "--store", str(fleet), "--select", " , "])
    assert empty.exit_code == 2 and "name at least one column" in empty.stderr
