"""A flag wins over a config file, which wins over a preset, for every field a shipped preset sets; a choice made at
a stronger layer overrules a weaker layer's alternatives; two alternatives at one layer stop with one line naming
both; each field's source is known (the run summary's workload table)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from tcobench.cli import run as run_cli
from tcobench.errors import ConfigError
from tcobench.tasks.config import load_config_sourced
from tcobench.tasks.workload import presets

# A value unlike any preset's for every field a preset may set, and the `run` parameter that gives it (None: no
# flag; the field comes from a config file instead).
CHANGED: dict[str, tuple[Any, str | None]] = {
    "name": ("mine", None),
    "input_tokens": ("600", "input_tokens"),
    "output_tokens": ("32", "output_tokens"),
    "max_tokens": (16, "max_tokens"),
    "num_ctx": (20000, None),
    "duration_s": (7.0, "duration"),
    "min_requests": (3, "min_requests"),
    "requests": (4, "requests"),
    "warmup_requests": (5, "warmup"),
    "concurrency": ([3], "concurrency"),
    "request_timeout_s": (33.0, "request_timeout"),
    "slo.ttft_ms": (1234.0, "slo_ttft_ms"),
    "slo.tpot_ms": (55.0, "slo_tpot_ms"),
    "slo.quantile": (0.5, "slo_quantile"),
    "sweep.margin": (0.2, "sweep_margin"),
    "sweep.stop_on_slo": (False, None),
}


def _preset_fields() -> list[tuple[str, str]]:
    pairs = []
    for name, preset in presets().items():
        for key, value in preset.workload.items():
            subs = [f"{key}.{sub}" for sub in value] if isinstance(value, dict) else [key]
            pairs += [(name, field) for field in subs]
    return pairs


def _cli(**given: Any) -> dict[str, Any]:
    """The overrides `tcobench run` builds from its parameters: every default, then ``given``."""
    params = inspect.signature(run_cli._run).parameters
    return run_cli.overrides_of({name: p.default for name, p in params.items()} | given)


def _got(workload: Any, field: str) -> Any:
    head, _, sub = field.partition(".")
    value = getattr(workload, head)
    value = getattr(value, sub) if sub else value
    if hasattr(value, "describe"):
        return value.describe()
    return list(value) if isinstance(value, tuple) else value


def _toml(field: str, value: Any) -> str:
    head, _, sub = field.partition(".")
    text = str(value).lower() if isinstance(value, bool) else repr(value) if isinstance(value, str) else str(value)
    return f"[workload.{head}]\n{sub} = {text}\n" if sub else f"[workload]\n{head} = {text}\n"


def test_every_preset_field_has_a_changed_value() -> None:
    assert {field for _, field in _preset_fields()} <= set(CHANGED)


@pytest.mark.parametrize(("preset", "field"), _preset_fields(), ids=lambda x: str(x))
def test_a_flag_or_the_file_wins_over_every_preset_field(tmp_path: Path, preset: str, field: str) -> None:
    value, param = CHANGED[field]
    path = tmp_path / "bench.toml"
    path.write_text(f'[workload]\npreset = "{preset}"\n', "utf-8")
    if param is None:  # no flag sets it: a config file does
        path.write_text(path.read_text("utf-8") + _toml(field, value).replace("[workload]\n", ""), "utf-8")
        overrides: dict[str, Any] = {}
    else:
        overrides = _cli(**{param: value})
    config, sources = load_config_sourced(path, overrides, run_cli.FLAG_NAMES)
    wanted = value if field not in ("input_tokens", "output_tokens") else str(value)
    assert _got(config.workload, field) == wanted
    assert sources[field] == ("config" if param is None else "flag")


@pytest.mark.parametrize("preset", sorted(presets()))
def test_the_acceptance_flags_win_over_every_preset(preset: str) -> None:
    config, sources = load_config_sourced(None, _cli(preset=preset, requests=4, max_tokens=16), run_cli.FLAG_NAMES)
    w = config.workload
    assert (w.requests, w.duration_s, w.max_tokens, w.output_tokens, w.longest_output) == (4, None, 16, None, 16)
    assert sources["requests"] == sources["max_tokens"] == "flag"
    if presets()[preset].workload.get("duration_s") is not None:
        assert sources["duration_s"].startswith("preset's") and sources["duration_s"].endswith("overruled by flag")


def test_a_flag_overrules_the_file_s_alternative_and_the_file_the_preset_s(tmp_path: Path) -> None:
    path = tmp_path / "bench.toml"
    path.write_text('[workload]\npreset = "chat-1k-1k"\nrequests = 6\n', "utf-8")
    config, sources = load_config_sourced(path, _cli(duration=9.0), run_cli.FLAG_NAMES)
    assert (config.workload.duration_s, sources["duration_s"]) == (9.0, "flag")
    config, sources = load_config_sourced(path, {}, run_cli.FLAG_NAMES)
    assert (config.workload.requests, config.workload.duration_s, sources["requests"]) == (6, None, "config")
    config, sources = load_config_sourced(None, _cli(preset="smoke-512-128", dataset=path), run_cli.FLAG_NAMES)
    assert config.workload.input_tokens is None and config.workload.dataset is not None  # --dataset over synthetic
    assert sources["input_tokens"] == "preset's 512 overruled by flag"


def test_longer_lengths_on_the_command_line_grow_the_preset_s_context() -> None:
    config, sources = load_config_sourced(None, _cli(preset="chat-1k-1k", input_tokens="6000"), run_cli.FLAG_NAMES)
    assert config.workload.num_ctx == 6000 + 1024 and sources["num_ctx"] == "fitted to the lengths"


@pytest.mark.parametrize(
    ("given", "names"),
    [
        ({"requests": 4, "duration": 60.0}, ("--requests 4", "--duration 60")),
        ({"max_tokens": 16, "output_tokens": "64"}, ("--max-tokens 16", "--output-tokens 64")),
        ({"requests": 4, "min_requests": 2}, ("--requests 4", "--min-requests 2")),
        ({"input_tokens": "600", "dataset": Path("d.jsonl")}, ("--input-tokens 600", "--dataset d.jsonl")),
    ],
)
def test_contradicting_flags_stop_with_one_line_naming_both(given: dict[str, Any], names: tuple[str, str]) -> None:
    with pytest.raises(ConfigError) as info:
        load_config_sourced(None, _cli(preset="chat-1k-1k", **given), run_cli.FLAG_NAMES)
    message = str(info.value)
    assert "\n" not in message and all(name in message for name in names), message


def test_a_file_contradicting_itself_names_the_file_and_both_fields(tmp_path: Path) -> None:
    path = tmp_path / "bench.toml"
    path.write_text("[workload]\nrequests = 4\nduration_s = 30\n", "utf-8")
    with pytest.raises(ConfigError, match=r"bench.toml: workload.requests 4 and .*bench.toml: workload.duration_s 30"):
        load_config_sourced(path)
