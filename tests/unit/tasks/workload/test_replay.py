"""Replay: the measured requests of a replayed trace, read once, with their offsets and their own text, and the plan
that sends them (measured request i is the trace's i-th; warm-up keeps the prompt list)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import Phase, TraceConfig, WorkloadConfig
from tcobench.tasks.load.loadgen import client_procs
from tcobench.tasks.runs import prompt_set_hash
from tcobench.tasks.workload import WorkloadPlan
from tcobench.tasks.workload.plan import replay_set_key, sha256_json
from tcobench.tasks.workload.read_trace import file_sha256
from tcobench.tasks.workload.replay import read_replay


def trace(tmp_path: Path, n: int, gap_ms: float) -> Path:
    path = tmp_path / "t.jsonl"
    lines = [{"timestamp": 100 + i * gap_ms, "prompt": f"p{i}", "output_tokens": i % 3} for i in range(n)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return path


def test_the_plan_sends_the_traces_requests_at_their_offsets(tmp_path: Path) -> None:
    path = trace(tmp_path, 5, 250.0)
    replay = read_replay(TraceConfig(path=path, time_scale=2.0))
    workload = WorkloadConfig.model_validate({"trace": {"path": path, "time_scale": 2.0}})
    plan = WorkloadPlan(workload, replay=replay).for_run(4)
    assert plan.offsets_ns == [i * 500_000_000 for i in range(5)] and plan.measured_requests == 5
    assert plan.arrival_rate == pytest.approx(5 / 2.0)  # 5 requests over the last offset, 2 s
    specs = [plan.spec(Phase.measure, i) for i in range(5)]
    assert [s.user for s in specs] == [f"p{i}" for i in range(5)]
    assert [s.output_tokens for s in specs] == [1, 1, 2, 1, 1]  # as recorded; 0 recorded: at least 1
    assert plan.spec(Phase.warmup, 0).user == workload.prompts[0]
    assert plan.prompt_set_key()["trace_sha256"] == replay.sha256


def test_a_replays_prompt_set_hash_is_what_plan_looks_up(tmp_path: Path) -> None:
    """`tcobench plan` finds a replay of a trace file from the file alone (tasks/analysis/compare/plan.py): the run
    row's prompt_set_hash of a whole-file replay is sha256_json(replay_set_key(file sha256, None, seed)) at any time
    scale; a windowed replay's is another (a slice is other traffic)."""
    path = trace(tmp_path, 5, 250.0)
    wanted = sha256_json(replay_set_key(file_sha256(path), None, 7))
    for scale in (1.0, 0.5):
        config = {"path": path, "time_scale": scale}
        workload = WorkloadConfig.model_validate({"trace": config, "seed": 7})
        plan = WorkloadPlan(workload, replay=read_replay(TraceConfig.model_validate(config)))
        assert prompt_set_hash(plan) == wanted
    windowed = {"path": path, "window_s": "0,0.6"}
    workload = WorkloadConfig.model_validate({"trace": windowed, "seed": 7})
    plan = WorkloadPlan(workload, replay=read_replay(TraceConfig.model_validate(windowed)))
    assert prompt_set_hash(plan) != wanted


def test_client_processes_follow_the_replays_rate(tmp_path: Path) -> None:
    """auto: one process per 400 arrivals/s of the replay's mean rate (at most the cores minus one)."""
    path = trace(tmp_path, 2001, 1.0)  # 2,000 requests/s
    plan = WorkloadPlan(
        WorkloadConfig.model_validate({"trace": {"path": path}}), replay=read_replay(TraceConfig(path=path))
    )
    assert client_procs(plan.workload, 64, plan.arrival_rate) == min(5, max(1, (os.cpu_count() or 1) - 1))


def test_an_empty_window_is_refused(tmp_path: Path) -> None:
    path = trace(tmp_path, 3, 100.0)
    with pytest.raises(ConfigError, match=r"t.jsonl: the window 5,9 holds no requests to replay"):
        read_replay(TraceConfig(path=path, window_s=(5.0, 9.0)))
