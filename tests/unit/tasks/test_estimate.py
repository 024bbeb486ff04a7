"""The run's estimate from the warm-up's speed and the plan (tasks/estimate.py's formula, by hand)."""

from __future__ import annotations

import pytest

from tcobench.schemas import Phase
from tcobench.tasks.config import load_config
from tcobench.tasks.estimate import mean_length, plan_seconds, warmup_speed
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
