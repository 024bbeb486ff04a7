"""The report's layout (issue 41): the record card grouped by platform then sorted by concurrency, a CPU host as
"CPU (n cores)", a chart with nothing to show left out with one line saying why, and tables whose cells wrap within
the page (tests/integration/test_report_chromium.py measures them in a browser)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from tcobench.schemas import EngineMetricRecord, EngineQuantity
from tcobench.tasks.prices import load_prices
from tcobench.tasks.report.assets import PAGE_CSS, Line, line_chart
from tcobench.tasks.report.report import build_report
from tcobench.tasks.store.store import write_results
from tests.unit.factories import T0_NS, make_prices, make_run
from tests.unit.tasks.store.test_tco import _requests


@pytest.fixture(scope="module")
def html(fleet: Path) -> str:
    return build_report(fleet, load_prices(None), resamples=100)


def _cells(row: str) -> list[str]:
    return [unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]


def test_the_record_card_is_grouped_by_platform_then_sorted_by_concurrency(html: str) -> None:
    # write_fleet starts both hosts' runs of a level at the same time: by start, the platforms interleave
    card = html[html.index('id="record-card"') : html.index('<p class="note">', html.index('id="record-card"'))]
    rows = [_cells(r) for r in re.findall(r"<tr data-host[^>]*>(.*?)</tr>", card)]
    shown = [(cells[0], int(cells[5])) for cells in rows]  # platform, concurrency
    assert shown == [
        ("AMD Instinct MI300X @ gpu-amd-1", 1),
        ("AMD Instinct MI300X @ gpu-amd-1", 4),
        ("AMD Instinct MI300X @ gpu-amd-1", 16),
        ("NVIDIA H200 @ gpu-nv-1", 1),
        ("NVIDIA H200 @ gpu-nv-1", 4),
        ("NVIDIA H200 @ gpu-nv-1", 16),
    ]


def _engine_rows(run_id: str, waiting: float) -> list[EngineMetricRecord]:
    """Scrapes inside make_run's measurement window (T0 + 5 s .. 15 s): one request running, ``waiting`` queued,
    half the KV-cache in use."""
    values = {
        EngineQuantity.requests_running: 1.0,
        EngineQuantity.requests_waiting: waiting,
        EngineQuantity.kv_cache_used_ratio: 0.5,
    }
    return [
        EngineMetricRecord(
            run_id=run_id,
            date="2023-11-14",
            host="testhost",
            ts_ns=T0_NS + t * 10**9,
            source="test /metrics",
            metric=f"engine:{quantity.value}",
            labels=None,
            quantity=quantity,
            value=value,
        )
        for t in (6, 10, 14)
        for quantity, value in values.items()
    ]


@pytest.fixture(scope="module")
def cpu_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One CPU host (8 cores, no GPU) at concurrency 1 and 2 whose engine never queued a request."""
    store = tmp_path_factory.mktemp("cpu")
    for c in (1, 2):
        run = make_run(run_id=f"cpu-c{c}", concurrency=c, host_cpu_count=8, started_ns=T0_NS + c)
        requests = [r.model_copy(update={"run_id": run.run_id}) for r in _requests()]
        write_results(store, run, requests, [], _engine_rows(run.run_id, waiting=0.0))
    return store


def test_a_cpu_host_reads_cpu_and_its_cores(cpu_store: Path) -> None:
    page = build_report(cpu_store, make_prices(), resamples=100)
    provenance = page[page.index('<h2 id="provenance">') :]
    assert "<td>CPU (8 cores)</td>" in provenance
    assert "x0" not in provenance


def test_an_empty_chart_is_left_out_with_one_line_saying_why(cpu_store: Path) -> None:
    page = build_report(cpu_store, make_prices(), resamples=100)
    engine = page[page.index('<h2 id="engine">') : page.index('<h2 id="cost">')]
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", engine)
    assert captions == ["KV-cache use vs concurrency"]  # the queue chart would be a flat 0 on an axis from -1 to 1
    assert engine.count('class="note left-out"') == 1
    assert (
        "Chart left out: Queue depth inside the engine vs concurrency: every run's mean queue depth is 0 (no request "
        "waited inside the engine)." in unescape(engine)
    )


def test_a_chart_of_a_lone_zero_has_no_negative_axis() -> None:
    chart = line_chart([Line("a", "#000", [(1.0, 0.0), (2.0, 0.0)])], "x", "y")
    ticks = re.findall(r'class="tick" text-anchor="end">([^<]+)</text>', chart)
    assert ticks[0] == "0" and not any(t.startswith("-") for t in ticks), ticks


def test_table_cells_wrap_within_the_page(html: str) -> None:
    """Text cells break where they must (the widest tables anywhere, the others between words), numbers never."""
    rules = {m[0].strip(): m[1] for m in re.findall(r"([^{}]+)\{([^}]*)\}", PAGE_CSS)}
    assert "overflow-wrap: break-word" in rules["th, td"]
    assert "overflow-wrap: anywhere" in rules["table.wide td"]
    assert "white-space: nowrap" in rules["td.num"]
    provenance = html[html.index('<h2 id="provenance">') :]
    assert '<table class="wide">' in provenance  # 19 columns: set tighter, and its cells break anywhere
