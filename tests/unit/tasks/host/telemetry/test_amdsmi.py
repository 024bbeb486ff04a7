"""The amdsmi sampler (tasks/host/telemetry/amd.py) against amdsmi's documented Python interface and units, through a
stand-in module (fake_amdsmi.py; no AMD GPU exists on build machines). Every expected value is worked by hand."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcobench.schemas import GpuVendor, SamplerKind, TelemetryConfig
from tcobench.tasks.host.telemetry import amd, open_sampler
from tests.unit.tasks.host.telemetry import fake_amdsmi


@pytest.fixture
def amdsmi(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(sys.modules, "amdsmi", fake_amdsmi)
    fake_amdsmi.reset()
    yield
    fake_amdsmi.reset()


def _sampler() -> amd.AmdSmiSampler:
    sampler, note = open_sampler(TelemetryConfig(sampler=SamplerKind.amd))
    assert isinstance(sampler, amd.AmdSmiSampler) and note is None
    return sampler


def test_readings_in_raw_units(amdsmi: None) -> None:
    gpu0, gpu1 = _sampler().read()
    assert (gpu0.device_index, gpu0.device_uuid) == (0, "5aff74a1-0000-1000-80c2-a3b1e2d4f6a1")
    # 65 536 000 counts x 15.2587890625 uJ = 1 000 000 000 uJ = 1 000 000 mJ (1 000 J)
    assert gpu0.energy_mj == 1_000_000
    # current_socket_power 712 W = 712 000 mW (not the 705 W average)
    assert gpu0.power_mw == 712_000
    assert gpu0.util_pct == 97.0
    # vram_used 182 345 MB x 1 048 576 bytes = 182 345 000 000 + 182 345 x 48 576 = 191 202 590 720 bytes
    assert gpu0.mem_used_bytes == 191_202_590_720
    # GPU 1: current_socket_power "N/A" (0xFFFF): the 350 W average; activity "N/A" is no reading, not 0
    assert (gpu1.power_mw, gpu1.util_pct, gpu1.energy_mj, gpu1.mem_used_bytes) == (350_000, None, 0, 0)


def test_all_ones_is_unsupported_not_four_billion_watts(amdsmi: None) -> None:
    """Newer amdsmi sets an unsupported member to UINT32_MAX (amdsmi_power_info_t, ROCm 7.1 docs), which the
    interface of 2024 passes through as a number: it is no reading."""
    fake_amdsmi.CARDS[0]["power"]["current_socket_power"] = 0xFFFFFFFF
    fake_amdsmi.CARDS[0]["activity"]["gfx_activity"] = 0xFFFFFFFF
    gpu0, _ = _sampler().read()
    assert gpu0.power_mw == 705_000  # the average, in mW
    assert gpu0.util_pct is None


def test_unsupported_calls_are_none(amdsmi: None) -> None:
    fake_amdsmi.broken.update({"energy", "vram", "vbios"})  # e.g. a VM guest: no energy counter
    gpu0, _ = _sampler().read()
    assert gpu0.energy_mj is None and gpu0.mem_used_bytes is None and gpu0.power_mw == 712_000
    assert _sampler().describe()["gpu_firmware"] is None


def test_describe_without_amdsmi_get_rocm_version(
    amdsmi: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    version = tmp_path / "version"
    version.write_text("6.4.1-83\n")
    monkeypatch.setattr(amd, "ROCM_VERSION_FILE", str(version))
    facts = _sampler().describe()
    assert facts["gpu_vendor"] is GpuVendor.amd and facts["gpu_name"] == "AMD Instinct MI300X"
    assert facts["gpu_count"] == 2 and facts["driver_version"] == "6.10.5"
    assert facts["gpu_uuids"] == "5aff74a1-0000-1000-80c2-a3b1e2d4f6a1,5aff74a1-0000-1000-80c2-a3b1e2d4f6a2"
    assert facts["gpu_firmware"] == "022.040.003.042"
    assert facts["rocm_version"] == "6.4.1"  # the package of 2024 has no amdsmi_get_rocm_version: the file
    monkeypatch.setattr(fake_amdsmi, "amdsmi_get_rocm_version", lambda: (True, "7.0.2"), raising=False)
    assert _sampler().describe()["rocm_version"] == "7.0.2"


def test_no_amdsmi_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    sampler, note = open_sampler(TelemetryConfig(sampler=SamplerKind.amd))
    assert sampler is None and note is not None and "amdsmi" in note
