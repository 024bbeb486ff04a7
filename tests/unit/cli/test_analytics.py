"""`tcobench compare | history | report` on stored runs: output, verdicts, refusals as one-line errors."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.tasks.store.store import write_results
from tests.unit.factories import make_request, make_run

runner = CliRunner()
WIDE = {"COLUMNS": "220"}


def test_compare_prints_ratio_ci_drivers_and_verdict(fleet: Path) -> None:
    done = runner.invoke(
        app,
        [
            "compare",
            "--a",
            "vendor=nvidia",
            "--b",
            "vendor=amd",
            "--claim",
            "5",
            "--resamples",
            "300",
            "--store",
            str(fleet),
        ],
        env=WIDE,
    )
    assert done.exit_code == 0, done.stderr
    text = done.stdout
    assert (
        "A = vendor=nvidia: 15 run(s) over 5 night(s) (nightly batches) on 5 UTC date(s); hosts gpu-nv-1; GPUs" in text
    )
    assert "Cost efficiency, A / B (output tokens per USD, owned basis)" in text
    assert "all (geo. mean)" in text and "What drives the difference" in text and "adaptation" in text
    # carbon beside the cost terms (the fleet measured its energy); no downtime row: no nightly history
    assert re.search(r"gCO2e per 1M output[\s│|]+[\d,]+\.\d g[\s│|]+[\d,]+\.\d g[\s│|]+[+-][\d,]+\.\d g", text)
    assert "downtime (beside)" not in text
    # the claim's frame without --interactivity: the concurrency levels (claim_frame.judge), each in words
    assert (
        "verdict: the claim 'A is 5x as cost-efficient as B' is not supported at 3 of its 3 concurrency levels" in text
    )
    assert "claim 5x at concurrency 1: not supported: the measured advantage 1.2" in text
    assert "at equal interactivity (not the claim's frame): " in text


def test_compare_refuses_different_workloads(tmp_path: Path) -> None:
    for run in (make_run(run_id="a", gpu_vendor="nvidia"), make_run(run_id="b", gpu_vendor="amd", max_tokens=256)):
        write_results(tmp_path, run, [make_request(run_id=run.run_id, request_index=i) for i in range(3)])
    args = ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--claim", "5", "--store", str(tmp_path)]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 1 and len(refused.stderr.strip().splitlines()) == 1
    assert refused.stderr.startswith("QueryError: refused: the selections differ in what was measured: ")
    assert "max_tokens: A {64} vs B {256}" in refused.stderr
    # allowed, but these runs use the test-hw key, absent from the shipped price table: no cost to compare
    allowed = runner.invoke(app, [*args, "--allow-different", "--resamples", "100"], env=WIDE)
    assert allowed.exit_code == 1 and allowed.stderr.startswith(
        "QueryError: selection A: no run has a cost on the owned basis: hardware key 'test-hw' is not in the price"
    )


def test_compare_bad_selection_is_one_line(fleet: Path) -> None:
    done = runner.invoke(app, ["compare", "--a", "vendor", "--b", "vendor=amd", "--store", str(fleet)])
    assert done.exit_code == 1 and done.stderr.startswith("ConfigError: --a 'vendor': term 'vendor' is not key=value")


def test_history_lists_trends_and_flags(fleet: Path) -> None:
    done = runner.invoke(app, ["history", "--store", str(fleet), "--series", "gpu-amd-1", "--detail"], env=WIDE)
    assert done.exit_code == 0, done.stderr
    assert "gpu-amd-1 | llama3.2:3b | chat-short | c=4 (AMD Instinct MI300X)" in done.stdout
    # counts the series with a flag, of those examined; says what the change did to cost
    assert "1 flagged change(s) in 1 of 3 series" in done.stdout
    assert "cost per 1M output tokens $3.01 -> $3.42 (+13.5%)" in done.stdout
    assert "decode_tok_s" in done.stdout and "driver_version 6.10.5 -> 6.10.5.1" in done.stdout
    quiet = runner.invoke(app, ["history", "--store", str(fleet), "--flagged-only", "--series", "gpu-nv-1"], env=WIDE)
    assert quiet.exit_code == 0 and "no change beyond run-to-run noise" in quiet.stdout
    bad = runner.invoke(app, ["history", "--store", str(fleet), "--window", "0"])
    assert bad.exit_code == 1 and bad.stderr.startswith("ConfigError: need 1 <= min_prior <= window")


def test_history_fail_on_change_exits_1_only_when_something_is_flagged(fleet: Path) -> None:
    flagged = runner.invoke(app, ["history", "--store", str(fleet), "--fail-on-change"], env=WIDE)
    assert flagged.exit_code == 1, flagged.stderr
    assert flagged.stderr.strip().splitlines() == [
        "ChangeError: 1 flagged change(s) in 1 of 6 series (--fail-on-change); first: gpu-amd-1 | llama3.2:3b | "
        "chat-short | c=4, 2026-11-26: decode_tok_s -10.9%"
    ]
    quiet = runner.invoke(app, ["history", "--store", str(fleet), "--fail-on-change", "--series", "gpu-nv-1"])
    assert quiet.exit_code == 0, quiet.stderr


def test_compare_lists_flagged_runs_and_can_leave_them_out(fleet: Path) -> None:
    args = ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--resamples", "200", "--store", str(fleet)]
    kept = runner.invoke(app, args, env=WIDE)
    assert kept.exit_code == 0, kept.stderr
    line = "B: run gpu-amd-1-n4-c4 (gpu-amd-1 | llama3.2:3b | chat-short | c=4, 2026-11-26, batch gpu-amd-1-n4): "
    assert line + "regression: decode_tok_s -10.9% (worse)" in kept.stdout
    assert "kept; --exclude-flagged leaves them out" in kept.stdout
    left_out = runner.invoke(app, [*args, "--exclude-flagged"], env=WIDE)
    assert left_out.exit_code == 0, left_out.stderr
    assert "note: 1 flagged run(s) of B left out (--exclude-flagged)" in left_out.stdout
    assert "5 / 4" in left_out.stdout and "5 / 4" not in kept.stdout  # runs (and nights) A / B at concurrency 4


def test_report_writes_one_file(fleet: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    done = runner.invoke(app, ["report", "--out", str(out), "--store", str(fleet), "--resamples", "200"], env=WIDE)
    assert done.exit_code == 0, done.stderr
    # 8, and the two at equal interactivity (tasks/report/assets/frontier_figures.py)
    assert f"wrote {out}" in done.stdout and out.read_text("utf-8").count('<svg class="chart"') == 10
    (tmp_path / "empty").mkdir()
    empty = runner.invoke(app, ["report", "--out", str(out), "--store", str(tmp_path / "empty")])
    assert empty.exit_code == 1 and empty.stderr.startswith("QueryError: no measured run to report is stored")
