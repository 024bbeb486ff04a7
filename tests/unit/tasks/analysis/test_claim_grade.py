"""The claim-grade rules (tasks/analysis/compare/claim_grade.py) over two small stored sides, through compare_on:
the stamp, each failed rule's words, thresholds lowered by options, parity of answers and the accuracy rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tcobench.errors import ConfigError
from tcobench.tasks.analysis.compare import RULES, CompareOptions, Comparison, claim_thresholds, compare_on
from tcobench.tasks.analysis.compare.comparison import compare_views
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import write_results
from tcobench.tasks.workload.accuracy import accuracy_name, questions
from tests.unit.factories import T0_NS, make_prices, make_request, make_run

S = 1_000_000_000
BASE = T0_NS + 5 * S
LOWERED = ["duration=1", "samples=4", "power=off", "setup=off", "accuracy=off"]


def side(store: Path, host: str, answers: list[str], **run: Any) -> None:
    """One run at concurrency 1: four requests back to back, 1 s each, answering ``answers``."""
    requests = [
        make_request(
            run_id=f"run-{host}",
            host=host,
            request_index=i,
            prompt_index=i,
            seed=42 + i,
            prompt_sha256=f"prompt{i}",
            start_ns=BASE + i * S,
            ttft_ns=S // 10,
            e2e_ns=S,
            decode_ns=9 * S // 10,
            output_prefix=text,
            output_sha256=str(hash(text)),
        )
        for i, text in enumerate(answers)
    ]
    record = make_run(
        run_id=f"run-{host}",
        host=host,
        batch_id=f"batch-{host}",
        measure_start_ns=BASE,
        measure_end_ns=BASE + 4 * S,
        **run,
    )
    write_results(store, record, requests)


def compared(store: Path, *rules: str, a: str = "host=a", b: str = "host=b") -> Comparison:
    options = CompareOptions(resamples=100, claim_rules=tuple(rules))
    con = connect(store, make_prices(), needs=compare_views(options.basis))  # as compare() connects
    try:
        return compare_on(con, a, b, options)
    finally:
        con.close()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    side(tmp_path, "a", [" 4", " 5", " 6", " 7"])
    side(tmp_path, "b", [" 4", " 5", " 6", " 7"])
    return tmp_path


def test_default_rules_say_no_and_name_duration_samples_power(store: Path) -> None:
    grade = compared(store).claim_grade
    assert grade is not None and grade.passed is False
    assert [r["name"] for r in grade.as_dict()["rules"]] == list(RULES)
    failed = {r.name: r for r in grade.failed()}
    # the steady window: first token at 0.1 s to the last request's end at 4 s
    assert failed["duration"].message == "steady duration 4 s < 600 s (level 1, A)"
    assert failed["duration"].value == pytest.approx(3.9) and failed["duration"].required == 600
    assert failed["samples"].message == "measured requests 4 < 1000 (level 1, A)"
    assert failed["power"].message == "estimate on A (no telemetry); estimate on B (no telemetry)"
    assert "engine version" not in failed["setup"].message and "model digest missing" in failed["setup"].message
    assert failed["accuracy"].message.startswith("not measured on A and B")
    assert "parity" not in failed and "shape" not in failed and "steady_share" not in failed
    lines = grade.lines()
    assert lines[0] == "claim-grade: no" and "  duration: steady duration 4 s < 600 s (level 1, A)" in lines


def test_thresholds_lowered_by_options_say_yes(store: Path) -> None:
    grade = compared(store, *LOWERED).claim_grade
    assert grade is not None and grade.passed is True, grade
    assert grade.lines() == ["claim-grade: yes (rules turned off: power, setup, accuracy)"]
    stamp = grade.as_dict()
    assert stamp["passed"] is True and {r["name"]: r["value"] for r in stamp["rules"]}["parity"] == 1.0


def test_parity_counts_identical_prefixes_of_the_same_prompt_and_seed(tmp_path: Path) -> None:
    side(tmp_path, "a", [" 4", " 5", " 6", " 7"])
    side(tmp_path, "b", [" 4", " 5", " x", " y"])
    grade = compared(tmp_path, *LOWERED).claim_grade
    assert grade is not None and not grade.passed
    assert [f.message for f in grade.failed()] == ["identical first 64 characters 50% < 90% (2 of 4 prompts)"]
    assert compared(tmp_path, *LOWERED, "parity=0.5").claim_grade.passed  # type: ignore[union-attr]


def test_accuracy_rule_compares_the_sides_scores(tmp_path: Path) -> None:
    side(tmp_path, "a", [" 4", " 5", " 6", " 7"])
    side(tmp_path, "b", [" 4", " 5", " 6", " 7"])
    asked = questions(4, 7)
    name = accuracy_name(4, 7)
    for host, right in (("a", 4), ("b", 2)):  # A answers all four right, B two
        answers = [f" {q.answer}" if i < right else " 0" for i, q in enumerate(asked)]
        requests = [
            make_request(run_id=f"acc-{host}", host=host, request_index=i, prompt_index=i, output_prefix=text)
            for i, text in enumerate(answers)
        ]
        write_results(
            tmp_path,
            make_run(run_id=f"acc-{host}", host=host, workload=name, batch_id=f"acc-{host}", prompt_set_hash="9" * 64),
            requests,
        )
    rules = [r for r in LOWERED if r != "accuracy=off"]
    grade = compared(tmp_path, *rules).claim_grade
    assert grade is not None
    assert [f.message for f in grade.failed()] == ["accuracy differs 0.50 > 0.05"]
    result = {r["name"]: r for r in grade.as_dict()["rules"]}["accuracy"]
    assert result["value"] == {"A": 1.0, "B": 0.5}
    assert compared(tmp_path, *rules, "accuracy=0.5").claim_grade.passed  # type: ignore[union-attr]
    floored = compared(tmp_path, *rules, "accuracy=0.5", "accuracy_floor=0.75").claim_grade
    assert floored is not None and [f.message for f in floored.failed()] == ["B scores 0.50 < floor 0.75"]


def test_short_steady_and_a_setup_difference_are_reported(tmp_path: Path) -> None:
    side(tmp_path, "a", [" 4", " 5", " 6", " 7"])
    side(tmp_path, "b", [" 4", " 5", " 6", " 7"], driver_version="580.1", gpu_power_limit_mw=700_000)
    c = compared(tmp_path, *LOWERED, "steady_share=0.99")
    assert c.claim_grade is not None
    assert [f.message for f in c.claim_grade.failed()] == [
        "steady share 98% < 99% (level 1, A): short_steady, run more requests or use --duration"
    ]
    found = {d.setting: (d.a, d.b) for d in c.setup}
    assert found == {"driver version": (("-",), ("580.1",)), "GPU power limit (mW)": (("-",), ("700000",))}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("speed=3", "NAME one of accuracy"),
        ("duration", "expected NAME=VALUE"),
        ("samples=many", "not a number"),
        ("accuracy_floor=off", "only a rule can be off"),
        ("duration=-1", ">= 0"),
    ],
)
def test_bad_claim_rule_is_one_line_naming_it(text: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        claim_thresholds([text])
    assert words in str(info.value) and repr(text) in str(info.value) and "\n" not in str(info.value)
