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
from tcobench.schemas import BenchmarkConfig, WorkloadConfig
from tcobench.schemas.base import redact_url
from tcobench.tasks.workload.layers import Layer, given
from tcobench.tasks.workload.presets import preset_layers
from tcobench.tasks.workload.profiles import apply_profile

__all__ = ["load_config", "load_config_sourced", "validation_message", "validation_problems"]


_BOUNDS = {
    "greater_than": ("gt", ">"),
    "greater_than_equal": ("ge", ">="),
    "less_than": ("lt", "<"),
    "less_than_equal": ("le", "<="),
}
_SCALARS = (str, int, float, bool, type(None))


def _shown(value: Any) -> str:
    """A given value as a message shows it, as the file writes it: a text quoted, a number as given (-1, not -1.0),
    true / false (not Python's True), URL credentials masked, cut at 80 characters; never Python's None."""
    if value is None:
        return "no value"
    if isinstance(value, bool):
        return "true" if value else "false"
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


def validation_problems(exc: ValidationError) -> list[tuple[tuple[int | str, ...], str]]:
    """Each problem of ``exc`` as (field location, what is wrong with which value)."""
    return [(tuple(err["loc"]), _problem(err)) for err in exc.errors(include_url=False)]


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
    return load_config_sourced(path, overrides)[0]


def load_config_sourced(
    path: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    flag_names: Mapping[str, str] | None = None,
) -> tuple[BenchmarkConfig, dict[str, str]]:
    """``load_config``, and where each workload field came from: flag, config, preset or default (every field of
    WorkloadConfig, tables key by key: ``slo.ttft_ms``). The workload's layers are resolved by
    ``tasks.workload.layers``: a flag wins over the file, which wins over the preset, alternatives included;
    ``flag_names`` names the overrides' workload fields as the command line spells them (``requests``:
    ``--requests``)."""
    data = _read_toml(path) if path is not None else {}
    over = dict(overrides or {})
    flags = given(over.pop("workload", None) or {})
    data = _merge(data, over)
    where = str(path) if path is not None else "command line"
    file_workload = data.get("workload")
    sources: dict[str, str] = {}
    if isinstance(file_workload, dict) or flags:
        names = dict(flag_names or {})
        layers = [Layer("flag", flags, lambda n: names.get(n, f"workload.{n}"))]
        if isinstance(file_workload, dict):
            layers.insert(0, Layer("config", given(file_workload), lambda n: f"{where}: workload.{n}"))
        data["workload"], sources = preset_layers(layers, where)
        data["workload"] = _profiled(data["workload"], sources, where)
        _fit_context(data["workload"], sources)
    try:
        config = BenchmarkConfig.model_validate_json(json.dumps(data, default=str))
    except ValidationError as exc:
        raise ConfigError(validation_message(exc, where)) from exc
    return config, _all_sources(config, sources)


def _profiled(workload: dict[str, Any], sources: dict[str, str], where: str) -> dict[str, Any]:
    """The workload with its profile's defaults (and an accuracy workload's questions): fields the profile fills
    or changes are sourced ``profile``; a field set by a flag, the file or the preset keeps its value."""
    done = apply_profile(workload, where)
    for name, value in done.items():
        if name not in workload or workload[name] != value:
            sources[name] = "profile"
    return done


def _fit_context(workload: dict[str, Any], sources: dict[str, str]) -> None:
    """A ``num_ctx`` that nobody set for this run (a preset's, or the default) grows to the longest request the
    other fields ask for: the command line has no flag for it, and longer lengths given there must still fit."""
    if sources.get("num_ctx") in ("config", "flag"):
        return
    try:
        probe = WorkloadConfig.model_validate_json(json.dumps({**workload, "num_ctx": 1 << 30}, default=str))
    except ValidationError:
        return  # the full validation below reports it
    need = probe.longest_input + probe.longest_output
    have = int(workload.get("num_ctx") or WorkloadConfig.model_fields["num_ctx"].default)
    if probe.input_tokens is not None and need > have:
        workload["num_ctx"] = need
        sources["num_ctx"] = "fitted to the lengths"


def _all_sources(config: BenchmarkConfig, sources: Mapping[str, str]) -> dict[str, str]:
    names = [n for n in WorkloadConfig.model_fields if n not in ("slo", "sweep")]
    names += [f"slo.{n}" for n in type(config.workload.slo).model_fields]
    if config.workload.sweep is not None:
        names += [f"sweep.{n}" for n in type(config.workload.sweep).model_fields]
    return {name: sources.get(name, "default") for name in names}
