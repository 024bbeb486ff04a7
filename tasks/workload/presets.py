"""Named workload presets (package data ``data/presets.toml``) and their expansion into a workload's fields.

A preset's fields are defaults: what a config file or the command line gives for the same workload wins.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from tcobench.errors import ConfigError
from tcobench.schemas import Preset, WorkloadConfig
from tcobench.tasks.workload.layers import Layer, given, resolve

__all__ = ["apply_preset", "preset_layers", "preset_workload", "presets"]


@cache
def presets() -> dict[str, Preset]:
    """Every shipped preset by name, each validated (and its workload fields checked as a WorkloadConfig)."""
    text = resources.files("tcobench.tasks.workload").joinpath("data/presets.toml").read_text("utf-8")
    out = {}
    for name, body in tomllib.loads(text).items():
        preset = Preset.model_validate({"name": name, **body})
        preset_workload(preset)  # a shipped preset is a valid workload on its own
        out[name] = preset
    return out


def preset_workload(preset: Preset) -> WorkloadConfig:
    """The workload a preset gives with nothing overridden."""
    return WorkloadConfig.model_validate_json(_json({**preset.workload, "preset": preset.name}))


def _json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, default=str)


def apply_preset(workload: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``workload`` over its ``preset``'s fields (``layers.resolve``: nested tables merged, a choice made in
    ``workload`` overrules the preset's alternatives); ConfigError naming the valid presets."""
    fields, _ = preset_layers([Layer("config", given(workload), lambda n: f"{where}: workload.{n}")], where)
    return fields


def preset_layers(layers: Sequence[Layer], where: str) -> tuple[dict[str, Any], dict[str, str]]:
    """``layers`` (weakest first) over the preset the strongest of them names: the merged workload fields and the
    source of each (``layers.resolve``)."""
    name = next((layer.fields["preset"] for layer in reversed(layers) if "preset" in layer.fields), None)
    if name is None:
        return resolve(layers)
    known = presets()
    if not isinstance(name, str) or name not in known:
        raise ConfigError(f"{where}: workload.preset: unknown preset {name!r} (presets: {', '.join(known)})")
    preset = Layer("preset", known[name].workload, lambda n: f"preset {name}'s {n}")
    return resolve([preset, *layers])
