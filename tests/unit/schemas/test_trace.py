"""The trace schemas: a checked TraceRequest is the validated one, the row models refuse what their sources forbid,
and a trace window must run forwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tcobench.schemas import MooncakeRow, TcobenchTraceRow, TraceConfig, TraceMessage, TraceRequest


@pytest.mark.parametrize(
    "values",
    [
        (3, 1_500_000, 600, 10, (1, 2), None, None),
        (9, 0, None, None, (), None, (TraceMessage(role="user", content="hi"),)),
    ],
)
def test_a_checked_request_is_the_validated_one(values: tuple[object, ...]) -> None:
    names = ("line", "at_ns", "input_tokens", "output_tokens", "hash_ids", "prompt", "messages")
    validated = TraceRequest.model_validate(dict(zip(names, values, strict=True)))
    checked = TraceRequest.checked(*values)  # type: ignore[arg-type]
    assert checked == validated and checked.model_dump() == validated.model_dump()
    assert checked.model_fields_set == validated.model_fields_set
    with pytest.raises(ValidationError):
        checked.line = 4  # type: ignore[misc]  # frozen, as a validated one: mypy knows it too


def test_rows_refuse_negative_lengths_and_want_prompt_or_messages() -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        MooncakeRow.model_validate_json('{"timestamp": 0, "input_length": -1, "output_length": 1}')
    assert MooncakeRow.model_validate_json('{"timestamp": 1.5, "input_length": 1, "output_length": 1, "x": 2}')
    with pytest.raises(ValidationError, match="one of them"):
        TcobenchTraceRow.model_validate_json('{"timestamp": 0}')


def test_a_window_runs_forwards() -> None:
    with pytest.raises(ValidationError, match="0 <= START < END"):
        TraceConfig(path=Path("t.jsonl"), window_s=(5.0, 5.0))
