from __future__ import annotations

from tcobench.schemas import BenchmarkConfig, RunRecord, RunStatus
from tcobench.tasks.engine import RunningEngine
from tcobench.tasks.measure import MeasureResult
from tcobench.tasks.protocols import EngineInfo
from tcobench.tasks.runs import config_hash, describe_run, finish_run, prompt_set_hash
from tests.unit.factories import make_request


def _run() -> tuple[BenchmarkConfig, RunRecord]:
    config = BenchmarkConfig()
    engine = RunningEngine("http://127.0.0.1:1", EngineInfo("llama.cpp", "b1", "abc"), settings={"parallel": 2})
    return config, describe_run(config, engine, "/v1/completions", "h", "batch", 2)


def test_describe_run_records_provenance() -> None:
    config, run = _run()
    assert run.status is RunStatus.failed and run.error == "run did not finish"  # until finish_run says so
    assert run.concurrency == 2 and run.engine_version == "b1" and run.model_digest == "abc"
    assert run.prompt_set_hash == prompt_set_hash(config.workload.prompts)
    assert run.config_hash == config_hash(config) and len(run.config_hash) == 64
    assert run.host_cpu_count >= 1 and run.host_kernel and run.tool_version
    assert run.engine_settings == '{"parallel": 2}' and run.engine_url == "http://127.0.0.1:1"


def test_extra_body_is_recorded_as_json() -> None:
    engine = RunningEngine("http://127.0.0.1:1", EngineInfo("llama.cpp", "b1", "abc"))
    config = BenchmarkConfig.model_validate_json('{"workload": {"extra_body": {"top_k": 1, "samplers": ["top_k"]}}}')
    assert (
        describe_run(config, engine, "/v1/completions", "h", "b", 1).extra_body == '{"samplers": ["top_k"], "top_k": 1}'
    )
    assert describe_run(BenchmarkConfig(), engine, "/v1/completions", "h", "b", 1).extra_body is None
    assert config_hash(config) != config_hash(BenchmarkConfig())


def test_hashes_change_with_content() -> None:
    assert prompt_set_hash(("a",)) != prompt_set_hash(("b",))
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
