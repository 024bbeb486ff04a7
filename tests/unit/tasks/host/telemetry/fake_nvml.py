"""A stand-in for the `pynvml` module (nvidia-ml-py): no NVIDIA GPU exists on the build machines.

It implements the documented NVML calls tcobench uses, with their documented units (power mW, energy mJ
since driver load, memory bytes, clocks MHz), for two GPUs drawing a constant 250 W and 300 W.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

NVML_CLOCK_SM = 1
NVML_FI_DEV_POWER_INSTANT = 186
NVML_TEMPERATURE_GPU = 0
_T0 = time.monotonic()
_WATTS = [250.0, 300.0]
broken_fields: set[str] = set()


class NVMLError(Exception):
    pass


def _check(name: str) -> None:
    if name in broken_fields:
        raise NVMLError(f"{name}: Not Supported")


def nvmlInit() -> None: ...  # noqa: N802,E704
def nvmlShutdown() -> None: ...  # noqa: N802,E704
def nvmlDeviceGetCount() -> int:
    return 2  # noqa: N802,E704


def nvmlDeviceGetHandleByIndex(i: int) -> int:
    return i  # noqa: N802,E704


def nvmlDeviceGetUUID(h: int) -> str:
    return f"GPU-0000000{h}"  # noqa: N802,E704


def nvmlDeviceGetName(h: int) -> bytes:
    return b"NVIDIA H200"  # noqa: N802,E704


def nvmlSystemGetDriverVersion() -> str:
    return "580.159.04"  # noqa: N802,E704


def nvmlDeviceGetVbiosVersion(h: int) -> str:
    _check("vbios")
    return "96.00.89.00.01"  # noqa: N802,E704


def nvmlSystemGetCudaDriverVersion_v2() -> int:
    return 13000  # noqa: N802,E704


def nvmlDeviceGetEnforcedPowerLimit(h: int) -> int:
    return 700_000  # noqa: N802,E704


def nvmlDeviceGetMaxClockInfo(h: int, kind: int) -> int:
    return 1980  # noqa: N802,E704


def nvmlDeviceGetClockInfo(h: int, kind: int) -> int:
    return 1755  # noqa: N802,E704


def nvmlDeviceGetTemperature(h: int, kind: int) -> int:
    return 41  # noqa: N802,E704


def nvmlDeviceGetPowerUsage(h: int) -> int:  # noqa: N802
    _check("power")
    return int(_WATTS[h] * 1000)


def nvmlDeviceGetTotalEnergyConsumption(h: int) -> int:  # noqa: N802
    _check("energy")
    return int(1_000_000 + _WATTS[h] * (time.monotonic() - _T0) * 1000)


def nvmlDeviceGetUtilizationRates(h: int) -> SimpleNamespace:  # noqa: N802
    return SimpleNamespace(gpu=97, memory=40)


def nvmlDeviceGetMemoryInfo(h: int) -> SimpleNamespace:  # noqa: N802
    return SimpleNamespace(total=143_771 * 2**20, used=(8 + h) * 2**30, free=0)


def nvmlDeviceGetFieldValues(h: int, field_ids: list[int]) -> list[SimpleNamespace]:  # noqa: N802
    """Documented shape: one c_nvmlFieldValue_t per id (nvmlReturn, valueType, value union)."""
    if "instant" in broken_fields:
        return [
            SimpleNamespace(fieldId=f, nvmlReturn=3, valueType=1, value=SimpleNamespace(uiVal=0)) for f in field_ids
        ]
    watts = _WATTS[h] + 5.0  # the instantaneous reading differs from the 1 s average in this stand-in
    return [
        SimpleNamespace(fieldId=f, nvmlReturn=0, valueType=1, value=SimpleNamespace(uiVal=int(watts * 1000)))
        for f in field_ids
    ]
