"""NVIDIA GPUs through NVML (package nvidia-ml-py, imported as ``pynvml``).

Power: the instantaneous field ``NVML_FI_DEV_POWER_INSTANT`` (mW) where the GPU and driver offer it, else
``nvmlDeviceGetPowerUsage`` (mW; a 1 s moving average on Ampere and newer, which lags load changes and so
under-counts energy at the edges of a short window). Energy: ``nvmlDeviceGetTotalEnergyConsumption`` (mJ since
the driver loaded), the counter the ``energy`` view prefers. Run rows say which power reading was used.
"""

from __future__ import annotations

from typing import Any

from tcobench.schemas import GpuVendor, SamplerKind
from tcobench.tasks.host.telemetry.base import Reading, Runner, Sampler, SamplerUnavailable, pick_devices, register

__all__ = ["NvmlSampler"]


# nvmlValueType_t -> member of the c_nvmlValue_t union
_VALUE_MEMBERS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@register(SamplerKind.nvidia, "nvml")
class NvmlSampler(Sampler):
    def __init__(self, devices: tuple[int, ...] | None, runner: Runner | None = None) -> None:
        try:
            import pynvml
        except ImportError as exc:
            raise SamplerUnavailable("NVML: the nvidia-ml-py package is not installed") from exc
        self.nvml = pynvml
        try:
            pynvml.nvmlInit()
            count = pynvml.nvmlDeviceGetCount()
        except pynvml.NVMLError as exc:
            raise SamplerUnavailable(f"NVML: cannot talk to the NVIDIA driver ({exc})") from exc
        try:
            self.indices = pick_devices("NVML", count, devices)
        except SamplerUnavailable:
            pynvml.nvmlShutdown()
            raise
        self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in self.indices]
        self.uuids = [self._try(lambda h=h: _text(pynvml.nvmlDeviceGetUUID(h))) for h in self.handles]
        self.instant = all(self._instant_mw(h) is not None for h in self.handles)

    def _instant_mw(self, handle: Any) -> int | None:
        field = getattr(self.nvml, "NVML_FI_DEV_POWER_INSTANT", None)
        if field is None:
            return None
        values = self._try(lambda: self.nvml.nvmlDeviceGetFieldValues(handle, [field]))
        if not values or values[0].nvmlReturn != 0:
            return None
        member = _VALUE_MEMBERS.get(int(values[0].valueType))
        return int(getattr(values[0].value, member)) if member else None

    def _power_mw(self, handle: Any) -> int | None:
        if self.instant:
            return self._instant_mw(handle)
        power: int | None = self._try(lambda: int(self.nvml.nvmlDeviceGetPowerUsage(handle)))
        return power

    def _try(self, call: Any) -> Any:
        try:
            return call()
        except self.nvml.NVMLError:
            return None

    def read(self) -> list[Reading]:
        n = self.nvml
        out = []
        for index, handle, uuid in zip(self.indices, self.handles, self.uuids, strict=True):
            util = self._try(lambda h=handle: n.nvmlDeviceGetUtilizationRates(h))
            mem = self._try(lambda h=handle: n.nvmlDeviceGetMemoryInfo(h))
            out.append(
                Reading(
                    device_index=index,
                    device_uuid=uuid,
                    power_mw=self._power_mw(handle),
                    energy_mj=self._try(lambda h=handle: int(n.nvmlDeviceGetTotalEnergyConsumption(h))),
                    util_pct=float(util.gpu) if util is not None else None,
                    mem_used_bytes=int(mem.used) if mem is not None else None,
                    sm_clock_mhz=self._try(lambda h=handle: int(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM))),
                    temperature_c=self._try(
                        lambda h=handle: float(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU))
                    ),
                    power_limit_mw=self._try(lambda h=handle: int(n.nvmlDeviceGetEnforcedPowerLimit(h))),
                )
            )
        return out

    def describe(self) -> dict[str, Any]:
        n, first = self.nvml, self.handles[0]
        cuda = self._try(lambda: int(n.nvmlSystemGetCudaDriverVersion_v2()))
        return {
            "gpu_vendor": GpuVendor.nvidia,
            "gpu_name": self._try(lambda: _text(n.nvmlDeviceGetName(first))),
            "gpu_count": len(self.handles),
            "gpu_uuids": ",".join(u for u in self.uuids if u) or None,
            "driver_version": self._try(lambda: _text(n.nvmlSystemGetDriverVersion())),
            "cuda_version": f"{cuda // 1000}.{cuda % 1000 // 10}" if cuda else None,
            "gpu_firmware": self._try(lambda: _text(n.nvmlDeviceGetVbiosVersion(first))),
            "gpu_power_limit_mw": self._try(lambda: int(n.nvmlDeviceGetEnforcedPowerLimit(first))),
            "gpu_max_sm_clock_mhz": self._try(lambda: int(n.nvmlDeviceGetMaxClockInfo(first, n.NVML_CLOCK_SM))),
            "telemetry_note": "power: NVML instantaneous field (NVML_FI_DEV_POWER_INSTANT)"
            if self.instant
            else "power: NVML 1 s average (nvmlDeviceGetPowerUsage)",
        }

    def close(self) -> None:
        self._try(self.nvml.nvmlShutdown)
