"""publish_summary: a no-op (and no Prefect import) outside a flow run; inside one, a Markdown artifact."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from tcobench.tasks.analysis.summarise import summarise
from tcobench.tasks.prices import load_prices
from tcobench.tasks.report import artifacts
from tcobench.tasks.report.report import summary_markdown
from tcobench.tasks.store import query
from tests.unit.factories import write_fleet


def test_nothing_happens_outside_prefect(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in [m for m in sys.modules if m == "prefect" or m.startswith("prefect.")]:
        monkeypatch.delitem(sys.modules, name)
    assert artifacts.publish_summary("# hi") is None
    write_fleet(tmp_path / "store", nights=1, concurrency=(1,))
    summary = artifacts.summarise_and_publish(tmp_path / "store", load_prices(None), ["gpu-nv-1-n0-c1"])
    assert summary.runs.column("run_id").to_pylist() == ["gpu-nv-1-n0-c1"]
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
    artifacts.summarise_and_publish(tmp_path, load_prices(None), ["gpu-nv-1-n2-c1"])
    (call,) = calls
    assert call["key"] == "tcobench-summary" and call["description"] == "tcobench run summary"
    assert "| gpu-nv-1 | gpu-nv-1 | NVIDIA H200 | 580.159.04 |" in call["markdown"]
    assert "1 run(s)." in call["markdown"]


def test_prefect_imported_but_no_flow_run(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_prefect(monkeypatch, in_run=False)
    assert artifacts.publish_summary("# hi") is None and calls == []


def test_summarise_and_publish_reads_the_summary_and_the_artifact_from_one_connection(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_fleet(tmp_path, nights=3, concurrency=(1, 4))
    prices, ids = load_prices(None), ["gpu-nv-1-n2-c4", "gpu-nv-1-n2-c1"]
    wanted, markdown = summarise(tmp_path, prices, ids), summary_markdown(tmp_path, prices, ids)
    calls = _fake_prefect(monkeypatch, in_run=True)
    opened: list[object] = []
    real = query.connect

    def counted(*args: Any, **kwargs: Any) -> Any:
        opened.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(query, "connect", counted)
    summary = artifacts.summarise_and_publish(tmp_path, prices, ids)
    assert len(opened) == 1
    for name in ("runs", "tco", "sources", "goodput"):
        assert getattr(summary, name).equals(getattr(wanted, name)), name
    (call,) = calls
    assert call["markdown"] == markdown and call["key"] == "tcobench-summary"
    calls.clear()
    assert artifacts.summarise_and_publish(tmp_path, prices, ids, publish=False).runs.equals(wanted.runs)
    assert calls == []  # a batch the store stopped: summarised, not published


def test_a_nights_runs_are_one_summary_artifact_a_card_each(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tcobench.tasks.analysis import summarise

    runs = write_fleet(tmp_path, nights=6, concurrency=(1, 4, 16))  # 36 runs: more than BY_EQUALITY, the whole store
    ids = [r.run_id for r in reversed(runs)]
    assert len(ids) > summarise.BY_EQUALITY
    prices = load_prices(None)
    calls = _fake_prefect(monkeypatch, in_run=True)
    assert artifacts.publish_run_cards(tmp_path, prices, ids, description="tcobench runs of nightly n1") == "artifact-1"
    (call,) = calls
    assert call["key"] == "tcobench-summary" and call["description"] == "tcobench runs of nightly n1"
    assert f"{len(ids)} run(s)." in call["markdown"]
    lines = call["markdown"].splitlines()
    first = lines.index("|---" * 14 + "|") + 1  # the cards' table: one line per run
    cards = lines[first : lines.index("", first)]
    assert len(cards) == len(ids) and all(line.count("|") == 15 for line in cards)
    assert summary_markdown(tmp_path, prices, ids) == call["markdown"]
    calls.clear()
    assert artifacts.publish_run_cards(tmp_path, prices, []) is None and calls == []


def test_a_summary_artifact_that_cannot_be_read_is_a_warning_not_a_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tcobench.errors import StoreError
    from tcobench.tasks.report import report

    def unreadable(*args: Any, **kwargs: Any) -> str:
        raise StoreError("store s3://gone/night: cannot read it back")

    calls = _fake_prefect(monkeypatch, in_run=True)
    monkeypatch.setattr(report, "summary_markdown", unreadable)  # the runs were stored; the store went away since
    assert artifacts.publish_run_cards(tmp_path, load_prices(None), ["r1"]) is None
    assert calls == []
    assert (
        "the summary artifact of 1 run(s) was not published: store s3://gone/night: cannot read it back" in caplog.text
    )
