"""`tcobench plan`: the plan printed as a table or one JSON document over two simulated platforms' stored runs
(tests/unit/factories.write_configs); a target outside both frontiers, a bad option and a bad trace line are one
line each and a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli import app
from tests.unit.factories import SimulatedConfig, write_configs, write_replay
from tests.unit.tasks.analysis.test_plan import write_trace

runner = CliRunner()
NV = SimulatedConfig("sim-nv", "nvidia", "H200", "nvidia-h200-sxm", 4.0, 1.0, 1, levels=(1, 2, 4, 8, 16, 32))
AMD = SimulatedConfig("sim-amd", "amd", "MI300X", "amd-mi300x", 5.0, 0.8, 1, levels=(1, 2, 4, 8, 16, 32))


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("plan-cli")
    write_configs(folder / "store", [NV, AMD])
    return folder / "store", write_trace(folder / "m.jsonl")


def _invoke(setup: tuple[Path, Path], *extra: str, trace: Path | None = None) -> tuple[int, str, str]:
    store, path = setup
    args = ["plan", "--trace", str(trace or path), "--a", "vendor=nvidia", "--b", "vendor=amd"]
    done = runner.invoke(app, [*args, "--resamples", "200", "--store", str(store), *extra])
    return done.exit_code, done.stdout, done.stderr


def test_json_is_one_document_with_both_fleets(setup: tuple[Path, Path]) -> None:
    code, stdout, stderr = _invoke(setup, "--interactivity", "50", "--format", "json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert (doc["interactivity"], doc["at"], doc["basis"]) == (50.0, "p95", "owned")
    assert doc["need_tok_s"] == pytest.approx(870_000 / 60)
    for side in doc["platforms"]:
        assert side["gpus"]["value"] >= 1 and side["gpus"]["ci_low"] is not None
        assert side["hosts"]["value"] == -(-side["gpus"]["value"] // 8)  # ceil(GPUs / 8 GPUs per host)
    ratio = (
        doc["platforms"][0]["costs"][0]["usd_month"]["value"] / doc["platforms"][1]["costs"][0]["usd_month"]["value"]
    )
    assert doc["ratio"]["value"] == pytest.approx(ratio)


def test_the_table_names_the_fleet_and_the_verdict(setup: tuple[Path, Path]) -> None:
    code, stdout, stderr = _invoke(setup, "--interactivity", "50", "--at", "peak")
    assert code == 0, stderr
    text = " ".join(stdout.split())
    assert "sized for the peak per-minute output rate, 15,000.0 tok/s" in text
    assert "GPUs" in text and "USD per month, owned" in text and "headroom at the busiest minute" in text
    assert "serving this traffic on A costs" in text


def test_a_target_outside_both_frontiers_is_one_line(setup: tuple[Path, Path]) -> None:
    code, stdout, stderr = _invoke(setup, "--interactivity", "500")
    assert code != 0 and stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("QueryError: --interactivity 500 tok/s/user is outside every")


def test_a_bad_at_and_a_bad_trace_line_are_one_line(setup: tuple[Path, Path], tmp_path: Path) -> None:
    code, _, stderr = _invoke(setup, "--interactivity", "50", "--at", "p99")
    assert code == 2 and "--at" in stderr and "choose peak, p95 or mean" in stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"timestamp": 0, "input_length": 5, "output_length": 1}\n{"timestamp": 1, "input_length": -2}\n')
    code, _, stderr = _invoke(setup, "--interactivity", "50", trace=bad)
    assert code != 0 and len(stderr.strip().splitlines()) == 1
    assert "bad.jsonl" in stderr and "line 2" in stderr


def test_the_table_says_a_platform_was_sized_from_replayed_runs(tmp_path: Path) -> None:
    """A replayed the trace at time scale 2 and met 75 tok/s/user (TPOT 10 ms); B has no replay that met it (TPOT
    20 ms: 50 tok/s/user) and no frontier either: A's title says where its fleet came from, B cannot plan."""
    trace = write_trace(tmp_path / "m.jsonl")
    write_replay(tmp_path / "store", NV, trace, 2.0, 10.0, "nv-replay")
    write_replay(tmp_path / "store", AMD, trace, 2.0, 20.0, "amd-replay")
    code, stdout, stderr = _invoke((tmp_path / "store", trace), "--interactivity", "75")
    assert code == 0, stderr
    text = " ".join(stdout.split())
    assert "sized from replayed runs (time scale 2; no CI)" in text
    assert text.count("sized from replayed runs (time scale") == 1 and "B: cannot plan" in text
    assert "B: 1 replayed run(s) of this trace, none met 75 tok/s/user" in text
