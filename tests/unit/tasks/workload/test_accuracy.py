"""The bundled exact-answer questions (tasks/workload/accuracy.py): made from a seed, their answers right, the
scoring."""

from __future__ import annotations

import re

import pytest

from tcobench.tasks.workload.accuracy import accuracy_name, is_correct, parse_accuracy_name, questions, score_answers


def _solve(prompt: str) -> str:
    """The answer read back from the question's own text (an independent check of the generator)."""
    if arithmetic := re.match(r"Compute (\d+) ([+*-]) (\d+)\.", prompt):
        a, op, b = int(arithmetic[1]), arithmetic[2], int(arithmetic[3])
        return str(a + b if op == "+" else a - b if op == "-" else a * b)
    lookup = re.match(r"List: ([\d, ]+)\. What is item number (\d+)", prompt)
    assert lookup is not None, prompt
    return lookup[1].split(", ")[int(lookup[2]) - 1]


def test_questions_are_made_from_the_seed_and_their_answers_are_right() -> None:
    asked = questions(40, 7)
    assert asked == questions(40, 7) and asked != questions(40, 8)
    assert len(asked) == 40 and len({q.prompt for q in asked}) > 30
    assert all(_solve(q.prompt) == q.answer for q in asked)
    assert {q.prompt.split()[0] for q in asked} == {"Compute", "List:"}  # both kinds


@pytest.mark.parametrize(
    ("output", "right"),
    [
        (" 42", True),
        ("42.", True),
        ("**42**\nbecause", True),
        (" 42 apples", True),
        ("-42", False),
        ("The answer is 42", False),
        ("", False),
        (None, False),
        ("420", False),
    ],
)
def test_exact_match_reads_the_first_word(output: str | None, right: bool) -> None:
    assert is_correct(output, "42") is right


def test_score_over_stored_rows_regenerates_the_questions_from_the_workload_name() -> None:
    asked = questions(4, 3)
    name = accuracy_name(4, 3)
    assert parse_accuracy_name(name) == (4, 3) and parse_accuracy_name("short") is None
    rows = [
        (name, 0, f" {asked[0].answer}"),
        (name, 1, " 0"),
        (name, 2, asked[2].answer + "."),
        (name, 3, None),
        ("short", 0, " tok tok"),
    ]
    assert score_answers(rows) == 0.5  # 2 of 4; the other workload's row is left out
    assert score_answers([("short", 0, "1")]) is None


def test_answer_fingerprint_is_the_hash_and_the_first_64_characters() -> None:
    import hashlib

    from tcobench.tasks.load.record import OUTPUT_PREFIX_CHARS, answer_fingerprint

    text = "x" * 70 + "é"
    found = answer_fingerprint(text)
    assert found == {"output_sha256": hashlib.sha256(text.encode()).hexdigest(), "output_prefix": "x" * 64}
    assert OUTPUT_PREFIX_CHARS == 64 and answer_fingerprint("")["output_prefix"] == ""
