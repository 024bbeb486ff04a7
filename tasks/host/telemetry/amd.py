"""AMD GPUs through amdsmi (ROCm's Python bindings; rocm-smi was seen reporting 0-2 W on MI325X).

Units as amdsmi documents them (ROCm/amdsmi ``docs/how-to/using-amdsmi-for-python.md``, ``amdsmi.h``), converted
to the raw units of ``Reading``:
  amdsmi_get_energy_count     energy_accumulator x counter_resolution = microjoules  -> energy_mj (/ 1000)
  amdsmi_get_power_info       current_socket_power, else average_socket_power, W     -> power_mw (x 1000)
  amdsmi_get_gpu_activity     gfx_activity, percent                                  -> util_pct
  amdsmi_get_gpu_vram_usage   vram_used, MB of 2**20 bytes (bytes / 1024 / 1024)     -> mem_used_bytes
"N/A" (the interface's word for 0xFFFF) and an all-ones integer (newer libraries' "not supported") are no
reading, never a number. The ROCm release comes from ``amdsmi_get_rocm_version`` where the package has it
(older ones have none), else from /opt/rocm/.info/version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tcobench.schemas import GpuVendor, SamplerKind
from tcobench.tasks.host.telemetry.amd_smi import ROCM_VERSION_FILE, UNSUPPORTED, rocm_release
from tcobench.tasks.host.telemetry.base import Reading, Runner, Sampler, SamplerUnavailable, pick_devices, register

__all__ = ["AmdSmiSampler"]


def _number(value: Any) -> float | None:
    """amdsmi reports 'N/A' (a string), or an all-ones integer, for values a card does not support."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value in UNSUPPORTED:
        return None
    return float(value)


@register(SamplerKind.amd, "amdsmi")
class AmdSmiSampler(Sampler):
    def __init__(self, devices: tuple[int, ...] | None, runner: Runner | None = None) -> None:
        try:
            import amdsmi
        except ImportError as exc:
            raise SamplerUnavailable("amdsmi: the ROCm amdsmi Python package is not installed") from exc
        self.smi = amdsmi
        try:
            amdsmi.amdsmi_init()
            handles = amdsmi.amdsmi_get_processor_handles()
        except amdsmi.AmdSmiException as exc:
            raise SamplerUnavailable(f"amdsmi: cannot talk to the AMD driver ({exc})") from exc
        self.indices = pick_devices("amdsmi", len(handles), devices)
        self.handles = [handles[i] for i in self.indices]
        self.uuids = [self._try(lambda h=h: str(amdsmi.amdsmi_get_gpu_device_uuid(h))) for h in self.handles]

    def _try(self, call: Any) -> Any:
        try:
            return call()
        except (self.smi.AmdSmiException, KeyError, TypeError, ValueError):
            return None

    def _energy_mj(self, handle: Any) -> int | None:
        info = self._try(lambda: self.smi.amdsmi_get_energy_count(handle))
        if not info:
            return None
        acc, res = _number(info.get("energy_accumulator")), _number(info.get("counter_resolution"))
        return round(acc * res / 1000) if acc is not None and res is not None else None  # uJ -> mJ

    def _power_mw(self, handle: Any) -> int | None:
        info = self._try(lambda: self.smi.amdsmi_get_power_info(handle)) or {}
        watts = _number(info.get("current_socket_power"))
        watts = watts if watts is not None else _number(info.get("average_socket_power"))
        return round(watts * 1000) if watts is not None else None

    def read(self) -> list[Reading]:
        out = []
        for index, handle, uuid in zip(self.indices, self.handles, self.uuids, strict=True):
            activity = self._try(lambda h=handle: self.smi.amdsmi_get_gpu_activity(h)) or {}
            vram = self._try(lambda h=handle: self.smi.amdsmi_get_gpu_vram_usage(h)) or {}
            used_mb = _number(vram.get("vram_used"))
            out.append(
                Reading(
                    device_index=index,
                    device_uuid=uuid,
                    power_mw=self._power_mw(handle),
                    energy_mj=self._energy_mj(handle),
                    util_pct=_number(activity.get("gfx_activity")),
                    mem_used_bytes=round(used_mb * 1024 * 1024) if used_mb is not None else None,
                )
            )
        return out

    def describe(self) -> dict[str, Any]:
        first = self.handles[0]
        asic = self._try(lambda: self.smi.amdsmi_get_gpu_asic_info(first)) or {}
        driver = self._try(lambda: self.smi.amdsmi_get_gpu_driver_info(first)) or {}
        vbios = self._try(lambda: self.smi.amdsmi_get_gpu_vbios_info(first)) or {}
        return {
            "gpu_vendor": GpuVendor.amd,
            "gpu_name": asic.get("market_name"),
            "gpu_count": len(self.handles),
            "gpu_uuids": ",".join(u for u in self.uuids if u) or None,
            "driver_version": driver.get("driver_version"),
            "rocm_version": self._rocm_version(),
            "gpu_firmware": vbios.get("version") or None,
        }

    def _rocm_version(self) -> str | None:
        get = getattr(self.smi, "amdsmi_get_rocm_version", None)  # newer amdsmi: (found, version)
        found = self._try(get) if get is not None else None
        if isinstance(found, tuple):
            found = found[1] if len(found) == 2 and found[0] else None
        if found:
            return rocm_release(str(found))
        try:
            return rocm_release(Path(ROCM_VERSION_FILE).read_text("utf-8"))
        except OSError:
            return None

    def close(self) -> None:
        self._try(self.smi.amdsmi_shut_down)
