"""The run's estimate from the warm-up's speed and the plan (tasks/estimate.py's formula, by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcobench.schemas import Phase, TraceConfig
from tcobench.tasks.config import load_config
from tcobench.tasks.estimate import Speed, mean_length, plan_seconds, replay_floor_seconds, warmup_speed
from tcobench.tasks.workload.read_trace import open_trace
from tests.unit.factories import make_request


def test_speed_and_plan_by_hand() -> None:
    # 1,000 prompt tokens in 4 s to the first token; 16 output tokens, 15 of them in 0.5 s of decode
    warm = [
        make_request(
            phase=Phase.warmup,
            prompt_tokens=1000,
            output_tokens=16,
            ttft_ns=4_000_000_000,
            decode_ns=500_000_000,
            e2e_ns=4_500_000_000,
        )
        for _ in range(2)
    ]
    speed = warmup_speed(warm)
    assert speed is not None and speed.prefill_tok_s == 250 and speed.decode_tok_s == 30
    w = load_config(None, {"workload": {"preset": "chat-1k-1k", "requests": 4, "max_tokens": 16}}).workload
    each = mean_length(w.input_tokens) / 250 + 16 / 30  # type: ignore[arg-type]
    assert plan_seconds(w, speed) == pytest.approx(len(w.concurrency) * (2 + 4) * each)
    timed = load_config(None, {"workload": {"preset": "chat-1k-1k", "max_tokens": 16}}).workload
    each_level = [2 * each + max(120, 20 * each) + min(c, 256) * each for c in timed.concurrency]
    assert plan_seconds(timed, speed) == pytest.approx(sum(each_level))


def test_no_ok_warm_up_request_gives_no_speed() -> None:
    assert warmup_speed([make_request(phase=Phase.warmup, error="HTTP 500", e2e_ns=1)]) is None


def test_a_replay_lasts_its_windowed_span_times_the_time_scale(tmp_path: Path) -> None:
    # Mooncake lines every 10 s, 100 prompt + 10 output tokens; the window 10,40 keeps offsets 10, 20, 30 s
    lines = [{"timestamp": i * 10_000, "input_length": 100, "output_length": 10, "hash_ids": [i]} for i in range(8)]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    speed = Speed(prefill_tok_s=100.0, decode_tok_s=10.0, request_s=9.0, prompt_tokens=50.0)
    each = 100 / 100 + 10 / 10  # the trace's lengths, not the workload's
    cfg = {"path": path, "window_s": [10, 40], "time_scale": 0.5}
    w = load_config(None, {"workload": {"trace": cfg, "concurrency": [1, 2], "warmup_requests": 1}}).workload
    requests = tuple(open_trace(TraceConfig.model_validate(cfg)).requests())
    assert [r.at_ns for r in requests] == [0, 5_000_000_000, 10_000_000_000]
    # per level: warm-up + last offset (20 s x 0.5) + in flight at the end (the level) x each
    assert plan_seconds(w, speed, requests) == pytest.approx((each + 10 + 1 * each) + (each + 10 + 2 * each))
    # an engine slower than the trace: its requests one after another
    slow = Speed(prefill_tok_s=10.0, decode_tok_s=1.0, request_s=9.0, prompt_tokens=50.0)
    assert plan_seconds(w, slow, requests) == pytest.approx(2 * (20 + 3 * 20))
    # the lower end: per level, warm-up + the span + one request, whatever the engine's speed beyond one request
    assert replay_floor_seconds(w, speed, requests) == pytest.approx(2 * (each + 10 + each))
    assert replay_floor_seconds(w, slow, requests) == pytest.approx(2 * (20 + 10 + 20))
    assert replay_floor_seconds(w, slow, requests) < plan_seconds(w, slow, requests)
    # without the trace the same workload would count workload.requests, not the replay's span
    assert plan_seconds(w, speed) != pytest.approx(plan_seconds(w, speed, requests))
