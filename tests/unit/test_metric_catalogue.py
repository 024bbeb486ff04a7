"""The metric catalogue (schemas/columns.py: the typed views' column declarations) against what names its
metrics outside them: docs/formulas.md's tables, and the CLI's and the report's table headers (checked, never
rewritten: the printed text stays as it is). tests/unit/schemas/test_columns.py checks the views and the typed rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tcobench.cli._runs_table import _METRICS as CLI_ROWS
from tcobench.schemas.columns import BEGIN, END, Metric, catalogue_markdown, docs_with_catalogue, metric, metrics
from tcobench.tasks.report.assets.figures import _TARGET_HEADERS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "formulas.md"

# CLI row label -> the catalogued column it shows (tcobench run / summary, cli/_runs_table.py)
CLI_COLUMNS = {
    "started (UTC)": "started",
    "TTFT p50 / p90 / p99 (ms)": "ttft_p50_ms",
    "ITL p50 / p90 / p99 (ms)": "itl_p50_ms",
    "e2e p50 / p90 / p99 (ms)": "e2e_p50_ms",
    "decode tok/s per request, mean / p50": "req_decode_tok_s_mean",
    "engine-reported decode tok/s, mean": "server_decode_tok_s_mean",
    "aggregate output tok/s": "output_tok_s",
    "aggregate total tok/s": "total_tok_s",
    "cost per 1M output tokens": "usd_per_m_output_tokens",
    "cost per 1M total tokens": "usd_per_m_total_tokens",
    "token counts from": "token_count_source",
}
# the report's cost-at-latency-target table (report_assets/figures.py): header position -> column
REPORT_TARGET_COLUMNS = {
    0: "target",
    5: "output_tok_s",
    6: "ttft_p90_ms",
    7: "tpot_p90_ms",
    8: "usd_per_m_output_tokens",
}


def test_one_entry_per_metric() -> None:
    names = [m.name for m in metrics()]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert len(names) > 150
    for m in metrics():
        assert m.formula and "\n" not in m.formula, m.name
        assert len(set(m.views)) == len(m.views), m.name
    assert metric("run_id").views == ("run_summary", "tco", "tco_sources", "nightly_trend", "record_card")
    assert metric("ttft_p90_ms").views == ("run_summary", "cost_at_latency_target")
    with pytest.raises(ValueError, match="better"):
        Metric.model_validate({**metric("ttft_p90_ms").model_dump(), "better": "faster"})
    with pytest.raises(KeyError, match="catalogued 0 times"):
        metric("no_such_column")


def test_the_docs_tables_are_the_catalogue() -> None:
    text = DOCS.read_text("utf-8")
    assert BEGIN in text and END in text, f"docs/formulas.md lacks the markers {BEGIN!r} ... {END!r}"
    assert docs_with_catalogue(text) == text, "docs/formulas.md: regenerate with `python -m tcobench.schemas.columns`"
    stale = text.replace("| `ttft_p90_ms` | ms | lower |", "| `ttft_p90_ms` | s | lower |")
    assert stale != text and docs_with_catalogue(stale) == text
    with pytest.raises(ValueError, match="lacks the markers"):
        docs_with_catalogue(text.replace(END, ""))


def test_each_docs_row_carries_name_unit_and_formula() -> None:
    rows = [line for line in catalogue_markdown().splitlines() if line.startswith("| `")]
    assert len(rows) == len(metrics())
    for m, row in zip(metrics(), rows, strict=True):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        assert cells[0] == f"`{m.name}`" and cells[1] == (m.unit.replace("|", "\\|") or "-")
        assert cells[3] == m.formula.replace("|", "\\|")


def _shows(header: str, m: Metric) -> bool:
    return m.label is not None and m.label in header and (m.symbol is None or m.symbol in header)


def test_the_cli_run_table_uses_the_catalogue_labels() -> None:
    labels = [label for label, _ in CLI_ROWS]
    for header, name in CLI_COLUMNS.items():
        assert header in labels, f"the CLI no longer prints {header!r}: update CLI_COLUMNS"
        assert _shows(header, metric(name)), f"CLI row {header!r} vs catalogue {metric(name).label!r}"


def test_the_report_target_table_uses_the_catalogue_labels() -> None:
    for position, name in REPORT_TARGET_COLUMNS.items():
        header = _TARGET_HEADERS[position]
        assert _shows(header, metric(name)), f"report header {header!r} vs catalogue {metric(name).label!r}"


def test_a_header_off_the_catalogue_is_caught() -> None:
    assert not _shows("TTFT p90 (s)", metric("ttft_p90_ms"))
    assert not _shows("time to first token p90 (ms)", metric("ttft_p90_ms"))
