"""Workload shapes: token-length distributions, datasets, service-level objectives, sweeps and named presets.

Pure data. Lengths are tokens of the *measured model's* tokenizer; how prompts are built to them is
``tasks.workload``'s business.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, JsonValue, model_validator

from tcobench.schemas.base import StrictModel
from tcobench.schemas.flags import Flag

__all__ = [
    "DatasetConfig",
    "DatasetFormat",
    "DatasetOrder",
    "LengthDist",
    "LengthKind",
    "Preset",
    "SloConfig",
    "SweepConfig",
    "parse_length",
]


class LengthKind(StrEnum):
    """How a per-request token length is drawn (seeded, per request index)."""

    fixed = "fixed"  # always `value`
    uniform = "uniform"  # an integer in [min, max], every one equally likely
    normal = "normal"  # round(N(mean, stddev)), clamped to [min, max]
    lognormal = "lognormal"  # round(LogNormal with this mean and stddev of the *length*), clamped to [min, max]


_LENGTH_FORMS = "N, fixed:N, uniform:MIN-MAX, normal:MEAN,SD[,MIN-MAX], lognormal:MEAN,SD[,MIN-MAX]"


class LengthDist(StrictModel):
    """A token length: a fixed number or a seeded distribution. TOML: ``512`` or ``{kind = "normal", mean = 1024,
    stddev = 128}``; command line: ``512``, ``uniform:256-1024``, ``normal:1024,128``, ``lognormal:1024,512,64-8192``.

    normal and lognormal are clamped to [min, max]; their defaults are min 1 and max mean + 4 (normal) or
    6 (lognormal) standard deviations, so the largest possible length is always known (context checks)."""

    kind: LengthKind = Field(default=LengthKind.fixed, description="fixed, uniform, normal or lognormal.")
    value: int | None = Field(default=None, gt=0, description="The length, tokens (kind=fixed).")
    min: int | None = Field(default=None, gt=0, description="Smallest length, tokens (uniform; clamp otherwise).")
    max: int | None = Field(default=None, gt=0, description="Largest length, tokens (uniform; clamp otherwise).")
    mean: float | None = Field(default=None, gt=0, description="Mean length, tokens (normal, lognormal).")
    stddev: float | None = Field(default=None, ge=0, description="Standard deviation, tokens (normal, lognormal).")

    @model_validator(mode="before")
    @classmethod
    def _short_forms(cls, data: Any) -> Any:
        if isinstance(data, bool):
            return data  # let pydantic refuse it
        if isinstance(data, int):
            data = {"kind": "fixed", "value": data}
        elif isinstance(data, str):
            data = parse_length(data)
        kinds = {k.value: k for k in LengthKind}  # the short forms and Python callers name the kind as text
        if isinstance(data, dict) and data.get("kind") in kinds:  # strict mode wants the enum (others: refused)
            data = {**data, "kind": kinds[data["kind"]]}
        return data

    @model_validator(mode="after")
    def _fields_match_kind(self) -> LengthDist:
        needs = {
            LengthKind.fixed: {"value"},
            LengthKind.uniform: {"min", "max"},
            LengthKind.normal: {"mean", "stddev"},
            LengthKind.lognormal: {"mean", "stddev"},
        }[self.kind]
        allowed = needs | ({"min", "max"} if self.kind in (LengthKind.normal, LengthKind.lognormal) else set())
        given = {name for name in ("value", "min", "max", "mean", "stddev") if getattr(self, name) is not None}
        if missing := sorted(needs - given):
            raise ValueError(f"kind {self.kind.value!r} needs {', '.join(missing)}")
        if extra := sorted(given - allowed):
            raise ValueError(f"kind {self.kind.value!r} takes no {', '.join(extra)} (forms: {_LENGTH_FORMS})")
        if self.lower > self.upper:
            raise ValueError(f"min {self.lower} is larger than max {self.upper}")
        return self

    @property
    def lower(self) -> int:
        """Smallest length this distribution can give."""
        if self.kind is LengthKind.fixed:
            return int(self.value or 1)
        return self.min or 1

    @property
    def upper(self) -> int:
        """Largest length this distribution can give."""
        if self.kind is LengthKind.fixed:
            return int(self.value or 1)
        if self.max is not None:
            return self.max
        spread = 4 if self.kind is LengthKind.normal else 6
        return max(1, math.ceil((self.mean or 0) + spread * (self.stddev or 0)))

    def describe(self) -> str:
        """Compact text form, e.g. ``normal:1024,128,1-1536``."""
        if self.kind is LengthKind.fixed:
            return str(self.value)
        if self.kind is LengthKind.uniform:
            return f"uniform:{self.lower}-{self.upper}"
        return f"{self.kind.value}:{self.mean:g},{self.stddev:g},{self.lower}-{self.upper}"


def parse_length(text: str) -> dict[str, Any]:
    """The command-line form of a length (see ``LengthDist``) as its fields; ValueError naming the forms."""
    raw = text.strip().lower()
    kind, sep, rest = raw.partition(":")
    try:
        if not sep:
            return {"kind": "fixed", "value": int(kind)}
        if kind == "fixed":
            return {"kind": "fixed", "value": int(rest)}
        if kind == "uniform":
            lo, hi = _range(rest)
            return {"kind": "uniform", "min": lo, "max": hi}
        if kind in ("normal", "lognormal"):
            parts = rest.split(",")
            if len(parts) not in (2, 3):
                raise ValueError
            data: dict[str, Any] = {"kind": kind, "mean": float(parts[0]), "stddev": float(parts[1])}
            if len(parts) == 3:
                data["min"], data["max"] = _range(parts[2])
            return data
    except ValueError:
        pass
    raise ValueError(f"length {text!r} is not one of: {_LENGTH_FORMS}")


def _range(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", text)
    if match is None:
        raise ValueError
    return int(match.group(1)), int(match.group(2))


class DatasetFormat(StrEnum):
    """Layout of a dataset file."""

    auto = "auto"  # from the first record: "conversations" -> sharegpt, else jsonl
    jsonl = "jsonl"  # one JSON object per line: {"prompt": ...} or {"messages": [...]}, optional "output_tokens"
    sharegpt = "sharegpt"  # {"conversations": [{"from": "human"|"gpt", "value": ...}, ...]} per line, or a JSON array


class DatasetOrder(StrEnum):
    """Which record request i gets."""

    shuffle = "shuffle"  # a seeded permutation of the records (a pure function of seed and index)
    sequential = "sequential"  # record i mod n


class DatasetConfig(StrictModel):
    """Your own traffic: a file of requests, streamed (an index of line offsets is kept, never the records)."""

    path: Annotated[
        Path, Flag("JSONL of requests ({prompt} or {messages}, optional output_tokens) or ShareGPT.", name="dataset")
    ] = Field(description="JSONL file (or a ShareGPT JSON array) of requests.")
    format: Annotated[
        DatasetFormat,
        Flag(r"auto, jsonl or sharegpt \[auto].", name="dataset_format", cli_type=str | None, derived=True),
    ] = Field(default=DatasetFormat.auto, description="auto, jsonl or sharegpt.")
    order: DatasetOrder = Field(default=DatasetOrder.shuffle, description="shuffle (seeded) or sequential.")


class SloConfig(StrictModel):
    """Service-level objective: a request is *good* when it meets every target given; the run meets the SLO when at
    least ``quantile`` of its measured requests are good (the same as: the ``quantile``-th percentile of each
    metric is within its target)."""

    ttft_ms: Annotated[float | None, Flag("SLO: time to first token target, ms.", name="slo_ttft_ms")] = Field(
        default=None, gt=0, description="Time to first token target, ms."
    )
    tpot_ms: Annotated[float | None, Flag("SLO: time per output token target, ms.", name="slo_tpot_ms")] = Field(
        default=None, gt=0, description="Time per output token target, ms: decode time / (output tokens - 1)."
    )
    itl_ms: Annotated[float | None, Flag("SLO: inter-token latency target, ms.", name="slo_itl_ms")] = Field(
        default=None,
        gt=0,
        description="Inter-token latency target, ms: at least `quantile` of a request's gaps "
        "between tokens must be within it.",
    )
    quantile: Annotated[
        float, Flag("SLO: fraction of requests that must meet every target [0.9].", name="slo_quantile")
    ] = Field(
        default=0.9, gt=0, le=1, description="Fraction of requests that must be good for the run to meet the SLO."
    )


class SweepConfig(StrictModel):
    """A concurrency sweep that stops itself (guidellm's sweep): after each level, stop when aggregate output tok/s
    rose by less than ``margin`` over the best earlier level, or (``stop_on_slo``) when the level broke the SLO."""

    margin: Annotated[
        float,
        Flag(
            "Stop the concurrency levels once aggregate tok/s rises less than this fraction (0.05).",
            name="sweep_margin",
        ),
    ] = Field(default=0.05, ge=0, le=10, description="Smallest relative throughput gain to go on.")
    stop_on_slo: bool = Field(default=True, description="Stop at the first level that does not meet the SLO.")


class Preset(StrictModel):
    """A named workload shape (tasks/workload/data/presets.toml): its description, what it mirrors, and the
    workload fields it sets (validated as a WorkloadConfig when used)."""

    name: str = Field(min_length=1, description="Preset name, e.g. chat-1k-1k.")
    description: str = Field(min_length=1, description="What the preset measures.")
    source: str = Field(min_length=1, description="The public benchmark shape it follows, with a reference.")
    workload: dict[str, JsonValue] = Field(description="Workload fields the preset sets (file and CLI win).")
