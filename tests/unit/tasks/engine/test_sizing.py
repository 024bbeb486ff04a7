"""Engine sizing: slots are the concurrency the plan reaches, capped by memory; the context is the longest request
times the slots."""

from __future__ import annotations

from tcobench.schemas import WorkloadConfig
from tcobench.tasks.config import load_config
from tcobench.tasks.engine.sizing import kv_bytes_per_token, plan_sizing, reachable_concurrency

GEMMA_LIKE = {
    "general.architecture": "gemma3",
    "gemma3.block_count": 18,
    "gemma3.attention.head_count": 4,
    "gemma3.attention.head_count_kv": 1,
    "gemma3.attention.key_length": 256,
    "gemma3.attention.value_length": 256,
    "gemma3.embedding_length": 640,
}


def _workload(**fields: object) -> WorkloadConfig:
    return load_config(None, {"workload": fields}).workload


def test_the_issue_s_command_gets_four_slots_of_its_longest_request() -> None:
    w = _workload(preset="chat-1k-1k", requests=4, max_tokens=16)
    sizing = plan_sizing(w)
    assert (sizing.slots, sizing.per_slot, sizing.context) == (4, 1024 + 16, 4 * 1040)  # not 256 x 4,096
    assert sizing.text().startswith("engine sizing: 4 slot(s) x 1,040 tokens = 4,160-token context")


def test_a_timed_run_reaches_its_highest_level_and_a_counted_one_its_request_count() -> None:
    assert reachable_concurrency(_workload(preset="chat-1k-1k")) == 256
    assert reachable_concurrency(_workload(requests=3, warmup_requests=5, concurrency=[1, 8])) == 5
    assert plan_sizing(_workload(concurrency=[2])).per_slot == 2048  # literal prompts: num_ctx per slot


def test_memory_caps_the_slots_and_says_so() -> None:
    w = _workload(preset="chat-1k-1k")
    kv = kv_bytes_per_token(GEMMA_LIKE)
    assert kv == 18 * 1 * (256 + 256) * 2
    per_slot = w.longest_input + w.longest_output
    memory = 2 * 10 * kv * per_slot + 100  # room for 10 slots in half of it, less the model
    sizing = plan_sizing(w, kv, memory, model_bytes=100)
    assert sizing.slots == 10 and sizing.asked_slots == 256
    assert "capped from 256 slots by memory" in sizing.text()
    assert plan_sizing(w, kv, 1).slots == 1  # never less than one


def test_missing_metadata_gives_no_kv_size() -> None:
    assert kv_bytes_per_token({"general.architecture": "x"}) is None
    assert kv_bytes_per_token({}) is None
