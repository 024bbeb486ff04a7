"""accuracy: a bundled set of short questions with exact answers, made from a seed, and their exact-match score.

No download: the questions are generated (integer arithmetic and list lookups), so the same count and seed give the
same questions everywhere. A workload with ``accuracy = N`` (or `tcobench accuracy`) sends them as its prompts,
at temperature 0, under the workload name ``accuracy-N-seedS``; the score is recomputed from the stored rows
(each measured request's prompt_index and output_prefix), so it needs nothing but the store.

Exact match: the answer's first word, less surrounding punctuation, equals the expected integer's decimal text.
A fast but broken setup scores near 0; claim_grade's ``accuracy`` rule compares the two sides' scores.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ACCURACY_NAME",
    "Question",
    "accuracy_name",
    "is_correct",
    "parse_accuracy_name",
    "questions",
    "score_answers",
]

ACCURACY_NAME = re.compile(r"^accuracy-(?P<n>[1-9]\d*)-seed(?P<seed>-?\d+)$")
_WORD = re.compile(r"\S+")
_PUNCT = ".,;:!?\"'()[]`*"


@dataclass(frozen=True)
class Question:
    prompt: str
    answer: str  # the exact answer, a decimal integer


def accuracy_name(n: int, seed: int) -> str:
    """The workload name that says which questions a run asked (parse_accuracy_name reads it back)."""
    return f"accuracy-{n}-seed{seed}"


def parse_accuracy_name(name: str) -> tuple[int, int] | None:
    """(count, seed) of an accuracy workload name; None for any other workload."""
    found = ACCURACY_NAME.match(name)
    return (int(found["n"]), int(found["seed"])) if found else None


def _arithmetic(rng: random.Random) -> Question:
    a, b = rng.randint(2, 99), rng.randint(2, 99)
    op = rng.choice("+-*")
    value = a + b if op == "+" else a - b if op == "-" else a * b
    return Question(f"Compute {a} {op} {b}. Reply with the number only.\nAnswer:", str(value))


def _lookup(rng: random.Random) -> Question:
    items = [rng.randint(10, 99) for _ in range(rng.randint(4, 7))]
    k = rng.randint(1, len(items))
    listed = ", ".join(str(i) for i in items)
    return Question(
        f"List: {listed}. What is item number {k} of the list (counting from 1)? Reply with the number only.\nAnswer:",
        str(items[k - 1]),
    )


def questions(n: int, seed: int) -> list[Question]:
    """``n`` questions from ``seed``: alternately integer arithmetic (+, -, x of two 2-digit numbers) and a lookup
    in a list of 4-7 two-digit numbers."""
    if n < 1:
        raise ValueError(f"accuracy needs at least one question, got {n}")
    rng = random.Random(seed)
    return [_arithmetic(rng) if i % 2 == 0 else _lookup(rng) for i in range(n)]


def is_correct(output: str | None, answer: str) -> bool:
    """Exact match: the output's first word, less surrounding punctuation, is the answer."""
    word = _WORD.search(output or "")
    return word is not None and word.group().strip(_PUNCT) == answer


def score_answers(rows: Iterable[tuple[str, int, str | None]]) -> float | None:
    """The share of correct answers over (workload name, prompt index, output text or prefix) rows of accuracy
    workloads; other workloads' rows are left out; None when no row is an accuracy workload's."""
    asked: dict[tuple[int, int], list[Question]] = {}
    right = total = 0
    for workload, index, output in rows:
        key = parse_accuracy_name(workload)
        if key is None:
            continue
        if key not in asked:
            asked[key] = questions(*key)
        total += 1
        right += is_correct(output, asked[key][index % key[0]].answer)
    return right / total if total else None
