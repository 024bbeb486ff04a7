from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest

from tcobench.errors import ExitCode, RunError
from tcobench.schemas import BenchmarkConfig, ClientProcessCheck, RunRecord, RunStatus
from tcobench.tasks.engine import RunningEngine
from tcobench.tasks.load.protocols import EngineInfo
from tcobench.tasks.load.record import MeasureResult
from tcobench.tasks.runs import (
    check_runs,
    check_shapes,
    config_hash,
    describe_run,
    finish_run,
    prompt_set_hash,
    run_verdict,
)
from tcobench.tasks.workload import WorkloadPlan
from tests.unit.factories import make_request


def _run() -> tuple[BenchmarkConfig, RunRecord]:
    config = BenchmarkConfig()
    engine = RunningEngine("http://127.0.0.1:1", EngineInfo("llama.cpp", "b1", "abc"), settings={"parallel": 2})
    return config, describe_run(config, engine, "/v1/completions", "h", "batch", 2)


def test_describe_run_records_provenance() -> None:
    config, run = _run()
    assert run.status is RunStatus.failed and run.error == "run did not finish"  # until finish_run says so
    assert run.concurrency == 2 and run.engine_version == "b1" and run.model_digest == "abc"
    assert run.prompt_set_hash == prompt_set_hash(WorkloadPlan(config.workload))
    # a prompt list hashes as runs stored it before workload shapes existed, so old runs stay comparable
    legacy = json.dumps(list(config.workload.prompts), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert run.prompt_set_hash == hashlib.sha256(legacy.encode("utf-8")).hexdigest()
    assert run.prompt_source == "prompts" and run.input_tokens_spec is None and run.turns == 1
    assert run.config_hash == config_hash(config) and len(run.config_hash) == 64
    assert run.host_cpu_count is not None and run.host_cpu_count >= 1 and run.host_kernel and run.tool_version
    assert run.engine_settings == '{"parallel": 2}' and run.engine_url == "http://127.0.0.1:1"


def test_extra_body_is_recorded_as_json() -> None:
    engine = RunningEngine("http://127.0.0.1:1", EngineInfo("llama.cpp", "b1", "abc"))
    config = BenchmarkConfig.model_validate_json('{"workload": {"extra_body": {"top_k": 1, "samplers": ["top_k"]}}}')
    assert (
        describe_run(config, engine, "/v1/completions", "h", "b", 1).extra_body == '{"samplers": ["top_k"], "top_k": 1}'
    )
    assert describe_run(BenchmarkConfig(), engine, "/v1/completions", "h", "b", 1).extra_body is None
    assert config_hash(config) != config_hash(BenchmarkConfig())


def _plan(**workload: object) -> WorkloadPlan:
    from tcobench.schemas import WorkloadConfig

    return WorkloadPlan(WorkloadConfig.model_validate_json(json.dumps(workload)))


def test_hashes_change_with_content() -> None:
    assert prompt_set_hash(_plan(prompts=["a"])) != prompt_set_hash(_plan(prompts=["b"]))
    assert prompt_set_hash(_plan(input_tokens=64)) != prompt_set_hash(_plan(input_tokens=65))
    assert prompt_set_hash(_plan(input_tokens=64)) != prompt_set_hash(_plan(input_tokens=64, seed=1))
    assert config_hash(BenchmarkConfig()) != config_hash(
        BenchmarkConfig.model_validate_json('{"workload": {"requests": 3}}')
    )


def _result(errors: list[str | None]) -> MeasureResult:
    rows = [make_request(request_index=i, error=e) for i, e in enumerate(errors)]
    return MeasureResult([], rows, 1, 2)


def test_finish_run_status() -> None:
    _, run = _run()
    assert finish_run(run, _result([None, None])).status is RunStatus.ok
    partial = finish_run(run, _result([None, "HTTP 500"]))
    assert partial.status is RunStatus.partial and "1 of 2" in (partial.error or "")
    failed = finish_run(run, _result(["x", "y"]))
    assert failed.status is RunStatus.failed and "first error: x" in (failed.error or "")
    died = finish_run(run, _result([None]), "llama-server exited with code 9")
    assert died.status is RunStatus.failed and died.error == "llama-server exited with code 9"
    assert died.measure_start_ns == 1 and died.measure_end_ns == 2
    assert died.stop_rule == "requests" and died.measured_requests == 1


def test_finish_run_carries_the_client_self_check() -> None:
    _, run = _run()
    assert finish_run(run, _result([None])).client_saturated is None  # not checked: null, not false
    calm = ClientProcessCheck(
        wall_ns=10**9, cpu_ns=10**8, lag_p50_ns=500_000, lag_p99_ns=900_000, own_lag_p99_ns=800_000, lag_samples=100
    )
    busy = calm.model_copy(update={"cpu_ns": 990_000_000})
    result = replace(_result([None]), client=(calm, busy))
    row = finish_run(run, result)
    assert row.client_procs == 2 and row.client_cpu_ns == [10**8, 990_000_000] and row.client_saturated is True
    assert row.client_check_note is not None and "process 1: CPU 99%" in row.client_check_note
    assert finish_run(run, replace(result, client=(calm,))).client_saturated is False


def test_output_length_enforcement_is_judged_from_the_rows() -> None:
    engine = RunningEngine("http://127.0.0.1:1", EngineInfo("llama.cpp", "b1", "abc"))
    config = BenchmarkConfig.model_validate_json('{"workload": {"output_tokens": 11}}')
    run = describe_run(config, engine, "/v1/completions", "h", "b", 1)
    exact = [make_request(request_index=i, output_tokens=11, requested_output_tokens=11) for i in range(2)]
    done = finish_run(run, MeasureResult([], exact, 1, 2))
    assert done.output_len_enforced is True and "ignore_eos" in (done.output_len_note or "")
    short = exact + [make_request(request_index=2, output_tokens=4, requested_output_tokens=11)]
    done = finish_run(run, MeasureResult([], short, 1, 2))
    assert done.output_len_enforced is False and "1 of 3 ok requests" in (done.output_len_note or "")
    ollama = run.model_copy(update={"protocol": "ollama"})
    assert "no ignore_eos" in (finish_run(ollama, MeasureResult([], exact, 1, 2)).output_len_note or "")
    plain = describe_run(BenchmarkConfig(), engine, "/v1/completions", "h", "b", 1)
    assert finish_run(plain, MeasureResult([], exact, 1, 2)).output_len_enforced is None


def test_a_stopped_run_is_interrupted_and_says_what_it_kept() -> None:
    _, run = _run()
    rows = [make_request(request_index=i, error=e) for i, e in enumerate([None, None, "HTTP 500"])]
    stopped = finish_run(run, MeasureResult([], rows, 1, 2, stopped="interrupted by SIGTERM", cancelled=2))
    assert stopped.status is RunStatus.interrupted
    assert stopped.error == (
        "interrupted by SIGTERM: kept 3 of 20 measured requests (2 ok); 2 in flight cancelled after the grace "
        "period (not stored)"
    )
    died = finish_run(run, MeasureResult([], rows, 1, 2, stopped="run deadline of 5 s reached"), "engine died")
    assert died.status is RunStatus.failed  # a dead engine is the worse news


@pytest.mark.parametrize(
    ("status", "measured", "failed", "code"),
    [
        ("ok", 20, 0, ExitCode.ok),
        ("partial", 20, 1, ExitCode.ok),  # 5%: at the threshold, not over it
        ("partial", 20, 2, ExitCode.partial),
        ("partial", 20, 20, ExitCode.failed),
        ("failed", 20, 20, ExitCode.failed),
        ("failed", 0, 0, ExitCode.failed),
        ("interrupted", 7, 0, ExitCode.partial),  # cut short by its deadline
        ("interrupted", 0, 0, ExitCode.failed),  # nothing finished: a hanging server
    ],
)
def test_run_verdict_follows_the_exit_table(status: str, measured: int, failed: int, code: ExitCode) -> None:
    assert run_verdict(status, measured, failed, 0.05) is code


def test_check_runs_names_the_worst_run() -> None:
    _, run = _run()
    ok = run.model_copy(update={"run_id": "a" * 32, "status": RunStatus.ok, "error": None})
    partial = run.model_copy(update={"run_id": "b" * 32, "status": RunStatus.partial, "error": "3 of 20 failed"})
    failed = run.model_copy(update={"run_id": "c" * 32, "status": RunStatus.failed, "error": "all 20 failed"})
    counts = {ok.run_id: (20, 0), partial.run_id: (20, 3), failed.run_id: (20, 20)}
    check_runs([ok], counts, 0.05)  # nothing to say
    with pytest.raises(RunError) as info:
        check_runs([ok, partial], counts, 0.05)
    assert info.value.exit_code is ExitCode.partial
    assert (
        str(info.value) == "run bbbbbbbb (concurrency 2) partial: 3 of 20 failed (15% failed, over the 5% "
        "partial threshold)"
    )
    with pytest.raises(RunError) as info:
        check_runs([ok, partial, failed], counts, 0.05)
    assert info.value.exit_code is ExitCode.failed and str(info.value).startswith("run cccccccc (concurrency 2) failed")
    check_runs([ok, partial], counts, 0.2)  # a looser threshold


def _shape(
    run_id: str, mismatch: bool | None, isl: float | None, osl: float | None, note: str = ""
) -> dict[str, object]:
    return {
        "run_id": run_id,
        "shape_mismatch": mismatch,
        "isl_error": isl,
        "osl_error": osl,
        "shape_tolerance": 0.10,
        "shape_note": note,
    }


def test_a_shape_beyond_the_tolerance_exits_partial_with_the_tolerance_that_accepts_it() -> None:
    """Issue 41, item 5: "MISMATCH: input tokens asked 953, served 631 (-34%)" exited 0."""
    _, run = _run()
    a = run.model_copy(update={"run_id": "a" * 32, "status": RunStatus.ok, "error": None, "ignore_eos": True})
    b = a.model_copy(update={"run_id": "b" * 32, "concurrency": 4, "ignore_eos": False})
    note = "input tokens asked 953, served 631 (-34%): the tokenizer does not match the server's"
    check_shapes([a, b], [_shape(a.run_id, False, 0.02, -0.01), _shape(b.run_id, None, None, None)])  # within
    check_shapes([a], [])  # nothing asked
    with pytest.raises(RunError) as info:
        check_shapes([a, b], [_shape(a.run_id, True, -0.338, -0.05, note), _shape(b.run_id, True, 0.2, -0.6, "x")])
    assert info.value.exit_code is ExitCode.partial
    # b's output stopping short does not count without ignore_eos (max_tokens is a cap): 0.338 is the most off
    assert str(info.value) == (
        f"run aaaaaaaa (concurrency 2) served another shape than asked: {note}; 1 more run(s) like it; over the "
        "shape tolerance 0.10 (--shape-tolerance 0.34 accepts it)"
    )
