"""load_config: a TOML file plus CLI overrides (over a named workload preset) -> one validated BenchmarkConfig,
or one ConfigError."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from tcobench.errors import ConfigError
from tcobench.schemas import BenchmarkConfig
from tcobench.schemas.base import redact_url

from .workload.presets import apply_preset
from .workload.profiles import apply_profile

__all__ = ["load_config", "validation_message"]


_BOUNDS = {"greater_than": ("gt", ">"), "greater_than_equal": ("ge", ">="), "less_than": ("lt", "<"),
           "less_than_equal": ("le", "<=")}  # fmt: skip
_SCALARS = (str, int, float, bool, type(None))


def _shown(value: Any) -> str:
    """A given value as a message shows it: repr (numbers as given: -1, not -1.0), URL credentials masked, cut at
    80 characters."""
    text = f"{value:g}" if isinstance(value, float) else redact_url(repr(value))
    return text if len(text) <= 80 else text[:77] + "..."


def _problem(err: ErrorDetails) -> str:
    """One validation problem as ``what is wrong with which value``."""
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    message = err["msg"].removeprefix("Value error, ")
    if kind in _BOUNDS:
        key, op = _BOUNDS[kind]
        bound = ctx.get(key)
        return f"{_shown(value)} is not {op} {f'{bound:g}' if isinstance(bound, int | float) else bound}"
    if kind == "missing":
        return "required, but missing"
    if kind == "extra_forbidden":
        return f"unknown field (given {_shown(value)}); check its spelling and section"
    if kind == "value_error" or not isinstance(value, _SCALARS):
        return message  # our validators name the value themselves; a whole table is not worth repeating
    return f"{message[0].lower()}{message[1:]}, got {_shown(value)}" if message else f"invalid: {_shown(value)}"


def _under(loc: tuple[int | str, ...], parent: tuple[int | str, ...]) -> bool:
    return len(loc) > len(parent) and loc[: len(parent)] == parent


def validation_message(exc: ValidationError, where: str) -> str:
    """Every problem on one line: ``where: field.path: -1 is not > 0; other.field: ...``."""
    errors = exc.errors(include_url=False)
    problems = []
    for err in errors:
        if err["type"] == "too_short" and any(_under(other["loc"], err["loc"]) for other in errors):
            continue  # a list whose items failed also reports "too short": the items' own errors say it all
        path = ".".join(str(p) for p in err["loc"])
        problems.append(f"{path}: {_problem(err)}" if path else _problem(err))
    return " ".join(f"{where}: {'; '.join(problems)}".split())


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
        data["workload"] = apply_profile(apply_preset(data["workload"], where), where)
    try:
        return BenchmarkConfig.model_validate_json(json.dumps(data, default=str))
    except ValidationError as exc:
        raise ConfigError(validation_message(exc, where)) from exc
