"""AMD ROCm: ``/dev/kfd`` plus ``/dev/dri`` (or chosen render nodes), numeric groups, host IPC, shm."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tcobench.errors import EngineError
from tcobench.schemas import GpuConfig, GpuVendor
from tcobench.settings import user_name
from tcobench.tasks.host.gpu._host import group_name, pci_display_vendors, read_text, under, user_in_group
from tcobench.tasks.host.gpu.base import Check, CheckStatus, GpuOptions, Vendor, register

__all__ = ["AmdVendor"]

_PCI_VENDOR = "0x1002"


def _device_paths(gpu: GpuConfig) -> list[str]:
    return ["/dev/kfd", *(gpu.device_ids or ("/dev/dri",))]


def _render_nodes(root: Path) -> list[Path]:
    return sorted(under(root, "/dev/dri").glob("renderD*"))


def _device_gids(root: Path, paths: list[str]) -> list[int]:
    """Group ids owning the device files (render nodes expanded), in first-seen order."""
    files: list[Path] = []
    for path in paths:
        target = under(root, path)
        files.extend(_render_nodes(root) if path == "/dev/dri" else [target])
    gids: list[int] = []
    for file in files:
        try:
            gid = file.stat().st_gid
        except OSError:
            continue
        if gid not in gids and gid != 0:
            gids.append(gid)
    return gids


@register(GpuVendor.amd)
class AmdVendor(Vendor):
    def options(self, gpu: GpuConfig, local: bool, root: Path = Path("/")) -> GpuOptions:
        paths = _device_paths(gpu)
        groups = list(gpu.group_add) if gpu.group_add is not None else self._default_groups(root, paths, local)
        kwargs: dict[str, Any] = {
            "devices": [f"{p}:{p}:rwm" for p in paths],
            "group_add": [str(g) for g in groups],
            "shm_size": gpu.shm_size,
        }
        if gpu.ipc_host:
            kwargs["ipc_mode"] = "host"
        env = {"HSA_OVERRIDE_GFX_VERSION": gpu.hsa_override_gfx_version} if gpu.hsa_override_gfx_version else {}
        settings = {
            "vendor": "amd",
            "devices": paths,
            "group_add": groups,
            "ipc_mode": kwargs.get("ipc_mode"),
            "shm_size": gpu.shm_size,
        }
        return GpuOptions(create_kwargs=kwargs, environment=env, settings=settings)

    def _default_groups(self, root: Path, paths: list[str], local: bool) -> list[int]:
        if not local:
            raise EngineError(
                "AMD GPUs on a remote Docker host need engine.container.gpu.group_add: the numeric ids of the "
                "groups owning /dev/kfd and /dev/dri/renderD* on that host (`stat -c %g /dev/kfd`)"
            )
        gids = _device_gids(root, paths)
        if not gids:
            raise EngineError(
                f"cannot read the groups of {', '.join(paths)} on this host (missing devices?): run `tcobench doctor`,"
                " or set engine.container.gpu.group_add"
            )
        return gids

    def visible_command(self) -> list[str] | None:
        return ["sh", "-c", "test -e /dev/kfd && ls /dev/dri/renderD*"]

    def doctor_checks(self, root: Path, docker_info: Mapping[str, Any], local: bool) -> list[Check]:
        if not local:
            return [Check("AMD devices", CheckStatus.skip, "remote Docker host: run `tcobench doctor` on that host")]
        present = _PCI_VENDOR in pci_display_vendors(root) or under(root, "/sys/module/amdgpu").exists()
        if not present and not under(root, "/dev/kfd").exists():
            return [Check("AMD GPU", CheckStatus.skip, "no AMD GPU on this host")]
        return [self._kfd(root), self._dri(root), self._driver(root), self._groups(root)]

    def _kfd(self, root: Path) -> Check:
        kfd = under(root, "/dev/kfd")
        if kfd.exists():
            return Check("/dev/kfd", CheckStatus.ok, "present (ROCm compute interface)")
        if under(root, "/dev/dxg").exists():
            why = "WSL2 exposes /dev/dxg, not /dev/kfd: ROCm containers need a native Linux host (or ROCm's WSL stack)"
        elif under(root, "/sys/module/amdgpu").exists():
            why = "amdgpu is loaded but /dev/kfd is missing: kernel without HSA_AMD (KFD) or an unsupported card"
        else:
            why = "the amdgpu kernel module is not loaded: install amdgpu-dkms (or a kernel with amdgpu), check dmesg"
        return Check("/dev/kfd", CheckStatus.fail, why)

    def _dri(self, root: Path) -> Check:
        nodes = _render_nodes(root)
        if nodes:
            return Check("/dev/dri", CheckStatus.ok, f"render nodes: {', '.join('/dev/dri/' + n.name for n in nodes)}")
        return Check("/dev/dri", CheckStatus.fail, "no /dev/dri/renderD* node: the GPU has no render node for ROCm")

    def _driver(self, root: Path) -> Check:
        version = (read_text(root, "/sys/module/amdgpu/version") or "").strip()
        rocm = (read_text(root, "/opt/rocm/.info/version") or "").strip()
        parts = [f"amdgpu {version}" if version else "in-tree amdgpu (no version file)"]
        parts.append(f"ROCm {rocm} on the host" if rocm else "no host ROCm (the image brings its own)")
        parts.append("consumer cards may need gpu.hsa_override_gfx_version (HSA_OVERRIDE_GFX_VERSION)")
        return Check("AMD driver", CheckStatus.ok if version else CheckStatus.warn, "; ".join(parts))

    def _groups(self, root: Path) -> Check:
        gids = _device_gids(root, ["/dev/kfd", "/dev/dri"])
        if not gids:
            return Check("render group", CheckStatus.fail, "cannot read the groups of /dev/kfd and /dev/dri")
        named = ", ".join(f"{g} ({group_name(g)})" for g in gids)
        missing = [g for g in gids if not user_in_group(g)]
        if missing:
            names = ",".join(group_name(g) for g in missing)
            return Check(
                "render group",
                CheckStatus.fail,
                f"this user is not in {names}: `sudo usermod -aG {names} {user_name()}`, then log in again",
            )
        return Check("render group", CheckStatus.ok, f"containers get group_add {named}")
