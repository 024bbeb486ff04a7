"""inline: a flow's own function (its tasks become task runs of the caller's run); the function itself with Prefect
off."""

from __future__ import annotations

import pytest

from tcobench.flows import _orchestrator


def _cell(x: int) -> int:
    return x + 1


def test_inline_of_a_prefect_flow_is_its_function(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCOBENCH_PREFECT", "on")
    flow = _orchestrator.flow(name="t-inline")(_cell)
    assert flow is not _cell  # a Prefect flow: calling it would start a flow run of its own
    assert _orchestrator.inline(flow) is _cell
    assert _orchestrator.inline(flow)(1) == 2


def test_inline_with_prefect_off_is_the_function_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCOBENCH_PREFECT", "off")
    assert _orchestrator.inline(_orchestrator.flow(name="t-inline")(_cell)) is _cell
