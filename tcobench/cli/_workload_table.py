"""The workload a run measured, field by field, with where each value came from: flag, config, preset or default
(as the cost table shows where each price comes from)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.markup import escape

from tcobench.cli._fit import Col, print_table
from tcobench.tasks.redact import redact

__all__ = ["print_workload", "workload_rows"]


def _value(value: Any) -> str:
    describe = getattr(value, "describe", None)
    if callable(describe):
        return str(describe())
    if hasattr(value, "model_dump"):
        return ", ".join(f"{k}={v}" for k, v in value.model_dump(mode="json").items() if v is not None) or "-"
    if value is None:
        return "-"
    if isinstance(value, tuple | list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):
        return "-" if not value else ", ".join(f"{k}={v}" for k, v in value.items())
    return str(getattr(value, "value", value))


# A replay's requests are the trace's (its window), and their lengths the trace's where it records them: these
# fields then say so instead of showing a value the replay does not use (docs/run-behaviour.md, the estimate).
_REPLAYED = {
    "requests": "the trace's requests (its window)",
    "input_tokens": "the trace's lengths; where it records none: {}",
    "output_tokens": "the trace's lengths; where it records none: {}",
}


def workload_rows(workload: Any, sources: Mapping[str, str]) -> list[list[str]]:
    """[field, value, from] for every field in ``sources`` (its order), the prompt list as a count; a replay's
    requests and lengths as the trace's."""
    replay = getattr(workload, "trace", None) is not None
    rows = []
    for name, source in sources.items():
        head, _, sub = name.partition(".")
        value = getattr(workload, head)
        if sub:
            value = getattr(value, sub, None) if value is not None else None
        text = f"{len(value)} prompts" if name == "prompts" else _value(redact(value))  # extra_body may hold keys
        if replay and name in _REPLAYED:
            text, source = _REPLAYED[name].format(text), "trace"
        rows.append([name, text, source])
    return rows


def print_workload(workload: Any, sources: Mapping[str, str]) -> None:
    """The workload table (module doc); nothing when no source is known."""
    if not sources:
        return
    rows = [[escape(cell) for cell in row] for row in workload_rows(workload, sources)]
    cols = [Col("field", "left"), Col("value", "left", wrap=True), Col("from", "left", wrap=True)]
    trace = getattr(workload, "trace", None)
    what = f"{workload.name}, replaying {trace.path.name}" if trace is not None else workload.name
    print_table(f"Workload {what}: where each field came from", cols, rows)
