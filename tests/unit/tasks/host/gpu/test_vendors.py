"""GPU passthrough options and host checks, per vendor, on fake /proc, /sys and /dev trees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tcobench.errors import EngineError
from tcobench.schemas import GpuConfig, GpuVendor
from tcobench.tasks.host.gpu import CheckStatus, vendor_for

NVIDIA = vendor_for(GpuVendor.nvidia)
AMD = vendor_for(GpuVendor.amd)


def _touch(root: Path, path: str, text: str = "") -> Path:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, "utf-8")
    return target


def _pci(root: Path, vendor: str) -> None:
    _touch(root, "/sys/bus/pci/devices/0000:01:00.0/class", "0x030000\n")
    _touch(root, "/sys/bus/pci/devices/0000:01:00.0/vendor", f"{vendor}\n")


def test_nvidia_options_all_count_and_ids() -> None:
    every = NVIDIA.options(GpuConfig(vendor=GpuVendor.nvidia), local=True)
    (request,) = every.create_kwargs["device_requests"]
    assert request["Count"] == -1 and request["Capabilities"] == [["gpu"]]
    assert every.settings["gpus"] == "all" and "privileged" not in every.create_kwargs
    two = NVIDIA.options(GpuConfig(vendor=GpuVendor.nvidia, count=2), local=False)
    assert two.create_kwargs["device_requests"][0]["Count"] == 2
    ids = NVIDIA.options(GpuConfig(vendor=GpuVendor.nvidia, device_ids=("0", "GPU-abc")), local=True)
    assert ids.create_kwargs["device_requests"][0]["DeviceIDs"] == ["0", "GPU-abc"]
    assert every.environment["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility"


def test_amd_options_with_explicit_groups() -> None:
    gpu = GpuConfig(vendor=GpuVendor.amd, group_add=(44, 109), shm_size="2g", hsa_override_gfx_version="11.0.0")
    options = AMD.options(gpu, local=False)
    kwargs = options.create_kwargs
    assert kwargs["devices"] == ["/dev/kfd:/dev/kfd:rwm", "/dev/dri:/dev/dri:rwm"]
    assert kwargs["group_add"] == ["44", "109"] and kwargs["ipc_mode"] == "host" and kwargs["shm_size"] == "2g"
    assert options.environment == {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"} and "privileged" not in kwargs
    nodes = AMD.options(GpuConfig(vendor=GpuVendor.amd, device_ids=("/dev/dri/renderD129",), group_add=(7,)), True)
    assert nodes.create_kwargs["devices"] == ["/dev/kfd:/dev/kfd:rwm", "/dev/dri/renderD129:/dev/dri/renderD129:rwm"]


def test_amd_groups_read_from_the_devices(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give the fake device files other groups")
    for path, gid in (("/dev/kfd", 4242), ("/dev/dri/renderD128", 4343), ("/dev/dri/renderD129", 4343)):
        os.chown(_touch(tmp_path, path), 0, gid)
    options = AMD.options(GpuConfig(vendor=GpuVendor.amd), local=True, root=tmp_path)
    assert options.create_kwargs["group_add"] == ["4242", "4343"]


def test_amd_groups_needed_for_remote_or_missing_devices(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="group_add"):
        AMD.options(GpuConfig(vendor=GpuVendor.amd), local=False)
    with pytest.raises(EngineError, match="tcobench doctor"):
        AMD.options(GpuConfig(vendor=GpuVendor.amd), local=True, root=tmp_path)


def test_nvidia_checks(tmp_path: Path) -> None:
    assert [c.status for c in NVIDIA.doctor_checks(tmp_path, {}, True)] == [CheckStatus.skip, CheckStatus.skip]
    _pci(tmp_path, "0x10de")
    driver, runtime = NVIDIA.doctor_checks(tmp_path, {"Runtimes": {"runc": {}}}, True)
    assert driver.status is CheckStatus.fail and "DKMS" in driver.message
    assert runtime.status is CheckStatus.fail and "nvidia-ctk runtime configure" in runtime.message
    _touch(tmp_path, "/sys/module/nouveau/refcnt", "1")
    assert "nouveau" in NVIDIA.doctor_checks(tmp_path, {}, True)[0].message
    version = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Sat Oct 4 2025\nGCC version: gcc 12\n"
    _touch(tmp_path, "/proc/driver/nvidia/version", version)
    driver, runtime = NVIDIA.doctor_checks(tmp_path, {"Runtimes": {"nvidia": {}, "runc": {}}}, True)
    assert driver.status is CheckStatus.ok and "580.159.04" in driver.message
    assert runtime.status is CheckStatus.ok
    (remote,) = NVIDIA.doctor_checks(tmp_path, {"Runtimes": {"runc": {}}}, False)
    assert remote.name == "NVIDIA container runtime" and remote.status is CheckStatus.warn
    assert "if that host has NVIDIA GPUs" in remote.message


def test_amd_checks(tmp_path: Path) -> None:
    assert [c.status for c in AMD.doctor_checks(tmp_path, {}, True)] == [CheckStatus.skip]
    _pci(tmp_path, "0x1002")
    _touch(tmp_path, "/dev/dxg")
    kfd, dri, driver, groups = AMD.doctor_checks(tmp_path, {}, True)
    assert kfd.status is CheckStatus.fail and "WSL2" in kfd.message
    assert dri.status is CheckStatus.fail and groups.status is CheckStatus.fail
    (tmp_path / "dev/dxg").unlink()
    _touch(tmp_path, "/sys/module/amdgpu/refcnt", "1")
    assert "HSA_AMD" in AMD.doctor_checks(tmp_path, {}, True)[0].message
    _touch(tmp_path, "/dev/kfd")
    _touch(tmp_path, "/dev/dri/renderD128")
    _touch(tmp_path, "/sys/module/amdgpu/version", "6.10.5\n")
    kfd, dri, driver, _ = AMD.doctor_checks(tmp_path, {}, True)
    assert kfd.status is CheckStatus.ok and dri.status is CheckStatus.ok and "/dev/dri/renderD128" in dri.message
    assert driver.status is CheckStatus.ok and "amdgpu 6.10.5" in driver.message
    assert "HSA_OVERRIDE_GFX_VERSION" in driver.message
    (remote,) = AMD.doctor_checks(tmp_path, {}, False)
    assert remote.status is CheckStatus.skip and "on that host" in remote.message
