"""Command-line samplers through real ``docker exec``: a running container from the base image holds stand-in
``amd-smi`` / ``nvidia-smi`` scripts printing the tools' documented output (no GPU exists here), and the
samplers reach them only through ``ContainerHandle.exec_stdout``, as for an engine on a remote Docker host.
"""

from __future__ import annotations

import importlib.util
import io
import tarfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tcobench.schemas import SamplerKind, TelemetryConfig
from tcobench.tasks.engine.container import ContainerHandle
from tcobench.tasks.host.docker_client import tcobench_labels
from tcobench.tasks.host.telemetry import open_sampler

pytestmark = pytest.mark.docker

_STANDINS = Path(__file__).parents[1] / "unit" / "tasks" / "host" / "telemetry" / "standins.py"


def _standins() -> ModuleType:
    """The unit tests' stand-in commands (one copy of the documented output for both suites)."""
    spec = importlib.util.spec_from_file_location("telemetry_standins", _STANDINS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tar(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(folder.iterdir()):
            tar.add(path, arcname=path.name)
    return buffer.getvalue()


@pytest.fixture
def handle(docker_api: Any, base_image: str, tmp_path: Path) -> Iterator[ContainerHandle]:
    """A running container (``sleep``) from the base image; always removed."""
    container = docker_api.containers.create(
        base_image, ["sleep", "300"], labels=tcobench_labels("test"), network_mode="host"
    )
    try:
        container.start()
        yield ContainerHandle(docker_api, container, tmp_path / "container.log", "test daemon", 1, local=False)
    finally:
        container.remove(force=True)


def _put(handle: ContainerHandle, folder: Path) -> None:
    assert handle.container.put_archive("/usr/local/bin", _tar(folder))


def _rocm_version_file(text: str) -> bytes:
    """A tar of opt/rocm/.info/version, as rocm-core installs it in every ROCm image."""
    buffer, data = io.BytesIO(), text.encode()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("opt/rocm/.info/version")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_auto_picks_amd_smi_inside_the_container(handle: ContainerHandle, tmp_path: Path) -> None:
    _put(handle, _standins().install(tmp_path / "bin"))
    assert handle.container.put_archive("/", _rocm_version_file("7.0.2-56\n"))
    sampler, note = open_sampler(TelemetryConfig(), handle.exec_stdout, remote=True)
    assert sampler is not None and note is None and sampler.source == "amd-smi"  # nvidia-smi: not in the container
    gpu0, gpu1 = sampler.read()
    assert (gpu0.power_mw, gpu0.energy_mj, gpu0.mem_used_bytes) == (712_000, 1_234_567_891, 182_345 * 2**20)
    assert gpu1.power_mw is None and gpu0.device_uuid == "5aff74a1-0000-1000-80c2-a3b1e2d4f6a1"
    facts = sampler.describe()
    assert facts["gpu_name"] == "AMD Instinct MI300X" and facts["gpu_power_limit_mw"] == 750_000
    assert facts["rocm_version"] == "7.0.2"
    assert facts["telemetry_note"] == (
        "power: amd-smi socket_power in the engine container; energy counter not reported for every GPU (integrated)"
    )  # GPU 1's energy is "N/A"
    log = handle.exec_stdout(["cat", "/usr/local/bin/calls.log"]).splitlines()
    assert log[0] == "list --json" and log[-1] == "metric -p -u -m -c -t -E --json"


def test_without_energy_flag_and_nvidia_first(handle: ContainerHandle, tmp_path: Path) -> None:
    folder = _standins().install(tmp_path / "bin", nvidia_smi=True)
    (folder / "no-energy").write_text("")  # amd-smi as on a VM guest: no -E, no -l
    _put(handle, folder)
    sampler, _ = open_sampler(TelemetryConfig(sampler=SamplerKind.amd_smi), handle.exec_stdout, remote=True)
    assert sampler is not None
    assert [(r.power_mw, r.energy_mj) for r in sampler.read()] == [(712_000, None), (None, None)]
    assert sampler.describe()["telemetry_note"].endswith("no energy counter (integrated)")
    assert sampler.describe()["rocm_version"] is None  # no /opt/rocm in this container
    sampler, _ = open_sampler(TelemetryConfig(), handle.exec_stdout, remote=True)
    assert sampler is not None and sampler.source == "nvidia-smi"  # auto: nvidia-smi comes first
    assert sampler.describe()["cuda_version"] == "13.0"  # from the banner, through docker exec


def test_no_command_in_the_container_says_why(handle: ContainerHandle) -> None:
    sampler, note = open_sampler(TelemetryConfig(), handle.exec_stdout, remote=True)
    assert sampler is None and note is not None
    assert note.startswith("no power source where the engine runs: nvidia-smi in the engine container: ")
    assert "; amd-smi in the engine container: " in note and handle.container.name in note
