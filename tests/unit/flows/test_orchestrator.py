"""inline: a flow's own function (its tasks become task runs of the caller's run); the function itself with Prefect
off."""

from __future__ import annotations

import pytest

from tcobench.flows import _orchestrator
from tcobench.settings import Settings


def _cell(x: int) -> int:
    return x + 1


def test_inline_of_a_prefect_flow_is_its_function(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_orchestrator, "_switch", {})
    _orchestrator.use_settings(Settings(prefect=True))
    flow = _orchestrator.flow(name="t-inline")(_cell)
    assert flow is not _cell  # a Prefect flow: calling it would start a flow run of its own
    assert _orchestrator.inline(flow) is _cell
    assert _orchestrator.inline(flow)(1) == 2


def test_inline_with_prefect_off_is_the_function_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_orchestrator, "_switch", {})
    _orchestrator.use_settings(Settings(prefect=False))
    assert _orchestrator.inline(_orchestrator.flow(name="t-inline")(_cell)) is _cell


@pytest.mark.parametrize(("value", "on"), [("off", False), (" No ", False), ("0", False), ("on", True), ("", True)])
def test_without_use_settings_the_process_settings_decide(
    monkeypatch: pytest.MonkeyPatch, value: str, on: bool
) -> None:
    """A Prefect worker's flow run imports the flows without a command: TCOBENCH_PREFECT, as documented, decides."""
    monkeypatch.setattr(_orchestrator, "_switch", {})
    monkeypatch.setenv("TCOBENCH_PREFECT", value)
    assert _orchestrator.prefect_enabled() is on
