"""profile_trace: the per-minute rates, the length quantiles and the prefix-sharing ratio of a small trace, checked
against figures worked out by hand (SQL table macro trace_profile computes them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import TraceConfig
from tcobench.tasks.workload.profile_trace import profile_trace

# timestamp (ms), input_length, output_length, hash_ids: minutes 0, 0, 1, 3
ROWS = [(0, 600, 10, [1, 2]), (30_000, 1000, 20, [1, 3]), (70_000, 512, 30, [1]), (190_000, 100, 40, [4])]


def mooncake(path: Path, rows: list[tuple[int, int, int, list[int]]] = ROWS) -> Path:
    keys = ("timestamp", "input_length", "output_length", "hash_ids")
    path.write_text("".join(json.dumps(dict(zip(keys, row, strict=True))) + "\n" for row in rows))
    return path


def profile(path: Path, **config: Any) -> dict[str, Any]:
    return profile_trace(TraceConfig(path=path, **config)).model_dump()


def test_rates_lengths_and_prefix_sharing_by_hand(tmp_path: Path) -> None:
    got = profile(mooncake(tmp_path / "m.jsonl"))
    assert (got["requests"], got["duration_ns"], got["minutes"], got["format"]) == (4, 190 * 10**9, 4, "mooncake")
    # requests per minute 2, 1, 0, 1: quantile_cont at 0.95 of [0, 1, 1, 2] is 1 + 0.85 x (2 - 1)
    assert (got["request_rate_mean"], got["request_rate_peak"]) == (1.0, 2)
    assert got["request_rate_p95"] == pytest.approx(1.85)
    # tokens per minute 610 + 1020, 542, 0, 140
    assert (got["token_rate_mean"], got["token_rate_peak"]) == (578.0, 1630)
    assert got["token_rate_p95"] == pytest.approx(542 + 0.85 * (1630 - 542))
    # output tokens per minute 10 + 20, 30, 0, 40 (what `tcobench plan` sizes a fleet for)
    assert (got["output_rate_mean"], got["output_rate_peak"]) == (25.0, 40)
    assert got["output_rate_p95"] == pytest.approx(30 + 0.85 * (40 - 30))
    assert (got["input_p50"], got["input_max"], got["output_p50"], got["output_max"]) == (556.0, 1000, 25.0, 40)
    assert got["output_p90"] == pytest.approx(37.0)
    # block 1 is seen again by lines 2 and 3 (512 tokens each) of 600 + 1000 + 512 + 100 input tokens
    assert got["prefix_shared_share"] == pytest.approx(1024 / 2212)
    assert len(got["sha256"]) == 64 and got["window_start_s"] is None


def test_time_scale_and_window_change_the_clock(tmp_path: Path) -> None:
    path = mooncake(tmp_path / "m.jsonl")
    faster = profile(path, time_scale=0.5)  # 0, 15, 35, 95 s: 3 requests in minute 0, 1 in minute 1
    assert (faster["minutes"], faster["request_rate_peak"], faster["request_rate_mean"]) == (2, 3, 2.0)
    window = profile(path, window_s=(60.0, 200.0))  # lines 3 and 4, at 10 and 130 s of the window
    assert (window["requests"], window["minutes"], window["window_start_s"]) == (2, 3, 60.0)
    assert window["prefix_shared_share"] == 0.0  # block 1 was seen before the window only


def test_formats_without_blocks_or_lengths_say_so(tmp_path: Path) -> None:
    azure = tmp_path / "a.csv"
    azure.write_text(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.1,100,5\n2023-11-16 18:16:50.2,200,7\n"
    )
    got = profile(azure)
    assert (got["format"], got["minutes"], got["input_max"], got["prefix_shared_share"]) == ("azure", 2, 200, None)
    texts = tmp_path / "t.jsonl"
    texts.write_text('{"timestamp": 0, "prompt": "a"}\n{"timestamp": 1000, "prompt": "b", "output_tokens": 9}\n')
    got = profile(texts)
    assert (got["input_p50"], got["token_rate_mean"], got["output_max"]) == (None, None, 9)
    assert got["output_rate_peak"] == 9  # the output rate needs only the output lengths


def test_an_empty_window_and_a_bad_line_are_errors(tmp_path: Path) -> None:
    path = mooncake(tmp_path / "m.jsonl")
    with pytest.raises(ConfigError, match=r"no requests in the window 500,600 s"):
        profile(path, window_s=(500.0, 600.0))
    with path.open("a") as handle:
        handle.write('{"timestamp": 200000, "input_length": -3, "output_length": 1}\n')
    with pytest.raises(ConfigError, match=r"line 5: input_length = -3"):
        profile(path)
