"""The run's workload table: each field's value and where it came from; a replay's requests and lengths are the
trace's, so those rows say so instead of the workload's unused values."""

from __future__ import annotations

from pathlib import Path

from tcobench.cli._workload_table import workload_rows
from tcobench.tasks.config import load_config

SOURCES = {"requests": "default", "input_tokens": "preset", "concurrency": "flag"}


def test_a_counted_run_shows_its_own_values() -> None:
    w = load_config(None, {"workload": {"requests": 7, "concurrency": [1, 4]}}).workload
    rows = {r[0]: r[1:] for r in workload_rows(w, SOURCES)}
    assert rows["requests"] == ["7", "default"]
    assert rows["concurrency"] == ["1, 4", "flag"]
    assert "trace" not in rows["input_tokens"][0]


def test_a_replay_shows_the_traces_requests_and_lengths(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0, "prompt": "a"}\n', "utf-8")
    w = load_config(None, {"workload": {"requests": 7, "trace": {"path": trace}, "concurrency": [2]}}).workload
    plain = load_config(None, {"workload": {"requests": 7, "concurrency": [2]}}).workload
    rows = {r[0]: r[1:] for r in workload_rows(w, SOURCES)}
    assert rows["requests"] == ["the trace's requests (its window)", "trace"]
    unused = {r[0]: r[1] for r in workload_rows(plain, SOURCES)}["input_tokens"]
    assert rows["input_tokens"] == [f"the trace's lengths; where it records none: {unused}", "trace"]
    assert rows["concurrency"] == ["2", "flag"]
