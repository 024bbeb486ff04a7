"""classify_failure: every rule of the shipped file decides its fixtures (real error texts, tests/unit/tasks/analysis/
failure_cases.py), every class has fixtures, ok runs have no class, and a bad rules file is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import BenchmarkConfig, FailureClass, RunStatus
from tcobench.tasks.analysis.classify_failure import (
    classify_failure,
    docs_with_rules,
    error_kind,
    exit_code_of,
    load_failure_rules,
    matching_rule,
)
from tcobench.tasks.load.record import MeasureResult
from tcobench.tasks.runs import failed_run_record, finish_run
from tests.unit.factories import make_request, make_run
from tests.unit.tasks.analysis.failure_cases import CASES, FailureCase

RULES = load_failure_rules()


def _case_id(case: FailureCase) -> str:
    return f"{case.failure_class}-{case.rule or 'none'}-{CASES.index(case)}"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_each_fixture_gets_its_class_from_its_rule(case: FailureCase) -> None:
    run = classify_failure(make_run(status=case.status, error=case.error, **case.fields))
    assert (run.failure_class, run.failure_rule) == (case.failure_class, case.rule), case.source


def test_every_rule_and_every_class_has_a_fixture() -> None:
    decided = {c.rule for c in CASES}
    assert [r.name for r in RULES.rule if r.name not in decided] == []
    assert {c.failure_class for c in CASES} == set(FailureClass)


@pytest.mark.parametrize("rule", RULES.rule, ids=lambda r: r.name)
def test_each_rule_needs_each_of_its_conditions(rule: object) -> None:
    """A fixture of the rule no longer matches it when one of its conditions is made false: every condition counts."""
    from tcobench.schemas import FailureRule

    assert isinstance(rule, FailureRule)
    case = next(c for c in CASES if c.rule == rule.name)
    run = make_run(status=case.status, error=case.error, **case.fields)
    assert matching_rule(run, RULES.model_copy(update={"rule": [rule]})) is rule
    if rule.text is not None or rule.kind is not None or rule.exit_code is not None:
        assert (
            matching_rule(run.model_copy(update={"error": "something else"}), RULES.model_copy(update={"rule": [rule]}))
            is None
        )
    if rule.status is not None:
        other = next(s for s in (RunStatus.failed, RunStatus.partial, RunStatus.interrupted) if s not in rule.status)
        assert (
            matching_rule(run.model_copy(update={"status": other}), RULES.model_copy(update={"rule": [rule]})) is None
        )
    for name in rule.telemetry or {}:
        blank = run.model_copy(update={name: None})
        assert matching_rule(blank, RULES.model_copy(update={"rule": [rule]})) is None


def test_the_first_matching_rule_decides() -> None:
    """A text that two rules match gets the earlier one's class: the network failure behind a failed pull is
    infrastructure, not tcobench's image distribution (harness)."""
    case = next(c for c in CASES if c.rule == "network-text")
    names = [r.name for r in RULES.rule]
    assert names.index("network-text") < names.index("image-not-on-host")
    later = RULES.model_copy(update={"rule": [r for r in RULES.rule if r.name != "network-text"]})
    found = matching_rule(make_run(status=RunStatus.failed, error=case.error), later)
    assert found is not None and found.name == "image-not-on-host"


def test_an_ok_run_has_no_class_and_an_unmatched_failure_is_unknown() -> None:
    assert classify_failure(make_run()).failure_class is None
    failed = classify_failure(make_run(status=RunStatus.failed, error="the moon was in the wrong phase"))
    assert (failed.failure_class, failed.failure_rule) == (FailureClass.unknown, None)
    placeholder = classify_failure(make_run(status=RunStatus.failed, error=None))
    assert placeholder.failure_class is FailureClass.unknown


def test_error_kind_and_exit_code() -> None:
    assert error_kind("EngineError: x: y") == "EngineError" and error_kind("httpx.ConnectError: z") == "ConnectError"
    assert error_kind("host lost: its worker ...") is None and error_kind(None) is None
    assert exit_code_of("vLLM exited with code 2 while starting") == 2
    assert exit_code_of("llama-server was killed by SIGSEGV; log x") == 139
    assert exit_code_of("llama-server was killed by signal 77") == 128 + 77
    assert exit_code_of("HTTP 500: boom") is None


def test_runs_are_classified_where_they_are_recorded() -> None:
    """finish_run and failed_run_record (the two places a run row gets its status) give the class."""
    died = finish_run(
        make_run(), MeasureResult([], [make_request()], 1, 2), "llama-server was killed by SIGSEGV; log x"
    )
    assert (died.failure_class, died.failure_rule) == (FailureClass.platform, "engine-crashed")
    assert finish_run(make_run(), MeasureResult([], [make_request()], 1, 2)).failure_class is None
    partial = finish_run(
        make_run(),
        MeasureResult(
            [],
            [
                make_request(),
                make_request(request_index=1, error="HTTP 400: This model's maximum context length is 2048 tokens."),
            ],
            1,
            2,
        ),
    )
    assert partial.status is RunStatus.partial and partial.failure_class is FailureClass.engine
    never = failed_run_record(BenchmarkConfig(), "h", "b", "ConnectError: [Errno 111] Connection refused")
    assert (never.failure_class, never.failure_rule) == (FailureClass.infrastructure, "network")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = '[[rule]]\nname = "a"\nclass = "platform"\nreason = "r"\ntext = "x"\n'


def test_a_rules_file_of_its_own_is_read(tmp_path: Path) -> None:
    rules = load_failure_rules(_write(tmp_path, GOOD))
    assert [(r.name, r.failure_class) for r in rules.rule] == [("a", FailureClass.platform)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            GOOD.replace('"x"', '"(unclosed"'),
            r"rule 'a' \(rule 1\), field text = \"\(unclosed\": not a valid regular expression",
        ),
        (
            GOOD.replace('"platform"', '"gremlins"'),
            r"rule 'a' \(rule 1\), field class = \"gremlins\": Input should be 'platform', 'engine'",
        ),
        (
            GOOD.replace('text = "x"', 'exit_code = ["two"]'),
            r"rule 'a' \(rule 1\), field exit_code\.0 = \"two\": Input should be a valid integer",
        ),
        (
            GOOD.replace('text = "x"', 'telemetry = { gpu_name = "H100" }'),
            r"rule 'a' \(rule 1\), field telemetry\.gpu_name",
        ),
        (
            GOOD.replace('text = "x"', 'status = ["ok"]'),
            r"rule 'a' \(rule 1\), field status = \[\"ok\"\]: an ok run has no failure class",
        ),
        (GOOD.replace('text = "x"\n', ""), r"rule 'a' \(rule 1\), field \(the rule\): a rule needs a condition"),
        (GOOD + GOOD, r"rule: rules 1 and 2 are both named 'a'"),
        (GOOD.replace('name = "a"\n', ""), r"rule 1, field name: Field required"),
        (GOOD + "colour = 1\n", r"rule 'a' \(rule 1\), field colour = 1: Extra inputs are not permitted"),
        ("[[rule]\n", r"invalid TOML"),
    ],
)
def test_a_bad_rules_file_is_one_line_naming_file_rule_field_and_value(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError, match=rf"^{path}: {message}") as caught:
        load_failure_rules(path)
    assert "\n" not in str(caught.value)


def test_a_missing_rules_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read the failure rules"):
        load_failure_rules(tmp_path / "nope.toml")


def test_the_cost_model_lists_the_shipped_rules() -> None:
    """docs/cost-model.md's list of rules is generated from the shipped file (`python -m
    tcobench.tasks.analysis.classify_failure`), so it cannot drift from it."""
    docs = (Path(__file__).resolve().parents[4] / "docs" / "cost-model.md").read_text("utf-8")
    assert docs_with_rules(docs, RULES) == docs, "run: python -m tcobench.tasks.analysis.classify_failure"
    for rule in RULES.rule:
        assert f"`{rule.name}`: **{rule.failure_class.value}**" in docs and rule.reason in docs
