"""Named workload presets (package data ``data/presets.toml``) and their expansion into a workload's fields.

A preset's fields are defaults: what a config file or the command line gives for the same workload wins.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from tcobench.errors import ConfigError
from tcobench.schemas import Preset, WorkloadConfig

__all__ = ["apply_preset", "preset_workload", "presets"]


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
    """``workload`` over its ``preset``'s fields (nested tables merged); ConfigError naming the valid presets."""
    name = workload.get("preset")
    if name is None:
        return dict(workload)
    known = presets()
    if not isinstance(name, str) or name not in known:
        raise ConfigError(f"{where}: workload.preset: unknown preset {name!r} (presets: {', '.join(known)})")
    merged: dict[str, Any] = dict(known[name].workload)
    for key, value in workload.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = {**merged[key], **value}
        elif value is not None:
            merged[key] = value
    return merged
