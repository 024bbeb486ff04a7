"""Samplers against their documented contracts: NVML through a stand-in module (no GPU here),
RAPL through a real powercap-shaped folder, and the session thread for real."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcobench.schemas import Phase, SamplerKind, TelemetryConfig
from tcobench.tasks.host.telemetry import open_sampler, start_telemetry, stop_telemetry
from tests.unit.tasks.host.telemetry import fake_nvml


@pytest.fixture
def nvml(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml)
    fake_nvml.broken_fields.clear()
    yield
    fake_nvml.broken_fields.clear()


def config(**kw: object) -> TelemetryConfig:
    return TelemetryConfig.model_validate({"hz": 50.0, "idle_s": 0.1, **kw})


def test_nvml_session_marks_phases_and_describes_devices(nvml: None) -> None:
    session = start_telemetry(config(sampler=SamplerKind.nvidia), "r1", "2026-11-30", "h")
    session.set_phase(Phase.warmup)
    time.sleep(0.1)
    session.set_phase(Phase.measure)
    time.sleep(0.2)
    rows = stop_telemetry(session)
    assert {r.phase for r in rows} == {"idle", "warmup", "measure"}
    assert {r.device_index for r in rows} == {0, 1} and {r.source for r in rows} == {"nvml"}
    gpu1 = [r for r in rows if r.device_index == 1]
    assert all(r.power_mw == 305_000 and r.mem_used_bytes == 9 * 2**30 for r in gpu1)  # the instantaneous field
    energies = [r.energy_mj for r in gpu1 if r.energy_mj is not None]
    assert len(energies) == len(gpu1)
    assert energies == sorted(energies) and energies[-1] > energies[0]
    facts = session.facts
    assert facts["gpu_name"] == "NVIDIA H200" and facts["gpu_count"] == 2 and facts["cuda_version"] == "13.0"
    assert facts["gpu_uuids"] == "GPU-00000000,GPU-00000001" and facts["telemetry_source"] == "nvml"
    assert facts["gpu_power_limit_mw"] == 700_000 and facts["gpu_firmware"] == "96.00.89.00.01"
    assert facts["telemetry_note"] == "power: NVML instantaneous field (NVML_FI_DEV_POWER_INSTANT)"


def test_unsupported_nvml_field_is_none_not_a_crash(nvml: None) -> None:
    fake_nvml.broken_fields.update({"energy", "instant"})  # no instantaneous field: the 1 s average is used
    sampler, note = open_sampler(config(sampler=SamplerKind.nvidia, devices=(1,)))
    assert sampler is not None and note is None
    (reading,) = sampler.read()
    assert reading.device_index == 1 and reading.energy_mj is None and reading.power_mw == 300_000
    assert sampler.describe()["telemetry_note"] == "power: NVML 1 s average (nvmlDeviceGetPowerUsage)"
    fake_nvml.broken_fields.add("vbios")  # a VBIOS NVML cannot read is no firmware, not a crash
    assert sampler.describe()["gpu_firmware"] is None


def test_no_power_source_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.setenv("TCOBENCH_POWERCAP_ROOT", str(tmp_path / "none"))
    session = start_telemetry(config(), "r1", "2026-11-30", "h")
    assert stop_telemetry(session) == []
    note = session.facts["telemetry_note"]
    assert note.startswith("no power source on this host:")
    assert "NVML" in note and "amdsmi" in note and "RAPL" in note


def test_rapl_counter_unwraps(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    zone = tmp_path / "intel-rapl:0"
    (tmp_path / "intel-rapl:0:0").mkdir(parents=True)  # a sub-zone: must be ignored
    zone.mkdir()
    (zone / "max_energy_range_uj").write_text("1000000\n")
    (zone / "energy_uj").write_text("900000\n")
    monkeypatch.setenv("TCOBENCH_POWERCAP_ROOT", str(tmp_path))
    sampler, _ = open_sampler(config(sampler=SamplerKind.cpu))
    assert sampler is not None
    assert [r.energy_mj for r in sampler.read()] == [900]
    (zone / "energy_uj").write_text("100000\n")  # wrapped past max_energy_range_uj
    assert [r.energy_mj for r in sampler.read()] == [1100]


def test_device_index_out_of_range_is_named(nvml: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sampler, note = open_sampler(config(sampler=SamplerKind.nvidia, devices=(0, 5)))
    assert (
        sampler is None and note == "no power source on this host: NVML: 2 device(s) visible; asked for indices [0, 5]"
    )
    zone = tmp_path / "intel-rapl:0"
    zone.mkdir()
    (zone / "max_energy_range_uj").write_text("1000\n")
    (zone / "energy_uj").write_text("1\n")
    monkeypatch.setenv("TCOBENCH_POWERCAP_ROOT", str(tmp_path))
    sampler, note = open_sampler(config(sampler=SamplerKind.cpu, devices=(1,)))
    assert sampler is None and note is not None and note.endswith("RAPL: 1 device(s) visible; asked for indices [1]")
