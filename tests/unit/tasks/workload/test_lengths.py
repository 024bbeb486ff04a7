"""Length distributions: 1,000 draws per kind match their parameters; draws are pure functions of their key."""

from __future__ import annotations

import json
import statistics
from typing import Any

import pytest

from tcobench.schemas import LengthDist, WorkloadConfig
from tcobench.tasks.workload import draw_length

KINDS: dict[str, tuple[dict[str, Any], float]] = {
    "fixed": ({"kind": "fixed", "value": 512}, 512.0),
    "uniform": ({"kind": "uniform", "min": 256, "max": 1024}, (256 + 1024) / 2),
    "normal": ({"kind": "normal", "mean": 1024, "stddev": 128}, 1024.0),
    "lognormal": ({"kind": "lognormal", "mean": 1024, "stddev": 256}, 1024.0),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_thousand_draws_match_their_parameters(kind: str) -> None:
    fields, mean = KINDS[kind]
    dist = LengthDist.model_validate(fields)
    draws = [draw_length(dist, 42, "measure", i, "input") for i in range(1000)]
    assert abs(statistics.fmean(draws) - mean) <= 0.02 * mean, statistics.fmean(draws)
    assert min(draws) >= dist.lower and max(draws) <= dist.upper
    if kind == "fixed":
        assert set(draws) == {512}
    if kind == "uniform":  # every value possible, the ends reached
        assert min(draws) < 256 + 20 and max(draws) > 1024 - 20
    if kind in ("normal", "lognormal"):  # the spread is the one asked for (within 10%)
        assert abs(statistics.stdev(draws) - fields["stddev"]) <= 0.1 * fields["stddev"]


def test_clamping_respects_bounds() -> None:
    dist = LengthDist.model_validate({"kind": "normal", "mean": 100, "stddev": 80, "min": 50, "max": 150})
    draws = [draw_length(dist, 7, i) for i in range(1000)]
    assert min(draws) == 50 and max(draws) == 150  # wide spread: both ends clamp
    lognormal = LengthDist.model_validate({"kind": "lognormal", "mean": 1000, "stddev": 300})
    assert lognormal.lower == 1 and lognormal.upper == 1000 + 6 * 300


def test_draw_is_a_pure_function_of_its_key() -> None:
    dist = LengthDist.model_validate("uniform:1-1000000")
    assert draw_length(dist, 42, "measure", 5) == draw_length(dist, 42, "measure", 5)
    assert [draw_length(dist, 42, "measure", i) for i in range(20)] != [
        draw_length(dist, 43, "measure", i) for i in range(20)
    ]


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("512", {"kind": "fixed", "value": 512}),
        ("fixed:64", {"kind": "fixed", "value": 64}),
        ("uniform:819-1024", {"kind": "uniform", "min": 819, "max": 1024}),
        ("normal:1024,128", {"kind": "normal", "mean": 1024.0, "stddev": 128.0}),
        ("lognormal:1024,512,64-8192", {"kind": "lognormal", "mean": 1024.0, "stddev": 512.0, "min": 64, "max": 8192}),
    ],
)
def test_command_line_forms(text: str, fields: dict[str, object]) -> None:
    dist = LengthDist.model_validate(text)
    assert dist.model_dump(exclude_none=True) == fields
    again = LengthDist.model_validate(dist.describe())  # describe() round-trips (with the implied bounds)
    assert (again.describe(), again.lower, again.upper) == (dist.describe(), dist.lower, dist.upper)


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("uniform:10", "is not one of"),
        ("gamma:3,4", "is not one of"),
        ({"kind": "uniform", "min": 9, "max": 3}, "min 9 is larger than max 3"),
        ({"kind": "normal", "mean": 9}, "needs stddev"),
        ({"kind": "fixed", "value": 9, "mean": 3}, "takes no mean"),
    ],
)
def test_bad_lengths_name_the_problem(value: object, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        WorkloadConfig.model_validate_json(json.dumps({"input_tokens": value}))


def test_lengths_must_fit_the_context() -> None:
    with pytest.raises(ValueError, match="exceed num_ctx 1024"):
        WorkloadConfig.model_validate_json(json.dumps({"input_tokens": 1000, "output_tokens": 128, "num_ctx": 1024}))
    ok = WorkloadConfig.model_validate_json(json.dumps({"input_tokens": 512, "output_tokens": 128, "num_ctx": 1024}))
    assert ok.ignore_eos  # an output length asks for exactly that many tokens
