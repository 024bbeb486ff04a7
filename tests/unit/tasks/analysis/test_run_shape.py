"""View run_shape on a real store: asked vs served means, the mismatch flag at the shape tolerance (its default and
TCOBENCH_SHAPE_TOLERANCE) and the likely cause in words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.tasks.analysis.shape import run_shapes
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.store import write_results
from tests.unit.factories import make_request, make_run

PRICES = load_prices(None)


def _run(store: Path, run_id: str, asked: tuple[int, int], served: tuple[int, int], exact: bool = True) -> None:
    requests = [
        make_request(
            run_id=run_id,
            request_index=i,
            requested_input_tokens=asked[0],
            requested_output_tokens=asked[1],
            prompt_tokens=served[0],
            output_tokens=served[1],
        )
        for i in range(4)
    ]
    write_results(store, make_run(run_id=run_id, ignore_eos=exact), requests)


def test_a_shape_off_by_more_than_the_tolerance_is_flagged_with_its_cause(tmp_path: Path) -> None:
    _run(tmp_path, "tokenizer", (921, 16), (651, 16))
    _run(tmp_path, "eos", (900, 64), (900, 30))
    _run(tmp_path, "close", (900, 64), (950, 64))
    rows = {r["run_id"]: r for r in run_shapes(tmp_path, PRICES, ["tokenizer", "eos", "close"]).to_pylist()}
    assert rows["tokenizer"]["shape_mismatch"] and rows["tokenizer"]["shape_note"] == (
        "input tokens asked 921, served 651 (-29%): the tokenizer does not match the server's (or its chat template "
        "differs)"
    )
    assert (rows["tokenizer"]["requested_isl_mean"], rows["tokenizer"]["isl_mean"]) == (921, 651)
    assert rows["eos"]["shape_mismatch"] and rows["eos"]["shape_note"].startswith(
        "output tokens asked 64, served 30 (-53%): the engine stopped early"
    )
    assert rows["close"]["shape_mismatch"] is False and rows["close"]["shape_note"] is None  # +5.6% < 10%
    assert rows["close"]["shape_tolerance"] == 0.10


def test_without_ignore_eos_max_tokens_is_a_cap(tmp_path: Path) -> None:
    """A run that did not ask for exactly max_tokens (ignore_eos off) is not flagged for stopping early, only for
    serving more than max_tokens."""
    _run(tmp_path, "stops", (900, 64), (900, 30), exact=False)
    _run(tmp_path, "runs-on", (900, 64), (900, 90), exact=False)
    rows = {r["run_id"]: r for r in run_shapes(tmp_path, PRICES, ["stops", "runs-on"]).to_pylist()}
    assert rows["stops"]["shape_mismatch"] is False and rows["stops"]["osl_error"] == pytest.approx(30 / 64 - 1)
    assert rows["runs-on"]["shape_mismatch"] and rows["runs-on"]["shape_note"].startswith(
        "output tokens asked 64, served 90 (+41%): the engine does not honour max_tokens"
    )


def test_the_tolerance_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run(tmp_path, "close", (900, 64), (950, 64))
    monkeypatch.setenv("TCOBENCH_SHAPE_TOLERANCE", "0.05")
    (row,) = run_shapes(tmp_path, PRICES, ["close"]).to_pylist()
    assert row["shape_mismatch"] and row["shape_note"].startswith("input tokens asked 900, served 950 (+6%)")
    monkeypatch.setenv("TCOBENCH_SHAPE_TOLERANCE", "a lot")
    with pytest.raises(ConfigError, match="^TCOBENCH_SHAPE_TOLERANCE: not a number, got 'a lot'$"):
        run_shapes(tmp_path, PRICES, ["close"])
    monkeypatch.setenv("TCOBENCH_SHAPE_TOLERANCE", "0.05")
    (row,) = run_shapes(tmp_path, PRICES, ["close"], shape_tolerance=0.10).to_pylist()  # a command's own wins
    assert not row["shape_mismatch"]


def test_compare_and_the_report_name_each_sides_mismatch_with_its_cause(tmp_path: Path) -> None:
    from types import SimpleNamespace
    from typing import cast

    from tcobench.tasks.analysis.compare.candidates import CandidateRun
    from tcobench.tasks.analysis.compare.comparison import _shape_notes
    from tcobench.tasks.report.assets.context import ReportContext
    from tcobench.tasks.report.report import _shape_warning
    from tcobench.tasks.store.query import connect

    _run(tmp_path, "tok-a1", (921, 16), (651, 16))
    _run(tmp_path, "tok-a2", (921, 16), (651, 16))
    _run(tmp_path, "fine-b", (900, 64), (900, 64))
    con = connect(tmp_path, PRICES, needs={"shape_mismatches"})
    try:
        sides = {
            "A": [cast(CandidateRun, {"run_id": "tok-a1"}), cast(CandidateRun, {"run_id": "tok-a2"})],
            "B": [cast(CandidateRun, {"run_id": "fine-b"})],
        }
        assert _shape_notes(con, sides) == [
            "shape_mismatch on A (2 run(s): tok-a1, tok-a2): input tokens asked 921, served 651 (-29%): the tokenizer "
            "does not match the server's (or its chat template differs)"
        ]
        assert _shape_notes(con, {"A": sides["B"], "B": []}) == []
        runs = [{"run_id": i, "host": "h", "concurrency": 1} for i in ("tok-a1", "fine-b")]
        warning = _shape_warning(cast(ReportContext, SimpleNamespace(con=con, runs=runs)))
        assert "shape_mismatch in 1 run(s):</strong> tok-a1 (h, c=1)" in warning
        assert "input tokens asked 921, served 651 (-29%)" in warning
        assert _shape_warning(cast(ReportContext, SimpleNamespace(con=con, runs=runs[1:]))) == ""
    finally:
        con.close()
