"""A selection that takes no run says why (issue 41, item 5): how many stored runs it matched that compare leaves
out and their statuses, or the vendors and hosts there are, in words (no Python None)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.errors import QueryError
from tcobench.schemas import CompareOptions, RunStatus
from tcobench.tasks.analysis.compare import compare, parse_selection
from tcobench.tasks.analysis.compare.selection import pick
from tests.unit.factories import make_prices, make_request, make_run


def _write(store: Path, run_id: str, vendor: str | None, status: RunStatus = RunStatus.ok, n: int = 4) -> None:
    from tcobench.tasks.store.store import write_results

    host = f"h-{vendor or 'cpu'}"
    run = make_run(run_id=run_id, host=host, gpu_vendor=vendor, status=status)
    write_results(store, run, [make_request(run_id=run_id, host=host, request_index=i) for i in range(n)])


@pytest.fixture
def store(tmp_path: Path) -> Path:
    for i in range(3):
        _write(tmp_path, f"nv-int-{i}", "nvidia", RunStatus.interrupted)
    _write(tmp_path, "nv-failed", "nvidia", RunStatus.failed)
    _write(tmp_path, "nv-never-ran", "nvidia", RunStatus.failed, n=0)  # no request: no run_summary row
    _write(tmp_path, "amd-ok", "amd")
    _write(tmp_path, "cpu-ok", None)
    return tmp_path


@pytest.mark.parametrize("interactivity", [None, (20.0,)], ids=["per-level", "at-interactivity"])
def test_a_side_of_only_left_out_runs_says_how_many_and_why(store: Path, interactivity: tuple[float] | None) -> None:
    options = CompareOptions(resamples=100, interactivity=interactivity)
    with pytest.raises(QueryError) as info:
        compare(store, make_prices(), "vendor=nvidia", "vendor=amd", options)
    assert str(info.value) == (
        "selection A 'vendor=nvidia' matches 5 stored runs, all left out: 3 interrupted, 2 failed; only ok and "
        "partial runs are compared"
    )


def test_a_side_that_matches_nothing_names_vendors_and_hosts_in_words(store: Path) -> None:
    with pytest.raises(QueryError) as info:
        compare(store, make_prices(), "vendor=amd", "vendor=intel", CompareOptions(resamples=100))
    message = str(info.value)
    assert message == (
        "selection B 'vendor=intel' matches no stored run (2 runs searched; vendors: amd, no GPU (1 run); hosts: "
        "h-amd, h-cpu)"
    )
    assert "None" not in message


def test_pick_reads_the_left_out_runs_only_when_nothing_matches() -> None:
    rows = [{"run_id": "a", "gpu_vendor": None, "host": None}]
    calls: list[int] = []

    def left_out() -> list[dict[str, object]]:
        calls.append(1)
        return [{"run_id": "b", "gpu_vendor": "amd", "status": "interrupted"}]

    assert pick(rows, parse_selection("run=a"), "A", left_out) == rows and not calls
    with pytest.raises(QueryError, match=r"^selection A 'vendor=amd' matches 1 stored run, left out: 1 interrupted;"):
        pick(rows, parse_selection("vendor=amd"), "A", left_out)
    with pytest.raises(QueryError) as info:
        pick(rows, parse_selection("vendor=nvidia"), "A")
    assert str(info.value).endswith("(1 run searched; vendors: no GPU (1 run); hosts: none)")


def test_the_report_says_which_runs_it_left_out(store: Path, tmp_path: Path) -> None:
    from tcobench.tasks.report.report import build_report

    with pytest.raises(QueryError) as info:
        build_report(store, make_prices(), select="vendor=nvidia", resamples=100)
    assert str(info.value) == (
        "no measured run to report matches --select 'vendor=nvidia': it matches 5 stored runs, all left out: 3 "
        "interrupted, 2 failed; only ok and partial runs are reported"
    )
    only = tmp_path / "interrupted-only"
    _write(only, "int", "nvidia", RunStatus.interrupted)
    with pytest.raises(QueryError) as info:
        build_report(only, make_prices(), resamples=100)
    assert str(info.value) == (
        "no measured run to report is stored: 1 stored run, left out: 1 interrupted; only ok and partial runs are "
        "reported"
    )
