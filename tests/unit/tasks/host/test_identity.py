from __future__ import annotations

import json
from typing import Any

import pytest

from tcobench.schemas import BenchmarkConfig, GpuSource, GpuVendor, HostFactsSource
from tcobench.tasks.engine import RunningEngine
from tcobench.tasks.engine.container import daemon_host_facts
from tcobench.tasks.host.identity import host_identity, reconcile
from tcobench.tasks.load.protocols import EngineInfo
from tcobench.tasks.load.record import MeasureResult
from tcobench.tasks.runs import describe_run, failed_run_record, finish_run
from tests.unit.factories import make_request, make_run

ENGINE_HOST, CLIENT = HostFactsSource.engine_host.value, HostFactsSource.client.value
DETECTED, DECLARED = GpuSource.detected.value, GpuSource.declared.value
NVIDIA_H200 = {"declared_vendor": GpuVendor.nvidia, "declared_gpu_model": "H200", "declared_gpu_count": 2}


def _config(engine: dict[str, Any], declared: dict[str, Any] | None = None) -> BenchmarkConfig:
    data: dict[str, Any] = {"engine": engine}
    if declared is not None:
        data["declared"] = declared
    return BenchmarkConfig.model_validate_json(json.dumps(data))  # strict models: JSON input, as a file


@pytest.mark.parametrize(
    ("engine", "source"),
    [
        ({"kind": "embedded"}, ENGINE_HOST),
        ({"kind": "endpoint", "url": "http://127.0.0.1:9"}, ENGINE_HOST),
        ({"kind": "endpoint", "url": "http://gpu-host.invalid:8000"}, CLIENT),  # not resolvable: elsewhere
        ({"kind": "container", "container": {"image": "x"}}, ENGINE_HOST),  # the local daemon
        ({"kind": "container", "container": {"image": "x", "docker_host": "ssh://u@gpu-host.invalid"}}, CLIENT),
    ],
)
def test_host_facts_say_where_they_were_read(engine: dict[str, Any], source: str) -> None:
    facts = host_identity(_config(engine))
    assert facts["host_facts_source"] == source and facts["host_cpu_count"] >= 1


def test_declared_hardware_fills_what_nothing_detected() -> None:
    run = reconcile(make_run(**NVIDIA_H200, gpu_count=0))  # the cpu sampler: no accelerator named
    assert (run.gpu_vendor, run.gpu_name, run.gpu_count, run.gpu_source) == (GpuVendor.nvidia, "H200", 2, DECLARED)
    assert run.identity_warning is None  # nothing detected is no disagreement


def test_detected_hardware_wins_and_agreement_is_quiet() -> None:
    run = reconcile(make_run(**NVIDIA_H200, gpu_vendor="nvidia", gpu_name="NVIDIA H200 NVL", gpu_count=2))
    assert (run.gpu_name, run.gpu_source, run.identity_warning) == ("NVIDIA H200 NVL", DETECTED, None)


def test_a_disagreement_is_a_warning_naming_each_difference() -> None:
    run = reconcile(make_run(**NVIDIA_H200, gpu_vendor="amd", gpu_name="AMD Instinct MI300X", gpu_count=8))
    assert run.gpu_source == DETECTED and run.gpu_vendor is GpuVendor.amd  # what was measured is what is stored
    warning = run.identity_warning or ""
    assert "vendor declared nvidia, detected amd" in warning
    assert "GPU model declared 'H200', detected 'AMD Instinct MI300X'" in warning
    assert "GPU count declared 2, detected 8" in warning


def test_a_cpu_host_without_declaration_stays_cpu() -> None:
    run = reconcile(make_run(gpu_count=0))
    assert (run.gpu_vendor, run.gpu_source, run.declared_vendor) == (None, None, None)


def test_runs_carry_label_and_declaration_from_describe_to_finish() -> None:
    config = _config(
        {"kind": "endpoint", "url": "http://127.0.0.1:9", "label": "vllm-main"},
        {"vendor": "amd", "gpu_model": "MI300X", "gpu_count": 1},
    )
    engine = RunningEngine("http://127.0.0.1:9", EngineInfo("openai-compatible", "unknown", None))
    run = describe_run(config, engine, "/v1/completions", "h", "b", 1)
    assert (run.engine_label, run.declared_vendor, run.declared_gpu_model, run.declared_gpu_count) == (
        "vllm-main",
        GpuVendor.amd,
        "MI300X",
        1,
    )
    done = finish_run(run, MeasureResult([], [make_request()], 1, 2), facts={"gpu_vendor": None, "gpu_count": 0})
    assert (done.gpu_vendor, done.gpu_name, done.gpu_source) == (GpuVendor.amd, "MI300X", DECLARED)
    failed = failed_run_record(config, "h", "b", "EngineError: down")
    assert (failed.gpu_source, failed.engine_label, failed.host_facts_source) == (DECLARED, "vllm-main", ENGINE_HOST)


class FakeDaemon:
    """The two calls daemon_host_facts makes, answered as Docker's API and a container's /proc/cpuinfo would."""

    def __init__(self, info: dict[str, Any] | Exception, cpuinfo: str | OSError) -> None:
        self.answer, self.cpuinfo = info, cpuinfo
        self.client = self

    def info(self) -> dict[str, Any]:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def exec_stdout(self, cmd: list[str]) -> str:
        assert cmd == ["cat", "/proc/cpuinfo"]
        if isinstance(self.cpuinfo, OSError):
            raise self.cpuinfo
        return self.cpuinfo


def test_a_remote_docker_host_describes_itself() -> None:
    info = {
        "OSType": "linux",
        "OperatingSystem": "Ubuntu 24.04.1 LTS",
        "KernelVersion": "6.8.0-45-generic",
        "Architecture": "x86_64",
        "NCPU": 192,
        "MemTotal": 2_164_000_000_000,
    }
    daemon = FakeDaemon(info, "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n")
    facts = daemon_host_facts(daemon)  # type: ignore[arg-type]
    assert facts == {
        "host_os": "Linux (Ubuntu 24.04.1 LTS)",
        "host_kernel": "6.8.0-45-generic",
        "host_arch": "x86_64",
        "host_cpu": "AMD EPYC 9654 96-Core Processor",
        "host_cpu_count": 192,
        "host_mem_bytes": 2_164_000_000_000,
        "host_facts_source": "docker-daemon",
    }
    config = _config({"kind": "container", "container": {"image": "x", "docker_host": "ssh://u@gpu-host.invalid"}})
    engine = RunningEngine("http://gpu-host.invalid:18000", EngineInfo("vllm", "0.9", None), host_facts=facts)
    row = host_identity(config, engine)
    assert row["host_cpu"] == "AMD EPYC 9654 96-Core Processor" and row["host_facts_source"] == "docker-daemon"
    assert row["python_version"]  # the client's Python: tcobench ran here
    no_cpu = daemon_host_facts(FakeDaemon(info, OSError("exec refused")))  # type: ignore[arg-type]
    assert no_cpu["host_cpu"] == "unknown (not readable in the engine container)"
    assert daemon_host_facts(FakeDaemon(OSError("daemon gone"), "")) == {}  # type: ignore[arg-type]
