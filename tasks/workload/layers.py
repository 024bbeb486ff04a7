"""Where a workload's fields come from: a named preset, a config file (or a matrix), the command line, in that order
of strength, over the schema's defaults.

A field given at a stronger layer wins over the same field below it (tables such as ``slo`` merge key by key). Some
fields are alternatives of one choice (a request count or a duration; ``max_tokens`` or ``output_tokens``; synthetic
prompts, a dataset or literal prompts): the strongest layer that makes the choice makes it alone, and what weaker
layers said about the other alternatives is dropped, so ``--requests 4`` over a preset's ``duration_s`` measures 4
requests. Two alternatives given at the same layer contradict each other: ConfigError naming both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tcobench.errors import ConfigError

__all__ = ["ALTERNATIVES", "Layer", "given", "resolve"]

# Each choice: its alternatives (the fields of each), and why two of them cannot go together.
ALTERNATIVES: tuple[tuple[tuple[frozenset[str], ...], str], ...] = (
    (
        (frozenset({"requests"}), frozenset({"duration_s", "min_requests"})),
        "a run measures a request count or a duration, not both",
    ),
    (
        (frozenset({"max_tokens"}), frozenset({"output_tokens"})),
        "output lengths are one number (max_tokens) or a distribution (output_tokens), not both",
    ),
    (
        (frozenset({"input_tokens", "shared_prefix_tokens"}), frozenset({"dataset"}), frozenset({"prompts"})),
        "prompts come from synthetic lengths, a dataset or a prompt list",
    ),
)


def _plain(name: str) -> str:
    return f"workload.{name}"


@dataclass(frozen=True)
class Layer:
    """One source of workload fields: ``source`` is flag, config or preset; ``name`` says how a field is called there
    (``--requests``, ``bench.toml: workload.requests``)."""

    source: str
    fields: Mapping[str, Any]
    name: Callable[[str], str] = field(default=_plain)


def given(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without the fields that were not given (None), tables that end up empty included."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            value = given(value)
            if not value:
                continue
        if value is not None:
            out[key] = value
    return out


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, Mapping):
        return str(value.get("path", "{...}"))  # a dataset is its file
    return str(value)


def _check_choices(layer: Layer) -> None:
    for alternatives, why in ALTERNATIVES:
        chosen = [sorted(alt & layer.fields.keys()) for alt in alternatives]
        hit = [names[0] for names in chosen if names]
        if len(hit) > 1:
            a, b = hit[0], hit[1]
            raise ConfigError(
                f"{layer.name(a)} {_shown(layer.fields[a])} and {layer.name(b)} {_shown(layer.fields[b])} contradict "
                f"each other: {why}; give one of them"
            )


def _drop_overruled(layers: Sequence[Layer]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Each layer's fields less the alternatives that a stronger layer's choice overrules, and what was overruled
    (``duration_s``: ``preset, overruled by flag``)."""
    kept = [dict(layer.fields) for layer in layers]
    overruled: dict[str, str] = {}
    for alternatives, _ in ALTERNATIVES:
        every = frozenset().union(*alternatives)
        for top in range(len(layers) - 1, -1, -1):
            chosen = [alt for alt in alternatives if alt & kept[top].keys()]
            if chosen:
                for lower, fields in zip(layers[:top], kept[:top], strict=True):
                    for name in sorted(every - chosen[0]):
                        if fields.pop(name, None) is not None:
                            overruled[name] = (
                                f"{lower.source}'s {_shown(lower.fields[name])} overruled by {layers[top].source}"
                            )
                break
    return kept, overruled


def resolve(layers: Sequence[Layer]) -> tuple[dict[str, Any], dict[str, str]]:
    """The workload fields of ``layers`` (weakest first) merged, and each given field's source (``slo.ttft_ms``:
    preset); ConfigError when one layer contradicts itself."""
    for layer in layers:
        _check_choices(layer)
    kept, overruled = _drop_overruled(layers)
    merged: dict[str, Any] = {}
    sources: dict[str, str] = dict(overruled)
    for layer, fields in zip(layers, kept, strict=True):
        for key, value in fields.items():
            if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
            if isinstance(value, Mapping) and key in ("slo", "sweep"):
                for sub in value:
                    sources[f"{key}.{sub}"] = layer.source
            sources[key] = layer.source
    return merged, sources
