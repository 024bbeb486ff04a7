"""Run profiles (tasks/workload/profiles.py): the claim profile's defaults, its warnings' reasons, the accuracy
workload, and a bad profile name as one line listing the valid ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import WorkloadConfig
from tcobench.tasks.config import load_config
from tcobench.tasks.workload.accuracy import questions
from tcobench.tasks.workload.profiles import apply_profile, claim_shortfalls


def test_claim_profile_sets_defaults_and_keeps_what_was_given() -> None:
    w = load_config(None, {"workload": {"profile": "claim", "concurrency": [4, 16]}}).workload
    assert (w.duration_s, w.min_requests, w.warmup_requests) == (600.0, 1000, 32)
    assert claim_shortfalls(w, 16) == []
    given = load_config(None, {"workload": {"profile": "claim", "duration_s": 42.0, "warmup_requests": 1}}).workload
    assert given.duration_s == 42.0 and given.warmup_requests == 1  # nothing silently raised
    assert claim_shortfalls(given, 2) == ["duration 42 s < 600 s", "warm-up 1 < 2 x concurrency 2"]


def test_without_the_claim_profile_nothing_changes_or_is_reported() -> None:
    w = WorkloadConfig()
    assert apply_profile({"requests": 5}, "x") == {"requests": 5} and claim_shortfalls(w, 8) == []
    assert claim_shortfalls(WorkloadConfig(profile="default", requests=3), 8) == []


def test_a_profile_that_does_not_exist_is_one_line_listing_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, {"workload": {"profile": "fast"}})
    assert str(info.value) == "command line: workload.profile: unknown profile 'fast' (profiles: default, claim)"


def test_accuracy_workload_asks_the_bundled_questions_at_temperature_0() -> None:
    w = load_config(None, {"workload": {"accuracy": 6, "seed": 5, "temperature": 0.7}}).workload
    assert w.name == "accuracy-6-seed5" and w.requests == 6 and w.max_tokens == 8
    assert w.temperature == 0.7  # a given temperature is kept (and parity then stores no answers)
    assert list(w.prompts) == [q.prompt for q in questions(6, 5)]
    with pytest.raises(ConfigError, match="drop workload.input_tokens"):
        load_config(None, {"workload": {"accuracy": 6, "input_tokens": 64}})
