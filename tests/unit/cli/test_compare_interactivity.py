"""`tcobench compare --interactivity` over a stored two-host fleet: the table, JSON, CSV, the claim gate, refusals,
and the report's headline at that interactivity (a new user's path: a simulated sweep, compare, report)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.errors import ExitCode
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import RunRows, write_runs
from tests.unit.factories import make_request, make_run, write_fleet

runner = CliRunner()
WIDE = {"COLUMNS": "220"}
SIDES = ["--a", "vendor=nvidia", "--b", "vendor=amd"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two hosts swept over 5 levels on 3 nights: NVIDIA's range 54-120 tok/s/user, AMD's 32-72 (factories)."""
    store = tmp_path_factory.mktemp("sweep")
    write_fleet(store, nights=3, concurrency=(1, 2, 4, 8, 16), regression=None)
    return store


def _compare(store: Path, *args: str) -> tuple[int, str, str]:
    done = runner.invoke(app, ["compare", *SIDES, "--resamples", "100", "--store", str(store), *args], env=WIDE)
    return done.exit_code, done.stdout, done.stderr


def test_run_summary_and_view_frontier_hold_the_per_run_coordinates(sweep: Path) -> None:
    con = connect(sweep, load_prices(None), needs=("frontier",))
    try:
        rows = con.execute(
            "SELECT s.interactivity, 1000 / s.tpot_p50_ms, s.interactivity_p90, s.output_tok_s_per_gpu, "
            "s.output_tok_s, s.gpus_counted, s.gpus_counted_source FROM run_summary AS s"
        ).fetchall()
        points = con.execute("SELECT count(*), count(*) FILTER (WHERE pareto) FROM frontier WHERE basis = 'owned'")
        total, pareto = points.fetchone() or (0, 0)
    finally:
        con.close()
    assert rows and all(r[0] == pytest.approx(r[1]) and r[2] < r[0] and r[3] == r[4] for r in rows)
    assert {(r[5], r[6]) for r in rows} == {(1, "gpu_count")}
    assert total == 30 and 0 < pareto < total  # repeated nights: some runs of a level are beaten by another's


def test_view_frontier_takes_a_runs_steady_state_where_it_has_one(sweep: Path) -> None:
    con = connect(sweep, load_prices(None), needs=("frontier",))
    try:
        rows = con.execute(
            "SELECT f.steady, f.interactivity, f.output_tok_s_per_gpu, f.usd_per_gpu_s, s.steady_interactivity, "
            "s.steady_output_tok_s, s.interactivity, s.output_tok_s_per_gpu, f.output_tokens_per_usd "
            "FROM frontier AS f JOIN run_summary AS s USING (run_id) WHERE f.basis = 'owned'"
        ).fetchall()
    finally:
        con.close()
    steady = [r for r in rows if r[0]]
    assert steady, "the simulated sweep's closed-loop levels have a steady state"
    for r in steady:  # the steady figures; the cost rate per GPU stays the whole run's
        assert (r[1], r[2]) == pytest.approx((r[4], r[5]))
        assert r[3] == pytest.approx(r[7] / r[8])
    for r in rows:
        if not r[0]:
            assert (r[1], r[2]) == pytest.approx((r[6], r[7]))


def test_compare_at_interactivity_names_the_sides_and_refuses_outside_the_ranges(sweep: Path) -> None:
    code, out, err = _compare(sweep, "--interactivity", "60,30")
    assert code == 0, err
    assert "At equal interactivity (tok/s/user = 1000 / median TPOT ms; owned basis, output tokens)" in out
    # each side named with its configuration (runs stored before configurations: engine, version and GPUs)
    assert "at 60 tok/s/user: NVIDIA H200 (gpu-nv-1; ollama 0.32.0, 1 GPU) is " in out
    assert (
        "x as cost-efficient as AMD Instinct MI300X (gpu-amd-1; ollama 0.32.0, 1 GPU) at 60 tok/s/user (95% CI " in out
    )
    assert "30 tok/s/user is outside A's measured range" in out and "(B's: " in out
    assert "Cost efficiency, A / B" in out  # the per-concurrency table stays
    assert "frontier points from the steady state (all streams in flight; view steady_window): A " in out


def test_json_document_and_csv_rows(sweep: Path) -> None:
    code, out, err = _compare(sweep, "--interactivity", "60,30", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    fields = {
        "target",
        "a_tok_s_per_gpu",
        "b_tok_s_per_gpu",
        "a_usd_per_m",
        "b_usd_per_m",
        "ratio",
        "ci_low",
        "ci_high",
        "reason",
    }
    inside, outside = doc["interactivity"]
    assert fields <= set(inside) and inside["target"] == 60.0
    assert inside["ci_low"] <= inside["ratio"] <= inside["ci_high"] and inside["reason"] is None
    assert inside["ratio"] == pytest.approx(inside["b_usd_per_m"] / inside["a_usd_per_m"])
    assert outside["ratio"] is None and "does not extrapolate" in outside["reason"]
    assert doc["a"]["name"] == "NVIDIA H200 (gpu-nv-1)" and doc["concurrency"]
    stamp = doc["claim_grade"]  # issue 31's stamp: the simulated sweep is far too short to be claim-grade
    assert stamp["passed"] is False
    assert [r["name"] for r in stamp["rules"]] == [
        "duration",
        "samples",
        "steady_share",
        "power",
        "setup",
        "shape",
        "parity",
        "accuracy",
    ]
    assert all(set(r) == {"name", "passed", "value", "required", "where"} for r in stamp["rules"])
    assert not next(r for r in stamp["rules"] if r["name"] == "duration")["passed"]
    code, out, err = _compare(sweep, "--interactivity", "60,30", "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["kind"] for r in rows[:2]] == ["interactivity", "interactivity"] and rows[2]["kind"] == "concurrency"
    assert float(rows[0]["ratio"]) == pytest.approx(inside["ratio"]) and rows[1]["ratio"] == ""


def test_an_unsupported_claim_exits_with_its_own_code(sweep: Path) -> None:
    code, _, err = _compare(sweep, "--interactivity", "60", "--claim", "10", "--fail-if-unsupported")
    assert code == int(ExitCode.unsupported) == 5
    assert err.startswith("ClaimError: the claim 'A is 10x as cost-efficient as B' is not supported at 1 place(s)")
    assert len(err.strip().splitlines()) == 1
    code, _, err = _compare(sweep, "--interactivity", "60", "--claim", "1.01", "--fail-if-unsupported")
    assert code == 0, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--interactivity", "fast"], "ConfigError: --interactivity 'fast': 'fast' is not a target (valid: positive"),
        (["--interactivity", "-5"], "ConfigError: --interactivity '-5': '-5' is not a target"),
        (
            ["--interactivity", "50", "--interactivity-quantile", "1.5"],
            "ConfigError: --interactivity-quantile 1.5: must lie in (0, 1)",
        ),
    ],
)
def test_bad_input_is_one_line(sweep: Path, args: list[str], message: str) -> None:
    code, _, err = _compare(sweep, *args)
    assert code == 1 and err.startswith(message) and len(err.strip().splitlines()) == 1, err


def test_a_side_without_tpot_is_refused(tmp_path: Path) -> None:
    write_fleet(tmp_path, nights=1, concurrency=(1, 4), regression=None)
    run = make_run(
        run_id="one-token",
        host="gpu-x",
        gpu_vendor="amd",
        gpu_name="X",
        max_tokens=1,
        hardware_key="nvidia-h200-sxm",
        site_key="datacenter",
        ops_key="default",
    )
    request = make_request(run_id="one-token", host="gpu-x", output_tokens=1, itl_ns=[], chunks=1, decode_ns=0)
    write_runs(tmp_path, [RunRows(run, [request])])
    done = runner.invoke(
        app,
        [
            "compare",
            "--a",
            "vendor=nvidia",
            "--b",
            "host=gpu-x",
            "--interactivity",
            "50",
            "--allow-different",
            "--resamples",
            "100",
            "--store",
            str(tmp_path),
        ],
    )
    assert done.exit_code == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("QueryError: selection B 'host=gpu-x': no request has a TPOT"), done.stderr


def test_report_headline_states_the_ratio_at_the_interactivity_asked_for(sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = runner.invoke(
        app,
        ["report", "--out", str(out), "--store", str(sweep), "--resamples", "200", "--interactivity", "60"],
        env=WIDE,
    )
    assert done.exit_code == 0, done.stderr
    html = out.read_text("utf-8")
    assert 'id="headline-interactivity">NVIDIA H200 (gpu-nv-1; ollama 0.32.0, 1 GPU) is ' in html
    assert "at 60 tok/s/user (95% CI " in html and "chosen with --interactivity" in html
    assert (
        "Throughput per GPU vs interactivity (frontier)" in html
        and "Cost per 1M output tokens vs interactivity" in html
    )
    assert "a claimed" not in html  # no claim stated unless given
