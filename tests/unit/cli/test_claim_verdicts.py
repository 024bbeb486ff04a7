"""One verdict per claim (issue 41): with and without --interactivity, a claim supported, not supported, or at a
target that gets no ratio (refused), compare's words, its JSON, the report's headline and the exit status of
--fail-if-unsupported all say the same thing. The claim's frame is the interactivity targets asked for, else the
concurrency levels; the other frame is context and never decides (without --interactivity, compare's own spread
targets once decided the exit status). Two simulated platforms (tests/unit/factories.write_configs): their ratio is
near 1 everywhere, so a claim of 0.1x holds everywhere and one of 10x nowhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli.main import app
from tcobench.schemas import CompareOptions
from tests.unit.factories import SimulatedConfig, write_configs

WIDE = {"COLUMNS": "200", "NO_COLOR": "1"}
LEVELS = (1, 2, 4, 8, 16)
NV = SimulatedConfig("sim-nv", "nvidia", "H200", "nvidia-h200-sxm", 4.0, 1.0, 1, levels=LEVELS)
AMD = SimulatedConfig("sim-amd", "amd", "MI300X", "amd-mi300x", 5.0, 0.8, 1, levels=LEVELS)
runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("verdicts")
    write_configs(root, [NV, AMD])
    return root


# (claim, --interactivity or None, supported): the frame's targets all supported, or not
CASES = [
    pytest.param(0.1, "100", True, id="interactivity-supported"),
    pytest.param(10.0, "100", False, id="interactivity-unsupported"),
    pytest.param(0.1, "100,900", False, id="interactivity-refused"),  # 900 tok/s/user: outside both frontiers
    pytest.param(0.1, None, True, id="levels-supported"),
    pytest.param(10.0, None, False, id="levels-unsupported"),
]


def _compare(store: Path, claim: float, targets: str | None, fmt: str) -> tuple[int, str, str]:
    args = ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--claim", str(claim), "--fail-if-unsupported"]
    args += ["--resamples", "200", "--format", fmt, "--store", str(store)]
    args += ["--interactivity", targets] if targets is not None else []
    done = runner.invoke(app, args, env=WIDE)
    return done.exit_code, done.stdout, done.stderr


@pytest.mark.parametrize(("claim", "targets", "supported"), CASES)
def test_words_json_and_exit_status_agree(store: Path, claim: float, targets: str | None, supported: bool) -> None:
    code, text, err = _compare(store, claim, targets, "table")
    json_code, doc_text, _ = _compare(store, claim, targets, "json")
    doc = json.loads(doc_text)
    verdict = doc["claim_verdict"]
    frame = "interactivity" if targets is not None else "concurrency"
    assert verdict["frame"] == frame and verdict["supported"] is supported
    # exit 5 exactly when a target of the frame is unsupported or refused, in both formats
    assert code == json_code == (0 if supported else 5), err
    unsupported = [t for t in verdict["targets"] if not t["supported"]]
    assert len(doc["unsupported"]) == len(unsupported) and bool(unsupported) is not supported
    if not supported:
        assert err.strip().startswith("ClaimError: the claim 'A is ") and len(err.strip().splitlines()) == 1
        assert f"not supported at {len(unsupported)} place(s)" in err
    # the words: a line per target of the frame, visible in any width, and one verdict that matches
    for t in verdict["targets"]:
        assert f"claim {claim:g}x at {t['where']}: {t['words']}" in " ".join(text.split())
        assert t["words"].startswith("supported: " if t["supported"] else "not supported: ")
    head = "is supported at every one" if supported else f"is not supported at {len(unsupported)} of its"
    assert f"verdict: the claim 'A is {claim:g}x as cost-efficient as B' {head}" in " ".join(text.split())
    # the other frame is context, labelled so
    other = "at equal concurrency" if targets is not None else "at equal interactivity"
    assert f"{other} (not the claim's frame)" in text
    if targets == "100,900":
        refused = next(t for t in verdict["targets"] if t["target"] == 900)
        assert refused["verdict"] is None and "outside" in refused["reason"]


@pytest.mark.parametrize(("claim", "targets", "supported"), [c for c in CASES if "," not in str(c.values[1])])
def test_the_reports_headline_states_the_same_verdict(
    store: Path, tmp_path: Path, claim: float, targets: str | None, supported: bool
) -> None:
    out = tmp_path / "report.html"
    args = ["report", "--a", "vendor=nvidia", "--b", "vendor=amd", "--claim", str(claim), "--resamples", "200"]
    args += ["--store", str(store), "--out", str(out)] + (["--interactivity", targets] if targets else [])
    done = runner.invoke(app, args, env=WIDE)
    assert done.exit_code == 0, done.stderr
    html = out.read_text("utf-8")
    found = re.search(r'id="claim-verdict"><b>verdict</b>: <span class="([^"]+)">([^<]+)</span>', html)
    assert found is not None
    assert (found.group(1) == "verdict-inside") is supported
    frame = "interactivity targets" if targets else "concurrency levels"
    assert (
        ("is supported at every one of its " + frame) in found.group(2)
        if supported
        else ("is not supported at" in found.group(2) and frame in found.group(2))
    )
    _, doc_text, _ = _compare(store, claim, targets, "json")
    assert json.loads(doc_text)["claim_verdict"]["summary"].replace("'", "&#x27;") == found.group(2)


def test_report_and_compare_use_the_same_bootstrap(store: Path, tmp_path: Path) -> None:
    """The report's defaults are compare's (resamples and seed), so the same selection gives the same interval."""
    defaults = CompareOptions()
    out = tmp_path / "report.html"
    args = ["report", "--a", "vendor=nvidia", "--b", "vendor=amd", "--interactivity", "100", "--store", str(store)]
    assert runner.invoke(app, [*args, "--out", str(out)], env=WIDE).exit_code == 0
    done = runner.invoke(
        app,
        ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--interactivity", "100", "--format", "json"]
        + ["--store", str(store)],
        env=WIDE,
    )
    doc = json.loads(done.stdout)
    assert (doc["resamples"], doc["seed"]) == (defaults.resamples, defaults.seed)
    row = doc["interactivity"][0]
    assert f"(95% CI {row['ci_low']:.2f}-{row['ci_high']:.2f})" in out.read_text("utf-8")
    assert f"{defaults.resamples} resamples" in out.read_text("utf-8")
