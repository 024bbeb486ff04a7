"""row_dicts: a row model's fields and config validate a chunk of rows into dicts, refusing what the model refuses
with the same error; a model whose validators would be skipped is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError, field_validator

from tcobench.schemas import AzureRow, MooncakeRow, TcobenchTraceRow
from tcobench.schemas.base import StrictModel
from tcobench.tasks.workload.traces.base import row_dicts


class _Closed(StrictModel):
    """strict, extra="forbid" (StrictModel's config), a bound and a default."""

    tokens: int = Field(ge=0)
    name: str
    ids: tuple[int, ...] = ()


class _Checked(BaseModel):
    tokens: int

    @field_validator("tokens")
    @classmethod
    def _even(cls, value: int) -> int:
        return value


def _outcome(model: type[BaseModel], row: dict[str, Any]) -> tuple[str, Any]:
    """What the model makes of one row, and what row_dicts makes of it alone in a chunk: ("ok", the fields) or
    ("error", the first error without its position in the chunk)."""
    try:
        return "ok", dict(model.model_validate_json(json.dumps(row)))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        return "error", (first["type"], first["loc"], first["msg"])


def _outcome_as_dicts(model: type[BaseModel], row: dict[str, Any]) -> tuple[str, Any]:
    try:
        (got,) = row_dicts(model, applied=("_prompt_or_messages",)).validate_json(json.dumps([row]))
        return "ok", got
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        assert first["loc"][0] == 0
        return "error", (first["type"], first["loc"][1:], first["msg"])


@pytest.mark.parametrize(
    ("model", "row"),
    [
        (_Closed, {"tokens": 3, "name": "a"}),  # a default filled in
        (_Closed, {"tokens": 3, "name": "a", "ids": [1, 2]}),
        (_Closed, {"tokens": 3, "name": "a", "colour": "red"}),  # extra="forbid": an unknown column
        (_Closed, {"tokens": "3", "name": "a"}),  # strict: a number as text
        (_Closed, {"tokens": -1, "name": "a"}),  # the bound
        (_Closed, {"name": "a"}),  # a missing column
        (MooncakeRow, {"timestamp": "5", "input_length": 1, "output_length": 2}),  # lax timestamp, as the model
        (MooncakeRow, {"timestamp": 5, "input_length": "1", "output_length": 2}),  # strict length, as the model
        (MooncakeRow, {"timestamp": 5, "input_length": 1, "output_length": 2, "region": "eu"}),  # extra="ignore"
        (AzureRow, {"TIMESTAMP": "2023-11-16 18:15:46.68", "ContextTokens": "374", "GeneratedTokens": "-1"}),
        (TcobenchTraceRow, {"timestamp": 0, "messages": []}),  # messages' min_length
        (TcobenchTraceRow, {"timestamp": 0, "messages": [{"role": "user", "content": "hi", "name": "x"}]}),
    ],
)
def test_rows_as_dicts_are_what_the_model_makes_of_them(model: type[BaseModel], row: dict[str, Any]) -> None:
    assert _outcome_as_dicts(model, row) == _outcome(model, row)


def test_the_unknown_column_and_the_wrong_type_are_refused() -> None:  # the cases above, not merely equal
    assert _outcome_as_dicts(_Closed, {"tokens": 3, "name": "a", "colour": "red"})[0] == "error"
    assert _outcome_as_dicts(_Closed, {"tokens": "3", "name": "a"})[1][0] == "int_type"


def test_a_model_with_validators_is_refused_unless_the_caller_applies_them() -> None:
    with pytest.raises(ValueError, match="_Checked has validators \\(_even\\)"):
        row_dicts(_Checked)
    with pytest.raises(ValueError, match="_prompt_or_messages"):
        row_dicts(TcobenchTraceRow)
    rows = row_dicts(TcobenchTraceRow, applied=("_prompt_or_messages",)).validate_json('[{"timestamp": 1}]')
    assert rows == [{"timestamp": 1.0, "prompt": None, "messages": None, "output_tokens": None}]  # one_of's to check
