"""Terminal output that fits (issue 16): at COLUMNS=80 and 160, `query`, `summary`, `history` and `compare` print
every number whole: no ellipsis, no line wider than the terminal, and each figure the store holds appears in full.

The expected figures are read from the views directly and formatted as the CLI formats them (``_fit.number``,
``_common.usd``), so a column squeezed until a number is cut, folded or dropped fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.cli._common import usd
from tcobench.cli._fit import Col, number, print_table
from tcobench.tasks.analysis.compare import CompareOptions, compare
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect, views_named

runner = CliRunner()
WIDTHS = (80, 160)


def _run(args: list[str], width: int) -> str:
    done = runner.invoke(app, args, env={"COLUMNS": str(width)})
    assert done.exit_code == 0, done.stderr
    text = done.stdout
    assert "…" not in text
    too_wide = [line for line in text.splitlines() if len(line) > width]
    assert not too_wide, too_wide[:3]
    return text


def _rows(store: Path, sql: str) -> list[tuple[object, ...]]:
    con = connect(store, load_prices(None), needs=views_named(sql))  # the views the query reads
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_query_prints_every_number_whole(fleet: Path, width: int) -> None:
    sql = (
        "SELECT t.run_id, t.host, t.concurrency, s.output_tok_s, t.usd_per_m_output_tokens, t.total_usd_month, "
        "s.ttft_p99_ms, s.e2e_p99_ms FROM tco AS t JOIN run_summary AS s USING (run_id) ORDER BY t.run_id LIMIT 6"
    )
    text = _run(["query", sql, "--store", str(fleet)], width)
    rows = _rows(fleet, sql)
    assert len(rows) == 6
    for row in rows:
        for value in row:
            assert number(value) in text, (number(value), value)


@pytest.mark.parametrize("width", WIDTHS)
def test_summary_cards_print_every_cost_whole_with_host_hardware_and_engine(fleet: Path, width: int) -> None:
    text = _run(["summary", "--store", str(fleet), "--run", "gpu-"], width)  # every run's full card
    costs = _rows(fleet, "SELECT usd_per_m_output_tokens, usd_per_m_total_tokens FROM tco")
    assert len(costs) == 30
    for output, total in costs:
        assert usd(output) in text and usd(total) in text
    for label in ("host", "hardware", "priced as", "engine", "started (UTC)"):
        assert f"│ {label} " in text
    assert "1 x AMD Instinct MI300X" in text and "1 x NVIDIA H200" in text and "ollama 0.32.0" in text
    # runs in order: oldest first
    started = [line.split("│")[2:] for line in text.splitlines() if line.startswith("│ started (UTC)")]
    stamps = [cell.strip() for cells in started for cell in cells if cell.strip()]
    assert stamps == sorted(stamps) and len(stamps) == 30


@pytest.mark.parametrize("width", WIDTHS)
def test_history_detail_prints_every_cost_whole(fleet: Path, width: int) -> None:
    text = _run(["history", "--store", str(fleet), "--detail"], width)
    for (cost,) in _rows(fleet, "SELECT usd_per_m_output_tokens FROM nightly_trend"):
        assert usd(cost) in text
    if width == 80:
        assert "left out to fit 80 columns" in text  # low-priority columns dropped, with a note


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_prints_every_ratio_and_interval_whole(fleet: Path, width: int) -> None:
    args = ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--claim", "5", "--resamples", "200"]
    text = _run([*args, "--store", str(fleet)], width)
    found = compare(fleet, load_prices(None), "vendor=nvidia", "vendor=amd", CompareOptions(claim=5.0, resamples=200))
    for s in found.strata:
        assert f"{s.ratio:.3f}" in text and f"{s.lo:.3f} - {s.hi:.3f}" in text
        assert usd(s.a_usd_per_m) in text and usd(s.b_usd_per_m) in text


def test_a_table_too_wide_for_its_columns_turns_into_records(capsys: pytest.CaptureFixture[str]) -> None:
    from rich.console import Console

    console = Console(width=40, force_terminal=False)
    cols = [Col(f"column_{i}") for i in range(6)]
    print_table("wide", cols, [[number(1234567.891 * (i + 1)) for i in range(6)]], console=console)
    text = capsys.readouterr().out
    assert "wide (1 of 1)" in text and "column_5" in text
    assert all(number(1234567.891 * (i + 1)) in text for i in range(6))


def test_numbers_have_a_sensible_precision() -> None:
    assert [number(v) for v in (1234567.891, 123.456, 12.3456, 1.0, 0.98765, 0.000012345, 0.0, None, 3)] == [
        "1,234,568",
        "123.5",
        "12.35",
        "1",
        "0.9877",
        "1.234e-05",
        "0",
        "-",
        "3",
    ]


def test_csv_lines_end_with_lf(fleet: Path) -> None:
    done = runner.invoke(app, ["query", "SELECT run_id FROM runs LIMIT 3", "--format", "csv", "--store", str(fleet)])
    assert done.exit_code == 0 and "\r" not in done.stdout and done.stdout.count("\n") == 4


def test_a_run_wider_than_the_terminal_wraps_its_text_not_its_numbers(tmp_path: Path) -> None:
    from tcobench.tasks.store.store import write_results
    from tests.unit.factories import make_request, make_run

    model = "org/a-model-name-long-enough-to-need-two-lines-of-an-80-column-terminal-Q4_K_M.gguf"
    run = make_run(run_id="long-model", model_name=model)
    write_results(tmp_path, run, [make_request(run_id=run.run_id, request_index=i) for i in range(3)])
    text = _run(["summary", "--store", str(tmp_path), "--run", "long-model"], 80)
    assert "│ requests measured / errors" in text and " 3 / 0 │" in text
    assert "run long-model" in text and "org/a-model-name" in text  # one table, the name wrapped in its cell
