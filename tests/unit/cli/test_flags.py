"""Options declared once, on the configuration fields they set (schemas/flags.py, cli/_flags.py)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
import typer

from tcobench.cli import analytics
from tcobench.cli import run as run_cli
from tcobench.schemas import BenchmarkConfig, CompareOptions, flags_of
from tcobench.tasks.config import load_config_sourced

# The spellings `tcobench run` named its workload fields by before the flags were declared on the fields.
_FLAG_NAMES = {
    "preset": "--preset",
    "requests": "--requests",
    "warmup_requests": "--warmup",
    "concurrency": "--concurrency",
    "max_tokens": "--max-tokens",
    "input_tokens": "--input-tokens",
    "output_tokens": "--output-tokens",
    "mode": "--rate",
    "rate": "--rate",
    "client_procs": "--client-procs",
    "ignore_eos": "--ignore-eos",
    "request_timeout_s": "--request-timeout",
    "run_deadline_s": "--deadline",
    "extra_body": "--extra-body",
    "dataset": "--dataset",
    "trace": "--trace",
    "shared_prefix_tokens": "--shared-prefix",
    "turns": "--turns",
    "duration_s": "--duration",
    "min_requests": "--min-requests",
    "tokenizer": "--tokenizer",
    "slo": "--slo-*",
    "sweep": "--sweep-margin",
    "profile": "--profile",
    "accuracy": "--accuracy",
}


def _values(**given: Any) -> dict[str, Any]:
    params = inspect.signature(run_cli._run).parameters
    return {name: p.default for name, p in params.items()} | given


def test_the_workload_fields_keep_their_flag_names() -> None:
    assert run_cli.FLAG_NAMES == _FLAG_NAMES


def test_every_declared_flag_is_an_option_of_run_and_sets_a_field() -> None:
    params = inspect.signature(run_cli._run).parameters
    for path, flag, _ in flags_of(BenchmarkConfig):
        assert (flag.name or path[-1]) in params, path
        model: Any = BenchmarkConfig
        for key in path[:-1]:
            model = next(
                a
                for a in getattr(model.model_fields[key].annotation, "__args__", ())
                or (model.model_fields[key].annotation,)
                if isinstance(a, type)
            )
        assert path[-1] in model.model_fields, path


def test_nothing_given_sets_nothing() -> None:
    assert run_cli.overrides_of(_values()) == {}


def test_a_flag_sets_its_field_and_what_it_implies() -> None:
    got = run_cli.overrides_of(_values(rate=2.0, concurrency=[1, 4], vllm_python=Path("/py"), slo_ttft_ms=100.0))
    assert got["workload"] == {"rate": 2.0, "mode": "poisson", "concurrency": (1, 4), "slo": {"ttft_ms": 100.0}}
    assert got["engine"] == {"vllm": {"python": "/py"}}
    assert run_cli.overrides_of(_values(concurrency=[])) == {}  # a repeatable option not given


def test_derived_fields() -> None:
    got = run_cli.overrides_of(_values(endpoint="http://127.0.0.1:1", model="m", dataset_format="jsonl"))
    assert got["engine"] == {"url": "http://127.0.0.1:1", "kind": "endpoint"}
    assert "workload" not in got  # --dataset-format counts only with --dataset
    got = run_cli.overrides_of(_values(shape="llama-3b", dataset=Path("d.jsonl"), dataset_format="jsonl"))
    assert got["model"] == {"shape": "llama-3b", "name": "synthetic-llama-3b", "synthetic": True}
    assert got["workload"] == {"dataset": {"path": "d.jsonl", "format": "jsonl"}}
    with pytest.raises(typer.BadParameter, match="--model is required with --endpoint"):
        run_cli.overrides_of(_values(endpoint="http://127.0.0.1:1"))
    with pytest.raises(typer.BadParameter, match="not JSON"):
        run_cli.overrides_of(_values(extra_body="{"))


def test_a_flag_wins_over_the_file_which_wins_over_the_preset(tmp_path: Path) -> None:
    path = tmp_path / "bench.toml"
    path.write_text('[workload]\npreset = "chat-1k-1k"\nrequests = 7\nmax_tokens = 9\n', "utf-8")
    config, sources = load_config_sourced(path, run_cli.overrides_of(_values(requests=3)), run_cli.FLAG_NAMES)
    assert (config.workload.requests, sources["requests"]) == (3, "flag")
    assert (config.workload.max_tokens, sources["max_tokens"]) == (9, "config")
    assert (sources["input_tokens"], sources["temperature"]) == ("preset", "default")


def test_compare_takes_its_defaults_and_help_from_compare_options() -> None:
    params = inspect.signature(analytics._compare).parameters
    defaults = CompareOptions()
    for name, field in CompareOptions.model_fields.items():
        flag = next((m for m in field.metadata if hasattr(m, "help")), None)
        if flag is None or flag.derived or flag.default is not ...:
            continue
        assert params[name].default == getattr(defaults, name), name
    assert params["basis"].default == str(defaults.basis)
    assert list(params)[:3] == ["a", "b", "claim"] and list(params)[-3:] == ["prices_file", "store", "snapshot"]


def test_accuracy_takes_the_options_it_shares_with_run_from_run() -> None:
    run_params = inspect.signature(run_cli._run).parameters
    params = inspect.signature(run_cli._accuracy).parameters
    shared = [name for name in params if name != "questions"]
    assert shared == list(run_cli._ACCURACY_FROM_RUN) and "endpoint" in shared
    for name in shared:
        mine, runs = params[name], run_params[name]
        option, run_option = mine.annotation.__metadata__[0], runs.annotation.__metadata__[0]
        assert mine.default == runs.default and mine.annotation.__origin__ == runs.annotation.__origin__, name
        assert (option.param_decls, option.help) == (run_option.param_decls, run_option.help), name
