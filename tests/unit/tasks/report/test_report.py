"""report: the HTML holds every section and record-card field, loads nothing, and errors are one line."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from tcobench.errors import ConfigError, QueryError
from tcobench.tasks.prices import load_prices
from tcobench.tasks.report import report
from tcobench.tasks.report.assets import (
    Bar,
    Line,
    Mark,
    bar_chart,
    ecdf_chart,
    line_chart,
    scatter_chart,
    throughput_figure,
)
from tcobench.tasks.report.assets.context import night_weighted_rows
from tcobench.tasks.report.report import build_report, summary_markdown, write_report
from tcobench.tasks.store.query import connect, freeze_views, views_named
from tcobench.tasks.store.store import RunRows, write_runs
from tests.unit.factories import make_prices, write_fleet, write_nights
from tests.unit.operations_history import history

RECORD_TEMPLATE = (
    "GPU model",
    "driver version",
    "engine version",
    "mean tok/s",
    "P50 latency (ms)",
    "single-request time (ms)",
    "mean power (W)",
    "peak VRAM (GiB)",
    "adaptation days",
    "electricity cost per token",
    "context length",
    "mean input tokens",
    "concurrency",
    "OS / kernel",
    "CPU",
    "RAM (GiB)",
    "CUDA / ROCm",
)


@pytest.fixture(scope="module")
def html(fleet: Path) -> str:
    return build_report(fleet, load_prices(None), resamples=200, claim=5.0)


@pytest.fixture(scope="module")
def summary(fleet: Path) -> str:
    """The whole fleet's summary markdown, made once: the tests that use it only read it."""
    return summary_markdown(fleet, load_prices(None))


def test_sections_and_record_template(html: str) -> None:
    for heading in (
        "Headline",
        "Record card (latest night per platform)",
        "Throughput vs concurrency",
        "Time to first token (TTFT), distribution",
        "Inter-token latency (ITL), distribution",
        "Cost per 1M output tokens, 95% CI, per platform and cost basis",
        "Cost vs latency (Pareto)",
        "Energy per output token",
        "Cost at latency targets",
        "Nightly trend",
        "Operations",
        "Provenance",
    ):
        assert heading in html, heading
    for field in RECORD_TEMPLATE:
        assert f"<th>{field}</th>" in html, field
    assert "AMD Instinct MI300X @ gpu-amd-1" in html and "NVIDIA H200 @ gpu-nv-1" in html
    assert "580.159.04" in html and "6.10.5.1" in html  # driver versions of the record card / provenance


def test_headline_comparison_and_verdict(html: str) -> None:
    # default pair: the cheapest platform (NVIDIA on this fleet) and the cheapest of another vendor
    assert (
        "Headline pair (the cheapest pair of different vendors: NVIDIA H200 @ gpu-nv-1 vs AMD Instinct MI300X" in html
    )
    # each side names its GPU vendor (detected: these rows carry no declaration)
    assert "<b>NVIDIA H200 @ gpu-nv-1 (nvidia)</b> (A)" in html
    assert "<b>AMD Instinct MI300X @ gpu-amd-1 (amd)</b> (B)" in html
    assert 'id="claim-verdict"' in html and 'class="verdict-above"' in html
    assert "not supported: the measured advantage 1.26x is smaller than the claimed 5x" in html
    assert re.search(r"A is <b>1\.\d\dx</b> as cost-efficient as B \(95% CI 1\.\d\d-1\.\d\d\)", html)
    # the fleet measured its energy, and has no nightly history: carbon beside the cost terms, no downtime row
    assert re.search(
        r"<td>carbon \(not a cost\)</td><td[^>]*>[\d,]+\.\d gCO2e</td><td[^>]*>[\d,]+\.\d gCO2e</td>", html
    )
    assert "downtime (beside the total)" not in html


NIGHTS = "the mean over nights of each night's mean over its runs"
NOT_AVERAGED = "nothing is averaged over runs or nights"
# caption -> what its note must say was averaged (the column, its view, over what)
AVERAGED = {
    "Throughput vs concurrency": ["Aggregate output tokens/s of a run (view run_summary)", NIGHTS],
    "Time to first token (TTFT), distribution": ["quantile (quantile_cont) of each run's ok measured requests", NIGHTS],
    "Inter-token latency (ITL), distribution": ["quantile (quantile_cont) of each run's ok measured requests", NIGHTS],
    "Cost per 1M output tokens, 95% CI, per platform and cost basis": ["tokens per USD (view cost_basis)", NIGHTS],
    "Cost vs latency (Pareto)": ["e2e p90 latency (view run_summary)", "USD (view cost_basis, owned)", NIGHTS],
    "Energy per output token": ["Joules per output token (view efficiency)", NIGHTS],
    "Sensitivity: cost per 1M output tokens vs utilisation (owned)": ["View sensitivity", NIGHTS],
    "Throughput per GPU vs interactivity (frontier)": ["output tok/s per GPU (view frontier)", NIGHTS],
    "Cost per 1M output tokens vs interactivity": ["tokens per USD, views frontier and cost_basis", NIGHTS],
    "Median per-request decode rate of each run, by night": [
        "the median over the run's ok measured requests of each request's decode rate",
        NOT_AVERAGED,
    ],
}


def test_captions_say_exactly_what_was_averaged(html: str) -> None:
    figures = re.findall(r"<figure><figcaption>(.*?)</figcaption>(.*?)</figure>", html, flags=re.DOTALL)
    notes = {unescape(c): unescape(" ".join(re.findall(r'<p class="note">(.*?)</p>', body))) for c, body in figures}
    assert set(notes) == set(AVERAGED)  # every figure of the report is listed here, with its note
    for caption, phrases in AVERAGED.items():
        for phrase in phrases:
            assert phrase in notes[caption], (caption, phrase)
    # the headline's and the record card's figures: night-weighted; one row per run
    text = unescape(html)
    assert "Each side's tok/s, $/1M and cost terms: " + NIGHTS in text
    card = text[text.index("The record card:") : text.index("</p>", text.index("The record card:"))]
    assert NOT_AVERAGED in card and "the mean / median over the run's ok measured requests" in card
    assert "mean over nights" not in text.replace(NIGHTS, "")  # the loose wording the report used to print


def test_charts_are_inline_svg_with_marks(html: str) -> None:
    charts = re.findall(r'<svg class="chart" data-kind="(\w+)" data-marks="(\d+)"', html)
    assert len(charts) == 10  # 8, and the two at equal interactivity (frontier_figures.py)
    assert all(int(marks) > 0 for _, marks in charts)
    assert {kind for kind, _ in charts} == {"line", "bar", "scatter"}
    # every chart draws one distinct line per platform (no platform's data leaks into another's)
    for caption in ("Throughput vs concurrency", "Sensitivity: cost per 1M output tokens vs utilisation"):
        figure = html[html.index(caption) : html.index("</figure>", html.index(caption))]
        paths = re.findall(r'<path class="mark series-line" d="([^"]+)"', figure)
        assert len(paths) == 2 and paths[0] != paths[1], caption
    # the flagged regression is ringed on the trend chart, and listed
    assert "flagged: decode_tok_s" in html and "driver_version 6.10.5 -&gt; 6.10.5.1" in html


def test_self_contained(html: str) -> None:
    assert "default-src 'none'" in html  # the page may not fetch anything
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#|data:)""", html)
    assert not re.search(r"url\(", html) and "@import" not in html
    urls = set(re.findall(r"https?://[^\s\"'<]+", html))
    assert urls == {"http://www.w3.org/2000/svg"}  # the SVG namespace name, never fetched
    assert html.count("<script>") == 1 and 'data-report-ready="pending"' in html


def test_operations_section_has_the_changes_and_the_availability(tmp_path: Path) -> None:
    """The fleet (no nightly cells: no availability; its driver update flagged) and the simulated history of
    tests/unit/operations_history.py (cells on two platforms, a ROCm update followed by platform failures)."""
    write_fleet(tmp_path)
    write_runs(tmp_path, [RunRows(r) for r in history()])
    section = build_report(tmp_path, load_prices(None), resamples=100).split('<h2 id="operations">')[1]
    section = unescape(section.split("<h2")[0])
    assert "amd-01: ROCm 6.2 -> 6.3 on 2023-11-18; 3 platform failures in the next 2 nights" in section
    assert "gpu-amd-1: driver 6.10.5 -> 6.10.5.1 on 2026-11-26; 0 platform failures in the next 1 night; " in section
    assert "decode tok/s -11% (flagged)" in section
    # availability per platform: amd-mi300x's 9 host nights (amd-01: 7, amd-02: 2), 4 of them with a platform failure
    row = re.search(r"<tr[^>]*><td>amd-mi300x</td>(.*?)</tr>", section)
    assert row is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells[0] == "9" and cells[4] == "1"  # nights, platform failures (one outage: nights 4-5 of amd-01)


def test_measured_adaptation_sits_beside_the_assumption_and_prices_the_report_when_asked(tmp_path: Path) -> None:
    """The adaptation table (view measured_adaptation beside the price table's adaptation_days) says which days the
    figures use; --adaptation measured prices every cost figure with the measured days, as compare does."""
    write_fleet(tmp_path)
    write_runs(tmp_path, [RunRows(r) for r in history()])
    prices = load_prices(None)

    def section(html: str) -> str:
        return unescape(html.split('<h2 id="operations">')[1].split("<h2")[0])

    assumed, measured = (build_report(tmp_path, prices, resamples=100, adaptation=a) for a in ("assumed", "measured"))
    assert "the cost figures use the assumed days" in section(assumed)
    assert "the cost figures use the measured days" in section(measured)
    rows = re.findall(
        r"<tr[^>]*><td>(amd-mi300x|nvidia-h100-sxm)</td>(.*?)</tr>", section(assumed).split("Adaptation")[1]
    )
    days = {key: re.findall(r"<td[^>]*>(.*?)</td>", cells)[:3] for key, cells in rows}
    assert days["amd-mi300x"][0] == f"{prices.hardware['amd-mi300x'].adaptation_days:.2f}"
    assert days["amd-mi300x"][2] == "1 of 2"  # amd-02 never served (tests/unit/operations_history.py)
    cost = assumed.split('<h2 id="cost">')[1].split('<h2 id="operations">')[0]
    assert cost != measured.split('<h2 id="cost">')[1].split('<h2 id="operations">')[0]


def test_select_and_errors(tmp_path: Path, fleet: Path) -> None:
    nvidia_only = build_report(fleet, load_prices(None), select="vendor=nvidia", resamples=200)
    assert "Fewer than two GPU vendors" in nvidia_only and "MI300X @" not in nvidia_only
    with pytest.raises(QueryError, match="no measured run to report matches --select 'vendor=intel'"):
        build_report(fleet, load_prices(None), select="vendor=intel")
    with pytest.raises(QueryError, match="no measured run to report is stored"):
        build_report(tmp_path / "empty", load_prices(None))
    with pytest.raises(ConfigError, match="unknown key"):
        build_report(fleet, load_prices(None), select="colour=red")


def test_write_report_is_atomic(tmp_path: Path, fleet: Path) -> None:
    out = write_report(fleet, load_prices(None), tmp_path / "sub" / "report.html", resamples=200)
    assert out.read_text("utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # no temporary file left


def test_summary_markdown(summary: str) -> None:
    assert summary.startswith("# tcobench summary\n")
    assert "| run | host | GPU model | driver | engine | model | c | mean tok/s | P50 latency ms |" in summary
    assert "30 run(s). Changes beyond run-to-run noise: 1." in summary
    assert "- gpu-amd-1 | llama3.2:3b | chat-short | c=4, 2026-11-26: decode_tok_s" in summary


def test_summary_markdown_of_some_runs_is_their_lines_of_the_whole_stores(fleet: Path, summary: str) -> None:
    prices = load_prices(None)
    whole = summary.splitlines()
    con = connect(fleet, prices, needs={"runs"})
    try:
        rows = con.sql("SELECT run_id FROM runs ORDER BY started_ns DESC").fetchall()
    finally:
        con.close()
    ids = [rows[0][0], rows[7][0], rows[3][0]]
    some = summary_markdown(fleet, prices, ids)  # one call of macro summary_cards per run (one_run := $one)
    table = [line for line in some.splitlines()[4:] if line.startswith("| ")]
    assert len(table) == 3 and set(table) <= set(whole) and "\n3 run(s)." in some


def test_chart_primitives_escape_and_count_marks() -> None:
    line = line_chart([Line("a<b", "#000", [(1, 2), (2, 3)], marks=[Mark(2, 3, "t&t", ring=True)])], "x", "y")
    assert 'data-marks="3"' in line and "a&lt;b" in line and "t&amp;t" in line
    ecdf = ecdf_chart([Line("l", "#000", [(1, 0.0), (10, 1.0)])], "ms")
    assert 'data-kind="line"' in ecdf and ">fraction of requests<" in ecdf
    bars = bar_chart([Bar("x", 2.0, "#000", 1.0, 3.0, group="g"), Bar("y", 1.0, "#111", hollow=True, group="g")], "v")
    assert bars.count('class="group-label"') == 1 and 'stroke-dasharray="4 2"' in bars
    scatter = scatter_chart([Mark(1, 1, "p"), Mark(2, 0.5, "q")], "x", "y", frontier=[(1, 1), (2, 0.5)])
    assert 'class="frontier"' in scatter and 'data-marks="2"' in scatter


def test_one_cpu_run_priced_and_unpriced(tmp_path: Path) -> None:
    from tcobench.tasks.store.store import write_results
    from tests.unit.factories import make_prices, make_run
    from tests.unit.tasks.store.test_tco import _requests

    write_results(tmp_path, make_run(), _requests())
    priced = build_report(tmp_path, make_prices(), resamples=100)
    assert "Fewer than two GPU vendors" in priced and "CPU @ testhost" in priced
    assert priced.count('<svg class="chart"') == 8
    # the shipped table has no test-hw row: no cost, no energy estimate, and the report says so
    unpriced = build_report(tmp_path, load_prices(None), resamples=100)
    assert "No priced run" in unpriced and "No energy figure" in unpriced
    assert unpriced.count('<svg class="chart"') == 4


def test_provenance_names_an_imported_runs_source(tmp_path: Path) -> None:
    from tcobench.tasks.store.store import write_results
    from tests.unit.factories import make_prices, make_run
    from tests.unit.tasks.store.test_tco import _requests

    write_results(tmp_path, make_run(source="imported:vllm-bench 0.32.0"), _requests())
    section = build_report(tmp_path, make_prices(), resamples=100).split('<h2 id="provenance">')[1]
    assert "; imported:vllm-bench 0.32.0" in section


# what report._context and night_weighted_rows read (macros report_runs, platform_night_weighted(_lists))
_CONTEXT_NEEDS = views_named("report_runs left_out_runs platform_night_weighted platform_night_weighted_lists")


def test_averaged_figures_are_night_weighted(tmp_path: Path) -> None:
    # platform ha: night 1 runs of 60 and 120 output tok/s, night 2 one of 30: night means 90 and 30 -> 60 tok/s
    # (a run-weighted mean says 70); hb: 60 tok/s each night
    write_nights(tmp_path, "ha", "nvidia", {"2023-11-14": [10, 5], "2023-11-15": [20]})
    write_nights(tmp_path, "hb", "amd", {"2023-11-14": [10], "2023-11-15": [10]})
    con = connect(tmp_path, make_prices(), needs=_CONTEXT_NEEDS | {"run_summary", "cost_basis"})
    try:
        freeze_views(con)
        ctx = report._context(con, None, 5.0, 200, 0)
        rows = {r["platform"]: r for r in night_weighted_rows(ctx, "run_summary", "output_tok_s")}
        cost = {r["platform"]: r for r in night_weighted_rows(ctx, "cost_basis", "output_tokens_per_usd", "basis")}
        throughput = throughput_figure(ctx)
    finally:
        con.close()
    ha = rows["CPU @ ha"]
    assert (ha["mean"], ha["lowest"], ha["highest"], ha["nights"], ha["runs"]) == (60.0, 30.0, 90.0, 2, 3)
    assert (rows["CPU @ hb"]["mean"], rows["CPU @ hb"]["nights"]) == (60.0, 2)
    # tokens per USD is linear in tok/s: 60 tok/s -> 78 840 000 / 865.70 = 91 070.81 (as one run at 60 tok/s)
    assert round(cost["CPU @ ha"]["mean"], 2) == 91_070.81 and cost["CPU @ ha"]["basis"] == "owned"
    assert "CPU @ ha: 1, 60</title>" in throughput and "lowest and highest night" in throughput


def test_comparison_goodput_line(fleet: Path) -> None:
    """Issue 14: the report prints each side's share of requests within the SLO and cost per 1M good tokens; a
    level without an SLO on either side gets no line."""
    import dataclasses

    from tcobench.tasks.analysis.compare import CompareOptions, compare
    from tcobench.tasks.report.assets.tables import _goodput_html

    result = compare(fleet, load_prices(None), "vendor=nvidia", "vendor=amd", CompareOptions(resamples=100))
    assert _goodput_html(result) == ""  # the fleet's runs have no SLO
    first, *rest = result.strata
    planted = dataclasses.replace(first, a_good_fraction=0.5, b_good_fraction=0.9, a_good_usd_per_m=2.0)
    html = _goodput_html(dataclasses.replace(result, strata=(planted, *rest)))
    assert html == (
        f'<p class="goodput">Goodput at concurrency {first.concurrency}: A 50.0% of requests within the SLO, '
        "$2.00 per 1M good tokens; B 90.0% of requests within the SLO, - per 1M good tokens (view goodput).</p>"
    )


def test_headline_pair_chosen_with_a_and_b(fleet: Path) -> None:
    html = build_report(fleet, load_prices(None), a="host=gpu-amd-1", b="host=gpu-nv-1", resamples=200)
    assert "Headline pair (chosen with --a/--b)" in html
    assert "<b>host=gpu-amd-1 (amd)</b> (A)" in html and "<b>host=gpu-nv-1 (nvidia)</b> (B)" in html
    assert re.search(r"A is <b>0\.\d\dx</b> as cost-efficient as B", html)  # the dearer side first: below 1
    with pytest.raises(ConfigError, match="give both --a and --b"):
        build_report(fleet, load_prices(None), a="host=gpu-amd-1")
    with pytest.raises(ConfigError, match="--b 'host'"):
        build_report(fleet, load_prices(None), a="host=gpu-amd-1", b="host")


def test_flagged_changes_say_what_they_did_to_cost(html: str, summary: str) -> None:
    trend = html[html.index('<h2 id="trend">') :]
    assert "<th>$/1M output tokens: prior median -&gt; run</th>" in trend
    assert "$3.01 -> $3.42 (+13.5%)" in trend
    assert "cost per 1M output tokens 3.0104 -> 3.4183;" in summary


def test_provenance_groups_identical_platforms(html: str) -> None:
    section = html[html.index('<h2 id="provenance">') :]
    assert "30 runs in 3 group(s)" in section  # two hosts; one AMD run (last night, c=4) on a newer driver
    rows = re.findall(r"<tr data-host=\"(gpu-[a-z0-9-]+)\"[^>]*>(.*?)</tr>", section.split("Where every price")[0])
    assert sorted(h for h, _ in rows) == ["gpu-amd-1", "gpu-amd-1", "gpu-nv-1"]
    cells = {h + ("-new" if "6.10.5.1" in r else ""): re.findall(r"<td[^>]*>(.*?)</td>", r) for h, r in rows}
    assert cells["gpu-nv-1"][:5] == ["15", "5", "2026-11-22 to 2026-11-26 (5)", "1, 4, 16", "15 ok"]
    assert cells["gpu-amd-1-new"][:5] == ["1", "1", "2026-11-26", "4", "1 ok"]
    assert cells["gpu-amd-1"][:2] == ["14", "5"]


def test_provenance_groups_by_exactly_the_fields_its_cells_read() -> None:
    """provenance_section groups runs by _SHARED_FIELDS before making their cells: every field a shared cell reads
    must be listed (or runs that differ in it would share a row), and nothing more."""
    from tcobench.tasks.report.assets import tables

    class Reading(dict[str, object]):
        read: set[str] = set()

        def __getitem__(self, key: str) -> object:
            self.read.add(key)
            numbers = {"gpu_count": 1, "num_ctx": 2048, "max_tokens": 64, "utilisation": 0.5, "cuda_version": None}
            return numbers.get(key, "x")  # no CUDA version: the cell reads the ROCm one too

    run = Reading()
    for _, cell in tables._SHARED:
        cell(run)  # type: ignore[arg-type]
    assert run.read == set(tables._SHARED_FIELDS)


def test_the_page_has_a_filter_over_hosts_models_and_workloads(html: str) -> None:
    assert '<form class="filter" id="filter"' in html
    for name, values in (
        ("host", ("gpu-amd-1", "gpu-nv-1")),
        ("model", ("llama3.2:3b",)),
        ("workload", ("chat-short",)),
    ):
        assert f'<select name="{name}"><option value="">all</option>' in html
        assert all(f'<option value="{v}">{v}</option>' in html for v in values)
    found = re.search(r'<script type="application/json" id="series-facets">(.*?)</script>', html)
    assert found is not None
    facets = json.loads(found[1])
    series = set(re.findall(r'data-series="([^"]+)"', html))
    # every drawn series can be filtered (not the Pareto frontier's rings, nor the headline's sides: selections)
    assert {s for s in series - {"series"} if not s.startswith("side-")} <= set(facets)
    assert facets["nvidia-h200-gpu-nv-1"] == {"host": "gpu-nv-1", "model": "llama3.2:3b", "workload": "chat-short"}


def test_log_axes_have_readable_ticks() -> None:
    from tcobench.tasks.report.assets.svg import _log_ticks

    assert _log_ticks(32, 88) == (40.0, 50.0, 60.0, 70.0, 80.0)  # a narrow range: not one lone "50"
    assert _log_ticks(1, 10000) == (1.0, 10.0, 100.0, 1000.0, 10000.0)
    assert _log_ticks(30, 150) == (30.0, 50.0, 70.0, 100.0)
    assert len(_log_ticks(40, 44)) >= 4
    chart = ecdf_chart([Line("a", "#000", [(35.0, 0.1), (70.0, 0.9)])], "TTFT (ms)")
    labels = re.findall(r'class="tick" text-anchor="middle">([^<]+)</text>', chart)
    assert len(labels) >= 4, labels


def test_trend_draws_each_nightly_batch_at_its_own_position(tmp_path: Path) -> None:
    nights = {"2023-11-14~b1": [10], "2023-11-14~b2": [10], "2023-11-14~b3": [10], "2023-11-15": [10]}
    write_nights(tmp_path, "ha", "nvidia", nights)
    html = build_report(tmp_path, make_prices(), resamples=100)
    trend = html[html.index('<h2 id="trend">') :]
    labels = re.findall(r'class="tick" text-anchor="middle">([^<]+)</text>', trend)
    assert labels[:4] == ["11-14", "11-14 #2", "11-14 #3", "11-15"]


def test_a_quantile_curve_is_each_quantiles_night_weighted_mean(fleet: Path) -> None:
    """The latency distributions night-weight each position of the runs' quantile lists (night_weighted_rows with
    ``lists``: macro night_weighted_lists): the same figures as macro night_weighted over the lists unnested,
    one row per run and position."""
    con = connect(fleet, load_prices(None), needs=_CONTEXT_NEEDS | {"run_statistics"})
    try:
        freeze_views(con)
        ctx = report._context(con, None, 5.0, 200, 0)
        lists = night_weighted_rows(ctx, "run_statistics", "ttft_ms_q", lists=True)
        unnested = night_weighted_rows(
            ctx,
            con.sql(
                "SELECT run_id, generate_subscripts(ttft_ms_q, 1) AS i, unnest(ttft_ms_q) AS q FROM run_statistics"
            ),
            "q",
            by="i",
        )
    finally:
        con.close()
    assert len(lists) == len(unnested) > 101 and {r["i"] for r in lists} == set(range(1, 102))
    for mine, reference in zip(lists, unnested, strict=True):
        assert (mine["platform"], mine["concurrency"], mine["i"]) == (
            reference["platform"],
            reference["concurrency"],
            reference["i"],
        )
        assert mine["mean"] == pytest.approx(reference["mean"], rel=1e-12)
        assert mine["lowest"] == pytest.approx(reference["lowest"], rel=1e-12)
        assert mine["highest"] == pytest.approx(reference["highest"], rel=1e-12)
        assert (mine["nights"], mine["runs"]) == (reference["nights"], reference["runs"])


def test_record_card_shows_each_platforms_latest_night_and_every_nights_identity_warnings(tmp_path: Path) -> None:
    """The record card reads only the latest batch's runs of each platform; the identity warnings still come from
    every run of the report (an older night's disagreement is not hidden by a newer night without one)."""
    from tcobench.tasks.store.store import write_results
    from tests.unit.factories import make_run
    from tests.unit.tasks.store.test_tco import _requests

    older = "vendor declared nvidia, detected amd"
    for k, (batch, warning) in enumerate((("night-1", older), ("night-2", None))):
        for c in (1, 2):
            run_id = f"{batch}-c{c}"
            run = make_run(
                run_id=run_id,
                batch_id=batch,
                concurrency=c,
                identity_warning=warning,
                started_ns=1_700_000_000_000_000_000 + (k * 10 + c) * 10**9,
            )
            write_results(tmp_path, run, [r.model_copy(update={"run_id": run_id}) for r in _requests()])
    html = build_report(tmp_path, make_prices(), resamples=100)
    card = html[html.index('id="record-card"') : html.index('<p class="note">', html.index('id="record-card"'))]
    assert card.count("<tr") == 1 + 2, card  # the header and night-2's two levels
    assert f'<p class="warning">Host testhost: {older}</p>' in html
