"""A stand-in for ROCm's ``amdsmi`` Python package: no AMD GPU exists on the build machines.

It implements the calls tasks/host/telemetry/amd.py makes, with the names, shapes and units of amdsmi's documented
Python interface (ROCm/amdsmi ``docs/how-to/using-amdsmi-for-python.md`` and ``py-interface/amdsmi_interface.py``
at commit 0ceca28, October 2024):

- ``amdsmi_get_energy_count`` -> {"power" (deprecated), "energy_accumulator", "counter_resolution" (float, micro-
  joules per count: "energy_accumulator * counter_resolution = total_energy_consumption in micro-Joules"),
  "timestamp" (ns)};
- ``amdsmi_get_power_info`` -> {"current_socket_power", "average_socket_power" (W, amdsmi.h and amd-smi's own
  ``power_unit = "W"``), "gfx_voltage", "soc_voltage", "mem_voltage" (mV), "power_limit"}; a field equal to
  0xFFFF becomes "N/A" (the interface's own check);
- ``amdsmi_get_gpu_activity`` -> {"gfx_activity", "umc_activity", "mm_activity"} in percent, or "N/A";
- ``amdsmi_get_gpu_vram_usage`` -> {"vram_total", "vram_used"} in MB of 2**20 bytes (amd_smi.cc divides bytes
  by 1024 * 1024; amd-smi prints them with unit "MB");
- ``amdsmi_get_gpu_asic_info`` (market_name ...), ``amdsmi_get_gpu_driver_info`` (driver_version ...),
  ``amdsmi_get_gpu_vbios_info`` -> {"name", "build_date", "part_number", "version"} (strings),
  ``amdsmi_get_gpu_device_uuid``; no ``amdsmi_get_rocm_version``: the interface of that date has none.

``CARDS`` holds what each GPU reports; a test edits it (and ``broken``) before opening a sampler.
"""

from __future__ import annotations

from typing import Any

CARDS: list[dict[str, Any]] = []
broken: set[str] = set()  # calls that raise AmdSmiLibraryException ("not supported")


class AmdSmiException(Exception):  # noqa: N818 - amdsmi's own name
    pass


class AmdSmiLibraryException(AmdSmiException):
    pass


def reset() -> None:
    """Two MI300X-like GPUs: one reporting everything, one whose power and activity are not supported."""
    broken.clear()
    CARDS[:] = [
        {
            "uuid": "5aff74a1-0000-1000-80c2-a3b1e2d4f6a1",
            "market_name": "AMD Instinct MI300X",
            # 65 536 000 counts x 15.2587890625 uJ (1/65 536 J) = 1e9 uJ = 1 000 J
            "energy": {
                "power": 65_536_000,
                "energy_accumulator": 65_536_000,
                "counter_resolution": 15.2587890625,
                "timestamp": 1_700_000_000_000_000_000,
            },
            "power": {
                "current_socket_power": 712,
                "average_socket_power": 705,
                "gfx_voltage": 800,
                "soc_voltage": 900,
                "mem_voltage": 1100,
                "power_limit": 750,
            },
            "activity": {"gfx_activity": 97, "umc_activity": 40, "mm_activity": 0},
            "vram": {"vram_total": 196_592, "vram_used": 182_345},
        },
        {
            "uuid": "5aff74a1-0000-1000-80c2-a3b1e2d4f6a2",
            "market_name": "AMD Instinct MI300X",
            "energy": {"power": 0, "energy_accumulator": 0, "counter_resolution": 15.2587890625, "timestamp": 0},
            # current_socket_power unsupported (0xFFFF, shown as "N/A"): the average is the reading
            "power": {
                "current_socket_power": 0xFFFF,
                "average_socket_power": 350,
                "gfx_voltage": 0xFFFF,
                "soc_voltage": 0xFFFF,
                "mem_voltage": 0xFFFF,
                "power_limit": 750,
            },
            "activity": {"gfx_activity": "N/A", "umc_activity": "N/A", "mm_activity": "N/A"},
            "vram": {"vram_total": 196_592, "vram_used": 0},
        },
    ]


def _call(name: str, handle: int) -> dict[str, Any]:
    if name in broken:
        raise AmdSmiLibraryException(f"{name}: AMDSMI_STATUS_NOT_SUPPORTED")
    return CARDS[handle]


def amdsmi_init(*_flags: int) -> None: ...
def amdsmi_shut_down() -> None: ...


def amdsmi_get_processor_handles() -> list[int]:
    return list(range(len(CARDS)))


def amdsmi_get_gpu_device_uuid(handle: int) -> str:
    return str(_call("uuid", handle)["uuid"])


def amdsmi_get_energy_count(handle: int) -> dict[str, Any]:
    return dict(_call("energy", handle)["energy"])


def amdsmi_get_power_info(handle: int) -> dict[str, Any]:
    info = dict(_call("power", handle)["power"])
    return {k: "N/A" if v == 0xFFFF else v for k, v in info.items()}


def amdsmi_get_gpu_activity(handle: int) -> dict[str, Any]:
    return dict(_call("activity", handle)["activity"])


def amdsmi_get_gpu_vram_usage(handle: int) -> dict[str, Any]:
    return dict(_call("vram", handle)["vram"])


def amdsmi_get_gpu_asic_info(handle: int) -> dict[str, Any]:
    return {"market_name": _call("asic", handle)["market_name"], "vendor_id": 0x1002, "device_id": 0x74A1}


def amdsmi_get_gpu_vbios_info(handle: int) -> dict[str, Any]:
    _call("vbios", handle)
    return {
        "name": "MI300X",
        "build_date": "2024/05/20 10:00",
        "part_number": "113-M3000100-102",
        "version": "022.040.003.042",
    }


def amdsmi_get_gpu_driver_info(handle: int) -> dict[str, Any]:
    _call("driver", handle)
    return {"driver_name": "amdgpu", "driver_version": "6.10.5", "driver_date": "2015/01/01 00:00"}
