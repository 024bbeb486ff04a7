"""schemas/flags.py: flags declared on fields, found with the path of the field they set, tables and optional
tables included."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from tcobench.schemas import BenchmarkConfig, CompareOptions, Flag, StrictModel, flags_of


class _Inner(StrictModel):
    margin: Annotated[float, Flag("Margin.", name="sweep_margin")] = Field(default=0.05)
    quiet: bool = False


class _Outer(StrictModel):
    requests: Annotated[int, Field(gt=0), Flag("Requests.")] = Field(default=20)
    inner: _Inner | None = None
    table: _Inner = Field(default_factory=_Inner)


def test_flags_are_found_with_their_paths_in_declaration_order() -> None:
    found = [(path, flag.name) for path, flag, _ in flags_of(_Outer)]
    assert found == [(("requests",), ""), (("inner", "margin"), "sweep_margin"), (("table", "margin"), "sweep_margin")]


def test_a_flag_changes_neither_the_field_nor_its_validation() -> None:
    assert _Outer(requests=3).requests == 3
    assert _Outer.model_fields["requests"].default == 20
    assert "exclusiveMinimum" in _Outer.model_json_schema()["properties"]["requests"]


def test_the_declared_flags_have_distinct_names() -> None:
    for model in (BenchmarkConfig, CompareOptions):
        names = [flag.name or path[-1] for path, flag, _ in flags_of(model)]
        assert len(names) == len(set(names)), model
        assert all(flag.help for _, flag, _ in flags_of(model))
