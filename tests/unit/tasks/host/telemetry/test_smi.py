"""The nvidia-smi sampler runs a real `nvidia-smi` command: here a stand-in script (``standins.NVIDIA_SMI``) printing
nvidia-smi's documented CSV (--query-gpu ... --format=csv,noheader,nounits), since no NVIDIA GPU exists on build
machines."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tcobench.schemas import SamplerKind, TelemetryConfig
from tcobench.tasks.engine import RunningEngine
from tcobench.tasks.engine.endpoint import EndpointLauncher
from tcobench.tasks.host.telemetry import open_sampler
from tcobench.tasks.load.protocols import EngineInfo
from tests.unit.tasks.host.telemetry.standins import install


@pytest.fixture
def smi_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    install(tmp_path, amd_smi=False, nvidia_smi=True)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return tmp_path / "nvidia-smi"


def test_local_nvidia_smi(smi_path: Path) -> None:
    sampler, note = open_sampler(TelemetryConfig(sampler=SamplerKind.nvidia_smi))
    assert sampler is not None and note is None and sampler.source == "nvidia-smi"
    gpu0, gpu1 = sampler.read()
    assert (gpu0.device_index, gpu0.device_uuid, gpu0.power_mw, gpu0.mem_used_bytes) == (
        0,
        "GPU-aaaa",
        412_370,
        9216 * 2**20,
    )
    assert gpu0.sm_clock_mhz == 1980 and gpu0.power_limit_mw == 700_000 and gpu0.energy_mj is None
    assert gpu1.power_mw is None  # "[N/A]" is no reading, not zero
    facts = sampler.describe()
    assert facts["gpu_name"] == "NVIDIA H200" and facts["gpu_uuids"] == "GPU-aaaa,GPU-bbbb"
    assert facts["cuda_version"] == "13.0" and facts["driver_version"] == "580.159.04"
    assert facts["gpu_firmware"] == "96.00.89.00.01"  # the first GPU's VBIOS
    assert facts["telemetry_note"].startswith("power: nvidia-smi power.draw on this host")


def test_remote_engine_uses_the_runner_only(smi_path: Path) -> None:
    calls: list[list[str]] = []

    def in_container(cmd: list[str]) -> str:  # what `docker exec` gives: the command's stdout
        calls.append(cmd)
        return subprocess.run([str(smi_path), *cmd[1:]], capture_output=True, text=True, check=True).stdout

    sampler, note = open_sampler(TelemetryConfig(devices=(0,)), in_container, remote=True)
    assert sampler is not None and sampler.source == "nvidia-smi" and note is None
    assert [r.device_index for r in sampler.read()] == [0] and all(c[0] == "nvidia-smi" for c in calls)
    assert "in the engine container" in sampler.describe()["telemetry_note"]

    def failing(cmd: list[str]) -> str:
        raise OSError("nvidia-smi in tcobench-x exited with 127: not found")

    sampler, note = open_sampler(TelemetryConfig(), failing, remote=True)
    assert sampler is None and note is not None and note.startswith("no power source where the engine runs: nvidia-smi")


def test_remote_endpoint_is_not_measured_with_local_power() -> None:
    engine = RunningEngine("http://gpu-box.example:8080", EngineInfo("x", "y", None))
    runner, remote = EndpointLauncher().telemetry_access(engine)  # no traffic: only the URL is read
    assert runner is None and remote is True
    assert EndpointLauncher().telemetry_access(RunningEngine("http://127.0.0.1:1", EngineInfo("x", "y", None))) == (
        None,
        False,
    )
    sampler, note = open_sampler(TelemetryConfig(), runner, remote)
    assert sampler is None and note == "the engine runs on another host and offers no way to run a sampler there"
