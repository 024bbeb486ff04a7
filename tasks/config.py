"""load_config: a TOML file plus CLI overrides (over a named workload preset) -> one validated BenchmarkConfig,
or one ConfigError."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tcobench.errors import ConfigError
from tcobench.schemas import BenchmarkConfig

from .workload.presets import apply_preset

__all__ = ["first_error", "load_config"]


def first_error(exc: ValidationError, where: str) -> str:
    """One line: where, field path, what is wrong (and how many more problems there are)."""
    errors = exc.errors()
    err = errors[0]
    path = ".".join(str(p) for p in err["loc"])
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    message = err["msg"].removeprefix("Value error, ")
    return f"{where}: {path}: {message}{more}" if path else f"{where}: {message}{more}"


def _merge(base: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, Mapping):
            merged[key] = _merge(dict(merged.get(key) or {}), value)
        elif value is not None:
            merged[key] = value
    return merged


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


def load_config(path: Path | None = None, overrides: Mapping[str, Any] | None = None) -> BenchmarkConfig:
    """Validate the whole configuration once; CLI overrides (None = not given) win over the file."""
    data = _read_toml(path) if path is not None else {}
    data = _merge(data, overrides or {})
    where = str(path) if path is not None else "command line"
    if isinstance(data.get("workload"), dict):
        data["workload"] = apply_preset(data["workload"], where)
    try:
        return BenchmarkConfig.model_validate_json(json.dumps(data, default=str))
    except ValidationError as exc:
        raise ConfigError(first_error(exc, where)) from exc
