"""Presets: every shipped one is a valid workload; a preset's fields are defaults the file and CLI override;
an unknown name is one line listing the presets; matrices can name presets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import LengthKind
from tcobench.tasks.config import load_config
from tcobench.tasks.inventory import load_plan
from tcobench.tasks.prices import load_prices
from tcobench.tasks.workload import presets


def test_shipped_presets_cover_the_public_shapes() -> None:
    known = presets()
    assert {"default-short", "smoke-512-128", "chat-1k-1k", "reasoning-1k-8k", "summarise-8k-1k"} <= set(known)
    for name in ("chat-1k-1k", "reasoning-1k-8k", "summarise-8k-1k"):
        config = load_config(None, {"workload": {"preset": name}})
        w = config.workload
        assert w.preset == name and w.name == name
        assert w.input_tokens is not None and w.output_tokens is not None and w.ignore_eos
        assert w.duration_s is not None and w.duration_s >= 60 and w.sweep is not None
        assert len(w.concurrency) > 4 and w.slo.ttft_ms is not None and w.slo.tpot_ms is not None
        assert w.longest_input + w.longest_output <= w.num_ctx
    reasoning = load_config(None, {"workload": {"preset": "reasoning-1k-8k"}}).workload
    assert reasoning.output_tokens is not None and reasoning.output_tokens.kind is LengthKind.uniform
    assert (reasoning.output_tokens.lower, reasoning.output_tokens.upper) == (6553, 8192)  # 8192 x ratio 0.8
    default = load_config(None, {"workload": {"preset": "default-short"}}).workload
    assert default == load_config().workload.model_copy(update={"preset": "default-short"})


def test_file_and_command_line_override_a_preset(tmp_path: Path) -> None:
    path = tmp_path / "bench.toml"
    path.write_text('[workload]\npreset = "chat-1k-1k"\nconcurrency = [4, 8]\n[workload.slo]\nttft_ms = 500\n', "utf-8")
    w = load_config(path, {"workload": {"output_tokens": "64", "duration_s": None}}).workload
    assert w.concurrency == (4, 8) and w.duration_s == 120  # None on the command line means "not given"
    assert w.output_tokens is not None and w.output_tokens.upper == 64
    assert w.slo.ttft_ms == 500 and w.slo.tpot_ms == 200 and w.slo.quantile == 0.99  # tables merge key by key


def test_unknown_preset_lists_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, {"workload": {"preset": "chat-2k"}})
    message = str(info.value)
    assert "workload.preset: unknown preset 'chat-2k'" in message and "chat-1k-1k" in message
    assert "\n" not in message


def test_matrix_workloads_can_name_presets(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.toml"
    inventory.write_text('[[hosts]]\nname = "a"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n', "utf-8")
    matrix = tmp_path / "matrix.toml"
    matrix.write_text(
        '[[engines]]\nname = "llama"\nendpoint = "http://127.0.0.1:1"\n[[models]]\nname = "m"\n'
        '[[workloads]]\npreset = "chat-1k-1k"\nconcurrency = [1, 2]\n'
        '[[workloads]]\npreset = "summarise-8k-1k"\n',
        "utf-8",
    )
    plan = load_plan(inventory, [matrix], load_prices(None))
    chat, summarise = (cell.config.workload for cell in plan.cells)
    assert (chat.name, chat.concurrency, chat.preset) == ("chat-1k-1k", (1, 2), "chat-1k-1k")
    assert summarise.input_tokens is not None and summarise.input_tokens.upper == 8192
    matrix.write_text(matrix.read_text("utf-8").replace("summarise-8k-1k", "summarize"), "utf-8")
    with pytest.raises(ConfigError, match="matrix.toml: workload.preset: unknown preset 'summarize'"):
        load_plan(inventory, [matrix], load_prices(None))
