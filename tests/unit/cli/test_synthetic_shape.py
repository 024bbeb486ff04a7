"""`tcobench run --synthetic SHAPE` is `--synthetic --shape SHAPE`; a bare --synthetic still only marks the model."""

from __future__ import annotations

from tcobench.cli.run import expand_synthetic


def test_shape_after_synthetic() -> None:
    assert expand_synthetic(["run", "--engine", "vllm", "--synthetic", "llama-3b", "--requests", "2"]) == [
        "run",
        "--engine",
        "vllm",
        "--synthetic",
        "--shape",
        "llama-3b",
        "--requests",
        "2",
    ]


def test_bare_synthetic_and_other_commands_are_untouched() -> None:
    assert expand_synthetic(["run", "--endpoint", "http://x", "--synthetic"]) == [
        "run",
        "--endpoint",
        "http://x",
        "--synthetic",
    ]
    assert expand_synthetic(["run", "--synthetic", "--model", "m"]) == ["run", "--synthetic", "--model", "m"]
    assert expand_synthetic(["models", "synth", "--synthetic", "x"]) == ["models", "synth", "--synthetic", "x"]
