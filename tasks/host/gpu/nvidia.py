"""NVIDIA: ``DeviceRequest(capabilities=[["gpu"]])`` with a count or device ids; driver and toolkit checks."""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docker.types import DeviceRequest

from tcobench.schemas import GpuConfig, GpuVendor
from tcobench.tasks.host.gpu._host import pci_display_vendors, read_text, under
from tcobench.tasks.host.gpu.base import Check, CheckStatus, GpuOptions, Vendor, register

__all__ = ["NvidiaVendor"]

_PCI_VENDOR = "0x10de"
_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)")


def _driver_version(root: Path) -> str | None:
    text = read_text(root, "/proc/driver/nvidia/version")
    match = _VERSION.search(text or "")
    return match.group(1) if match else None


def _secure_boot_on(root: Path) -> bool:
    for var in under(root, "/sys/firmware/efi/efivars").glob("SecureBoot-*"):
        try:
            data = var.read_bytes()
        except OSError:
            continue
        return bool(data) and data[-1] == 1
    return False


def _no_driver_reason(root: Path) -> str:
    if under(root, "/sys/module/nouveau").exists():
        return "the nouveau driver is loaded and holds the GPU: blacklist nouveau, rebuild the initramfs, reboot"
    if _secure_boot_on(root):
        return "Secure Boot is on and blocks the unsigned nvidia module: enrol its key (MOK) or turn Secure Boot off"
    return (
        "the nvidia kernel module is not loaded (nvidia-smi cannot talk to the driver); after a kernel update "
        "DKMS may not have rebuilt it: check `dkms status`, reinstall the driver, or `modprobe nvidia`"
    )


@register(GpuVendor.nvidia)
class NvidiaVendor(Vendor):
    def options(self, gpu: GpuConfig, local: bool, root: Path = Path("/")) -> GpuOptions:
        if gpu.device_ids:
            request = DeviceRequest(device_ids=list(gpu.device_ids), capabilities=[["gpu"]])
            chosen: Any = list(gpu.device_ids)
        else:
            count = -1 if gpu.count is None else gpu.count
            request = DeviceRequest(count=count, capabilities=[["gpu"]])
            chosen = "all" if count == -1 else count
        env = {"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}  # utility: nvidia-smi inside the container
        return GpuOptions(
            create_kwargs={"device_requests": [request]},
            environment=env,
            settings={"vendor": "nvidia", "gpus": chosen, "capabilities": [["gpu"]]},
        )

    def visible_command(self) -> list[str] | None:
        return ["nvidia-smi", "-L"]

    def doctor_checks(self, root: Path, docker_info: Mapping[str, Any], local: bool) -> list[Check]:
        checks = [self._runtime(root, docker_info, local)]
        if local:
            checks.insert(0, self._driver(root))
        return checks

    def _driver(self, root: Path) -> Check:
        version = _driver_version(root)
        if version:
            return Check("NVIDIA driver", CheckStatus.ok, f"kernel module {version} loaded")
        if _PCI_VENDOR not in pci_display_vendors(root) and not under(root, "/dev/nvidia0").exists():
            return Check("NVIDIA driver", CheckStatus.skip, "no NVIDIA GPU on this host")
        return Check("NVIDIA driver", CheckStatus.fail, _no_driver_reason(root))

    def _runtime(self, root: Path, docker_info: Mapping[str, Any], local: bool) -> Check:
        runtimes = sorted((docker_info.get("Runtimes") or {}).keys())
        if "nvidia" in runtimes:
            return Check("NVIDIA container runtime", CheckStatus.ok, "the daemon lists runtime 'nvidia'")
        cdi = [p for p in ("/etc/cdi/nvidia.yaml", "/var/run/cdi/nvidia.yaml") if under(root, p).exists()]
        if local and (cdi or shutil.which("nvidia-container-runtime-hook")):
            return Check("NVIDIA container runtime", CheckStatus.ok, "nvidia-container-toolkit is installed")
        fix = (
            f"the daemon has no 'nvidia' runtime (runtimes: {', '.join(runtimes) or 'none'}): install "
            "nvidia-container-toolkit, run `nvidia-ctk runtime configure --runtime=docker` and restart dockerd"
        )
        if not local:
            return Check("NVIDIA container runtime", CheckStatus.warn, f"if that host has NVIDIA GPUs, {fix}")
        if _driver_version(root) or _PCI_VENDOR in pci_display_vendors(root):
            return Check("NVIDIA container runtime", CheckStatus.fail, fix)
        return Check("NVIDIA container runtime", CheckStatus.skip, "no NVIDIA GPU on this host")
