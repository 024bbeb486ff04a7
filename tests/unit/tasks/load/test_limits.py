"""check_load's warning about levels the plan cannot reach: one line for all of them (issue 41, item 5: a preset's
sweep with a small --requests printed one warning per level)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tcobench.schemas import WorkloadConfig
from tcobench.tasks.load.limits import check_load


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    """The tcobench.load logger's warnings (its own handler: the CLI's stops propagation to the root logger)."""
    handler = _Lines()
    logger = logging.getLogger("tcobench.load")
    logger.addHandler(handler)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)


def test_the_levels_the_plan_cannot_reach_are_one_warning(warnings: list[str]) -> None:
    check_load(WorkloadConfig(requests=4, warmup_requests=2, concurrency=(1, 2, 4, 8, 16, 32)))
    assert warnings == [
        "workload.concurrency 8, 16, 32 exceed what the plan can reach: 4 in flight at most (requests 4, warm-up 2, "
        "turns 1); those runs go on at 4 and store concurrency_reached"
    ]


def test_one_level_keeps_its_words_and_none_warns_nothing(warnings: list[str]) -> None:
    check_load(WorkloadConfig(requests=40, warmup_requests=1, concurrency=(1, 100)))
    check_load(WorkloadConfig(requests=40, warmup_requests=1, concurrency=(1, 2)))
    check_load(WorkloadConfig(requests=40, warmup_requests=1, concurrency=(100,)), warn=False)
    assert warnings == [
        "workload.concurrency 100 exceeds what the plan can reach: 40 in flight at most (requests 40, warm-up 1, "
        "turns 1); the run goes on at 40 and stores concurrency_reached"
    ]
