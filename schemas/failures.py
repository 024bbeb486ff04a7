"""Failure rules: how a run that is not ok gets its ``failure_class`` (the shipped rules:
tcobench/data/failure_classes.toml, whose header documents each condition; applied by
``tasks.analysis.classify_failure``)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from tcobench.schemas.base import FailureClass, RunStatus, StrictModel

__all__ = ["TELEMETRY_FIELDS", "FailureRule", "FailureRules"]

# The run columns a telemetry condition may test: what the power sampler and the device detection filled.
_TelemetryField = Literal[
    "telemetry_note",
    "telemetry_source",
    "gpu_source",
    "gpu_vendor",
    "declared_vendor",
    "identity_warning",
    "engine_metrics_note",
]
TELEMETRY_FIELDS: tuple[str, ...] = _TelemetryField.__args__  # type: ignore[attr-defined]


def _regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc})") from exc
    return pattern


class FailureRule(StrictModel):
    """One rule: a class, the conditions that give it (all that are given must hold) and why."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="The rule's name, stored as failure_rule.")
    failure_class: FailureClass = Field(alias="class", description="The class a matching run gets.")
    reason: str = Field(min_length=1, description="Why runs that match have this class (shown in the docs).")
    kind: list[str] | None = Field(
        default=None, min_length=1, description="Error kinds: the word before the first ': ' of the error."
    )
    text: str | None = Field(default=None, min_length=1, description="A regular expression searched in the error.")
    exit_code: list[int] | None = Field(
        default=None, min_length=1, description="Exit statuses of the engine, as the error reports them."
    )
    status: list[RunStatus] | None = Field(default=None, min_length=1, description="Run statuses it applies to.")
    telemetry: dict[_TelemetryField, str] | None = Field(
        default=None, min_length=1, description="Run columns, each with a regular expression its value must match."
    )

    @field_validator("text")
    @classmethod
    def _text_compiles(cls, value: str | None) -> str | None:
        return None if value is None else _regex(value)

    @field_validator("telemetry")
    @classmethod
    def _telemetry_compiles(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for pattern in (value or {}).values():
            _regex(pattern)
        return value

    @field_validator("status")
    @classmethod
    def _not_ok(cls, value: list[RunStatus] | None) -> list[RunStatus] | None:
        if value is not None and RunStatus.ok in value:
            raise ValueError("an ok run has no failure class: give failed, partial or interrupted")
        return value

    @model_validator(mode="after")
    def _some_condition(self) -> FailureRule:
        if all(getattr(self, c) is None for c in ("kind", "text", "exit_code", "status", "telemetry")):
            raise ValueError("a rule needs a condition: kind, text, exit_code, status or telemetry")
        return self


class FailureRules(StrictModel):
    """The ordered rules; the first whose conditions all hold decides."""

    rule: list[FailureRule] = Field(min_length=1, description="The rules, tried in order.")

    @field_validator("rule")
    @classmethod
    def _unique_names(cls, value: list[FailureRule]) -> list[FailureRule]:
        seen: dict[str, int] = {}
        for n, rule in enumerate(value, 1):
            if rule.name in seen:
                raise ValueError(
                    f"rules {seen[rule.name]} and {n} are both named {rule.name!r}: each name is stored as failure_rule"
                )
            seen[rule.name] = n
        return value
