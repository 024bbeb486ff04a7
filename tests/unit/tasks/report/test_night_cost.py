"""The cost part of a night's closing summary (issue 41): each platform's cost per 1M output tokens that night at
its cheapest level, and the cheapest platform per model and workload with its advantage over the next, labelled as
a ranking (the nightly checks no claim). The figures are read back from view cost_basis, the view they come from."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.schemas.units import usd_per_m
from tcobench.tasks.prices import load_prices
from tcobench.tasks.report.alerts import announce_night
from tcobench.tasks.report.assets.context import usd
from tcobench.tasks.report.night_cost import night_cost_markdown
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import RunRows, write_runs
from tests.unit.factories import T0_NS, make_request, make_run

# host -> (vendor, GPU, hardware key, {concurrency: measurement window s}): 600 output tokens per run
PLATFORMS = {
    "nv": ("nvidia", "NVIDIA H200", "nvidia-h200-sxm", {1: 10, 4: 4}),
    "amd": ("amd", "AMD Instinct MI300X", "amd-mi300x", {1: 12, 4: 5}),
    "cpu": ("cpu", None, "cpu-generic-2c", {1: 60}),
}


def _write(store: Path, batch: str, day: int, scale: float = 1.0) -> None:
    rows = []
    for host, (vendor, gpu, key, windows) in PLATFORMS.items():
        for c, window in windows.items():
            run_id = f"{batch}-{host}-c{c}"
            start = T0_NS + day * 86_400 * 10**9 + c * 10**9
            run = make_run(
                run_id=run_id,
                batch_id=batch,
                host=host,
                gpu_vendor=vendor,
                gpu_name=gpu,
                gpu_count=1 if gpu else None,
                host_cpu_count=8,
                hardware_key=key,
                site_key="datacenter",
                ops_key="default",
                concurrency=c,
                started_ns=start,
                measure_start_ns=start,
                measure_end_ns=start + int(window * scale * 10**9),
            )
            request = make_request(run_id=run_id, host=host, start_ns=start, prompt_tokens=60, output_tokens=600)
            rows.append(RunRows(run, [request]))
    write_runs(store, rows)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("night-cost")
    _write(root, "night-1", 0)
    _write(root, "night-2", 1, scale=3.0)  # another night, three times slower: none of its figures may show
    return root


def _best(store: Path, batch: str) -> dict[str, float]:
    """Per hardware key, its most output tokens per USD over the night's levels (one run per level here)."""
    con = connect(store, load_prices(None), needs=("cost_basis",))  # the view it reads
    try:
        found = con.execute(
            "SELECT hardware_key, max(output_tokens_per_usd) FROM cost_basis WHERE basis = 'owned' AND "
            "batch_id = $batch GROUP BY ALL",
            {"batch": batch},
        ).fetchall()
    finally:
        con.close()
    return dict(found)


def test_each_platform_at_its_cheapest_level_and_the_cheapest_one_named(store: Path) -> None:
    text = night_cost_markdown(store, load_prices(None), "night-1")
    best = _best(store, "night-1")
    assert len(best) == 3
    rows = [line for line in text.splitlines() if line.startswith("| test-model")]
    assert len(rows) == 3, text  # one row per platform, cheapest first
    ranked = sorted(best, key=lambda k: -best[k])
    assert [r.split("|")[4].strip() for r in rows] == ranked
    for key, row in zip(ranked, rows, strict=True):
        assert f"| {usd(usd_per_m(best[key]))} |" in row, (key, row)
    assert "| NVIDIA H200 | nvidia-h200-sxm |" in text and "| c=4 (llama.cpp) |" in text
    assert "| CPU (8 cores) | cpu-generic-2c |" in text  # a CPU host by its cores, not "CPU x0"
    first, second = ranked[:2]
    label = {key: gpu or "CPU (8 cores)" for _, gpu, key, _ in PLATFORMS.values()}
    assert (
        f"- test-model / test-workload: cheapest {label[first]} ({first}), {usd(usd_per_m(best[first]))} per 1M "
        f"output tokens, {best[first] / best[second]:.2f}x as cost-efficient as the next, {label[second]} ({second}) "
        f"at {usd(usd_per_m(best[second]))}"
    ) in text
    assert "not a verdict" in text  # the nightly ranks; it checks no claim


def test_a_night_without_priced_runs_says_so(store: Path) -> None:
    text = night_cost_markdown(store, load_prices(None), "no-such-night")
    assert text.startswith("No cost for this night") and "$" not in text


def test_the_closing_summary_carries_the_cost(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TCOBENCH_WEBHOOK_URL", raising=False)
    text = announce_night(store, load_prices(None), "night-1", [], "# tcobench nightly night-1\n")
    cost = text.index("## Cost per 1M output tokens this night (owned basis)")
    assert text.index("# tcobench nightly night-1") < cost < text.index("Report: ")
    assert usd(usd_per_m(max(_best(store, "night-1").values()))) in text
