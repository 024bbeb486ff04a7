"""The metric catalogue (schemas/columns.py: the typed views' column declarations) against what names its
metrics outside them: the generated docs pages (docs/reference/columns/, one per view, and their lines of mkdocs.yml's
nav), and the CLI's and the report's table headers (checked, never rewritten: the printed text stays as it is).
tests/unit/schemas/test_columns.py checks the views and the typed rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tcobench.cli._runs_table import _METRICS as CLI_ROWS
from tcobench.schemas.columns import (
    NAV_END,
    PAGES,
    Metric,
    column_pages,
    declarations,
    metric,
    metrics,
    mkdocs_with_pages,
)
from tcobench.tasks.report.assets.figures import _TARGET_HEADERS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / PAGES
REGENERATE = "regenerate with `python -m tcobench.schemas.columns`"

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
    assert metric("run_id").views == (
        "run_summary",
        "tco",
        "tco_sources",
        "environment_changes",
        "nightly_trend",
        "record_card",
    )
    assert metric("ttft_p90_ms").views == ("run_summary", "cost_at_latency_target")
    with pytest.raises(ValueError, match="better"):
        Metric.model_validate({**metric("ttft_p90_ms").model_dump(), "better": "faster"})
    with pytest.raises(KeyError, match="catalogued 0 times"):
        metric("no_such_column")


def test_the_docs_pages_are_generated_from_the_declarations() -> None:
    pages = column_pages()
    assert sorted(pages) == sorted(["index.md", *(f"{view}.md" for view in declarations())])
    on_disk = sorted(p.name for p in DOCS.glob("*.md"))
    assert on_disk == sorted(pages), f"{PAGES}: pages of no view, or missing: {REGENERATE}"
    for name, text in pages.items():
        assert (DOCS / name).read_text("utf-8") == text, f"{PAGES}/{name}: {REGENERATE}"
    nav = (ROOT / "mkdocs.yml").read_text("utf-8")
    assert mkdocs_with_pages(nav) == nav, f"mkdocs.yml's nav lists other view pages: {REGENERATE}"
    stale = nav.replace("          - reference/columns/tco.md\n", "")
    assert stale != nav and mkdocs_with_pages(stale) == nav
    with pytest.raises(ValueError, match="lacks the markers"):
        mkdocs_with_pages(nav.replace(NAV_END, ""))


def test_each_metric_has_its_row_on_its_views_page() -> None:
    for m in metrics():
        page = column_pages()[f"{m.views[0]}.md"]
        row = next(line for line in page.splitlines() if line.startswith(f"| `{m.views[0]}.{m.name}` |"))
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        assert cells[2] == (m.unit.replace("|", "\\|") or "-") and cells[3] == (m.better or "-"), row
        assert cells[4] == m.formula.replace("|", "\\|"), row
        for carrier in m.views[1:]:
            assert f"[`{carrier}`]({carrier}.md)" in cells[6], row


def test_a_page_says_where_a_carried_column_is_declared() -> None:
    page = column_pages()["tco.md"]
    assert "| `tco.run_id` | VARCHAR | | | as in [`run_summary`](run_summary.md) | not_null, unique | |" in page
    assert "`tcobench/sql/cost/tco.yml`" in page


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
