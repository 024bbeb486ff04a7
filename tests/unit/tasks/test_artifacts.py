"""publish_summary: a no-op (and no Prefect import) outside a flow run; inside one, a Markdown artifact."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from tcobench.tasks import artifacts
from tcobench.tasks.prices import load_prices

from ..factories import write_fleet


def test_nothing_happens_outside_prefect(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in [m for m in sys.modules if m == "prefect" or m.startswith("prefect.")]:
        monkeypatch.delitem(sys.modules, name)
    assert artifacts.publish_summary("# hi") is None
    assert artifacts.publish_run_summary(tmp_path / "no-store", load_prices(None), ["x"]) is None
    assert "prefect" not in sys.modules  # never imported it


def _fake_prefect(monkeypatch: pytest.MonkeyPatch, in_run: bool) -> list[dict[str, Any]]:
    """Stand-ins for prefect.context.FlowRunContext and prefect.artifacts.create_markdown/link_artifact."""
    calls: list[dict[str, Any]] = []
    context = types.ModuleType("prefect.context")
    context.FlowRunContext = type("FlowRunContext", (), {"get": staticmethod(lambda: object() if in_run else None)})  # type: ignore[attr-defined]
    made = types.ModuleType("prefect.artifacts")

    def create_markdown_artifact(**kwargs: Any) -> str:
        calls.append(kwargs)
        return "artifact-1"

    def create_link_artifact(**kwargs: Any) -> str:
        calls.append(kwargs)
        return "link-1"

    made.create_markdown_artifact = create_markdown_artifact  # type: ignore[attr-defined]
    made.create_link_artifact = create_link_artifact  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "prefect", types.ModuleType("prefect"))
    monkeypatch.setitem(sys.modules, "prefect.context", context)
    monkeypatch.setitem(sys.modules, "prefect.artifacts", made)
    return calls


def test_publishes_inside_a_flow_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_fleet(tmp_path, nights=3, concurrency=(1,))
    calls = _fake_prefect(monkeypatch, in_run=True)
    assert artifacts.publish_run_summary(tmp_path, load_prices(None), ["gpu-nv-1-n2-c1"]) == "artifact-1"
    (call,) = calls
    assert call["key"] == "tcobench-summary" and call["description"] == "tcobench run summary"
    assert "| gpu-nv-1 | gpu-nv-1 | NVIDIA H200 | 580.159.04 |" in call["markdown"]
    assert "1 run(s)." in call["markdown"]


def test_prefect_imported_but_no_flow_run(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_prefect(monkeypatch, in_run=False)
    assert artifacts.publish_summary("# hi") is None and calls == []
