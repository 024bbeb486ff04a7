"""The amd-smi sampler runs a real `amd-smi` command: here a stand-in script (``standins.AMD_SMI``) printing
amd-smi's documented JSON in both shapes (a list before amd-smi 26.x, ``{"gpu_data": [...]}`` from 26.x), since no
AMD GPU exists on build machines: these tests check the documented contract, not a GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcobench.schemas import SamplerKind, TelemetryConfig
from tcobench.tasks.host.telemetry import amd_smi, open_sampler
from tests.unit.tasks.host.telemetry.standins import install

MB = 2**20


@pytest.fixture
def standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """amd-smi on PATH, and an nvidia-smi that fails (as on an AMD host), whatever this machine has."""
    install(tmp_path)
    (tmp_path / "nvidia-smi").write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    (tmp_path / "nvidia-smi").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("AMD_SMI_SHAPE", raising=False)
    monkeypatch.delenv("AMD_SMI_NO_ENERGY", raising=False)
    return tmp_path


def calls(folder: Path) -> list[str]:
    return (folder / "calls.log").read_text().splitlines()


@pytest.mark.parametrize("shape", ["wrapped", "list"])
def test_readings_in_raw_units(standins: Path, monkeypatch: pytest.MonkeyPatch, shape: str) -> None:
    monkeypatch.setenv("AMD_SMI_SHAPE", shape)
    sampler, note = open_sampler(TelemetryConfig(sampler=SamplerKind.amd_smi))
    assert sampler is not None and note is None and sampler.source == "amd-smi"
    gpu0, gpu1 = sampler.read()
    assert (gpu0.device_index, gpu0.device_uuid) == (0, "5aff74a1-0000-1000-80c2-a3b1e2d4f6a1")
    assert gpu0.power_mw == 712_000 and gpu0.energy_mj == 1_234_567_891  # W -> mW; J (3 decimals) -> mJ
    assert gpu0.util_pct == 97.0 and gpu0.mem_used_bytes == 182_345 * MB and gpu0.sm_clock_mhz == 2100
    assert gpu0.temperature_c == 71.0  # MI300X: edge is "N/A", so the hotspot sensor
    assert gpu0.power_limit_mw == 750_000 and gpu1.power_limit_mw == 600_000
    # "N/A" (a value or a whole section) is no reading, never zero
    assert (gpu1.power_mw, gpu1.energy_mj, gpu1.util_pct, gpu1.mem_used_bytes, gpu1.sm_clock_mhz) == (None,) * 5
    assert gpu1.temperature_c == 40.0
    assert calls(standins) == [
        "list --json",
        "metric -p -u -m -c -t -E --json",
        "static -a -b -d -B -l --json",
        "metric -p -u -m -c -t -E --json",
    ]  # one metric call per sample


def test_describe(standins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    version = tmp_path / "version"
    version.write_text("6.4.1-83\n")  # what rocm-core writes to /opt/rocm/.info/version
    monkeypatch.setattr(amd_smi, "ROCM_VERSION_FILE", str(version))
    sampler, _ = open_sampler(TelemetryConfig(sampler=SamplerKind.amd_smi, devices=(0,)))
    assert sampler is not None
    assert sampler.describe() == {
        "gpu_vendor": "amd",
        "gpu_name": "AMD Instinct MI300X",
        "gpu_count": 1,
        "gpu_uuids": "5aff74a1-0000-1000-80c2-a3b1e2d4f6a1",
        "driver_version": "6.10.5",
        "rocm_version": "6.4.1",
        "gpu_power_limit_mw": 750_000,
        "gpu_max_sm_clock_mhz": 2100,
        "telemetry_note": "power: amd-smi socket_power on this host; energy: amd-smi total_energy_consumption counter",
    }
    sampler, _ = open_sampler(TelemetryConfig(sampler=SamplerKind.amd_smi))  # GPU 1's energy is "N/A"
    assert sampler is not None
    facts = sampler.describe()
    assert facts["gpu_count"] == 2 and facts["gpu_uuids"] == (
        "5aff74a1-0000-1000-80c2-a3b1e2d4f6a1,1bff74a1-0000-1000-8054-9ac7e1b2c3d4"
    )
    assert facts["telemetry_note"] == (
        "power: amd-smi socket_power on this host; energy counter not reported for every GPU (integrated)"
    )


def test_without_energy_flag_it_falls_back_and_says_so(standins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a VM guest amd-smi knows neither -E nor -l: the same flags without them, no counter, no power cap."""
    monkeypatch.setenv("AMD_SMI_NO_ENERGY", "1")
    sampler, note = open_sampler(TelemetryConfig(sampler=SamplerKind.amd_smi))
    assert sampler is not None and note is None
    gpu0, _ = sampler.read()
    assert gpu0.power_mw == 712_000 and gpu0.energy_mj is None and gpu0.power_limit_mw is None
    facts = sampler.describe()
    assert facts["telemetry_note"] == "power: amd-smi socket_power on this host; no energy counter (integrated)"
    assert facts["gpu_name"] == "AMD Instinct MI300X" and facts["gpu_power_limit_mw"] is None
    assert calls(standins)[-1] == "metric -p -u -m -c -t --json"


def test_device_selection(standins: Path) -> None:
    sampler, _ = open_sampler(TelemetryConfig(sampler=SamplerKind.amd_smi, devices=(1,)))
    assert sampler is not None
    assert [r.device_index for r in sampler.read()] == [1]
    assert calls(standins)[-1] == "metric -p -u -m -c -t -E --json -g 1"
    assert sampler.describe()["gpu_count"] == 1 and sampler.describe()["gpu_power_limit_mw"] == 600_000


def test_unknown_device_or_no_amd_smi_says_why(standins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sampler, note = open_sampler(TelemetryConfig(sampler=SamplerKind.amd_smi, devices=(0, 5)))
    assert sampler is None
    assert note == "no power source on this host: amd-smi on this host: GPUs [0, 1]; asked for [0, 5]"
    monkeypatch.setenv("PATH", "/nonexistent")
    sampler, note = open_sampler(TelemetryConfig(sampler=SamplerKind.amd_smi))
    assert sampler is None and note is not None and note.startswith("no power source on this host: amd-smi on this")
    assert "No such file or directory" in note


def test_output_without_json_is_unavailable(standins: Path) -> None:
    (standins / "amd-smi").write_text("#!/bin/sh\necho 'ERROR:root:Unable to detect any GPU devices'\nexit 0\n")
    sampler, note = open_sampler(TelemetryConfig(sampler=SamplerKind.amd_smi))
    assert sampler is None and note is not None
    assert "no JSON in amd-smi's output: 'ERROR:root:Unable to detect any GPU devices'" in note


def test_remote_engine_uses_the_runner_only(standins: Path) -> None:
    """auto for an engine on another host: nvidia-smi, then amd-smi, both inside the container (docker exec
    returns stdout and stderr together, so amd-smi's warnings come before the JSON)."""
    ran: list[list[str]] = []

    def in_container(cmd: list[str]) -> str:
        ran.append(cmd)
        done = subprocess.run([str(standins / cmd[0]), *cmd[1:]], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise OSError(f"{cmd[0]} in tcobench-x exited with {done.returncode}: {done.stderr.strip()[:200]}")
        return done.stderr + done.stdout

    sampler, note = open_sampler(TelemetryConfig(), in_container, remote=True)
    assert sampler is not None and sampler.source == "amd-smi" and note is None
    assert [r.power_mw for r in sampler.read()] == [712_000, None]
    assert [c[0] for c in ran] == ["nvidia-smi", "amd-smi", "amd-smi", "amd-smi", "amd-smi"]
    assert "in the engine container" in sampler.describe()["telemetry_note"]
    assert len(calls(standins)) == 4  # every run of the script came through the runner: none on this host

    def failing(cmd: list[str]) -> str:
        raise OSError(f"{cmd[0]} in tcobench-x exited with 127: not found")

    sampler, note = open_sampler(TelemetryConfig(), failing, remote=True)
    assert sampler is None and note == (
        "no power source where the engine runs: nvidia-smi in the engine container: nvidia-smi in tcobench-x exited "
        "with 127: not found; amd-smi in the engine container: amd-smi in tcobench-x exited with 127: not found"
    )


def test_auto_on_a_local_amd_host_without_amdsmi(standins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """auto for a local engine: NVML, amdsmi, nvidia-smi, then amd-smi (before RAPL)."""
    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    sampler, note = open_sampler(TelemetryConfig())
    assert sampler is not None and sampler.source == "amd-smi" and note is None
    monkeypatch.setenv("PATH", str(standins / "none"))
    monkeypatch.setenv("TCOBENCH_POWERCAP_ROOT", str(standins / "none"))
    sampler, note = open_sampler(TelemetryConfig())
    assert sampler is None and note is not None
    order = [note.index(s) for s in ("NVML", "amdsmi", "nvidia-smi on", "amd-smi on", "RAPL")]
    assert order == sorted(order)


@pytest.mark.parametrize(
    ("node", "units", "expected"),
    [
        ({"value": 712, "unit": "W"}, amd_smi._MW, 712_000.0),  # W -> mW
        ({"value": 712_000, "unit": "mW"}, amd_smi._MW, 712_000.0),
        ({"value": 1234567.891, "unit": "J"}, amd_smi._MJ, 1_234_567_891.0),  # J (3 decimals) -> mJ
        ({"value": 1.5, "unit": "kJ"}, amd_smi._MJ, 1_500_000.0),
        ({"value": 182_345, "unit": "MB"}, amd_smi._BYTES, 191_202_590_720.0),  # MB = 2**20 bytes
        ({"value": 3, "unit": "GB"}, amd_smi._BYTES, 3_221_225_472.0),  # 3 x 2**30
        (712, amd_smi._MW, 712_000.0),  # a bare number is in the field's documented unit (the first listed)
        ({"value": 712, "unit": "hp"}, amd_smi._MW, None),  # an unknown unit is no reading
        ({"value": 0xFFFFFFFF, "unit": "W"}, amd_smi._MW, None),  # all ones: "not supported"
        ({"value": "N/A", "unit": "W"}, amd_smi._MW, None),
        ({"value": True, "unit": "W"}, amd_smi._MW, None),
    ],
)
def test_unit_conversions(node: object, units: dict[str, float], expected: float | None) -> None:
    assert amd_smi._scaled(node, units) == expected
