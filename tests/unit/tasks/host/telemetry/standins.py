"""Stand-in ``nvidia-smi`` and ``amd-smi`` commands (shell scripts) printing the tools' documented output: no
GPU exists on build machines, so the tests check the documented contracts.

``nvidia-smi``: the CSV of ``--query-gpu=... --format=csv,noheader,nounits`` (NVIDIA's nvidia-smi documentation),
and without arguments the banner whose first row names the driver's CUDA version.

``amd-smi``: JSON files, built the way ROCm/amdsmi's ``amdsmi_cli/amdsmi_commands.py`` builds them (``list``,
``static_gpu``, ``metric_gpu``: keys, units and "N/A" defaults) and printed the way ``amdsmi_logger.py`` prints
them: a JSON list of per-GPU objects (amd-smi before 26.x, i.e. ROCm 6.x) or that list under ``"gpu_data"``
(``combine_arrays_to_json``; amd-smi 26.x, ROCm 7, see https://github.com/ROCm/rocm-systems/pull/223).
``usage`` and ``energy`` as a bare "N/A" are the commands' own fallbacks (also seen in
https://github.com/ROCm/rocm-systems/pull/2720). Values are invented; shapes and units are not.

The amd-smi script logs each call's arguments to ``calls.log`` beside it and prints a Python warning on stderr
first (as amd-smi 26.x does on Python 3.14). ``AMD_SMI_SHAPE`` picks ``wrapped`` (default) or ``list``;
``AMD_SMI_NO_ENERGY=1``, or a file ``no-energy`` beside the script (for ``docker exec``, which passes no such
variable), makes ``-E`` and ``-l`` unknown flags, as on a VM guest, where amd-smi's parser never registers them.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

__all__ = ["AMD_SMI", "NVIDIA_SMI", "install"]

NVIDIA_SMI = """#!/bin/sh
case "$1" in
  --query-gpu=index,uuid,power.draw,*)
    echo "0, GPU-aaaa, 412.37, 97, 9216, 1980, 55, 700.00"
    echo "1, GPU-bbbb, [N/A], 0, 512, 345, 31, 700.00" ;;
  --query-gpu=index,uuid,name,*)
    echo "0, GPU-aaaa, NVIDIA H200, 580.159.04, 700.00, 1980, 96.00.89.00.01"
    echo "1, GPU-bbbb, NVIDIA H200, 580.159.04, 700.00, 1980, [N/A]" ;;
  "")  # no arguments: the banner above the device table
    echo "+-----------------------------------------------------------------------------------------+"
    echo "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |"
    echo "+-----------------------------------------+------------------------+----------------------+" ;;
  *) echo "unexpected $*" >&2; exit 2 ;;
esac
"""

NA = "N/A"


def _v(value: float, unit: str) -> dict[str, Any]:
    return {"value": value, "unit": unit}


def _clock(clk: Any, lo: int, hi: int) -> dict[str, Any]:
    return {
        "clk": clk,
        "min_clk": _v(lo, "MHz"),
        "max_clk": _v(hi, "MHz"),
        "clk_locked": "DISABLED",
        "deep_sleep": "DISABLED",
    }


def _mem(used_mb: Any, total_mb: int) -> dict[str, Any]:
    used = used_mb if used_mb == NA else _v(used_mb, "MB")
    free = NA if used_mb == NA else _v(total_mb - used_mb, "MB")
    return {
        "total_vram": _v(total_mb, "MB"),
        "used_vram": used,
        "free_vram": free,
        "total_visible_vram": _v(total_mb, "MB"),
        "used_visible_vram": used,
        "free_visible_vram": free,
        "total_gtt": _v(257_000, "MB"),
        "used_gtt": _v(12, "MB"),
        "free_gtt": _v(256_988, "MB"),
    }


# amd-smi list --json (bdf, uuid, kfd_id, node_id, partition_id per GPU)
LIST = [
    {
        "gpu": 0,
        "bdf": "0000:0c:00.0",
        "uuid": "5aff74a1-0000-1000-80c2-a3b1e2d4f6a1",
        "kfd_id": 45412,
        "node_id": 2,
        "partition_id": 0,
    },
    {
        "gpu": 1,
        "bdf": "0000:22:00.0",
        "uuid": "1bff74a1-0000-1000-8054-9ac7e1b2c3d4",
        "kfd_id": 38915,
        "node_id": 3,
        "partition_id": 0,
    },
]

# amd-smi metric -p -u -m -c -t -E --json: GPU 0 under load (MI300X: no edge sensor), GPU 1 mostly unsupported
METRIC = [
    {
        "gpu": 0,
        "usage": {
            "gfx_activity": _v(97, "%"),
            "umc_activity": _v(41, "%"),
            "mm_activity": NA,
            "vcn_activity": [_v(0, "%"), NA, NA, NA],
            "jpeg_activity": [_v(0, "%"), NA, NA, NA],
            "gfx_busy_inst": NA,
            "jpeg_busy": NA,
            "vcn_busy": NA,
        },
        "power": {
            "socket_power": _v(712, "W"),
            "gfx_voltage": NA,
            "soc_voltage": NA,
            "mem_voltage": NA,
            "throttle_status": "UNTHROTTLED",
            "power_management": "ENABLED",
        },
        "clock": {
            "gfx_0": _clock(_v(2100, "MHz"), 500, 2100),
            "gfx_1": _clock(_v(2098, "MHz"), 500, 2100),
            "mem_0": _clock(_v(1300, "MHz"), 900, 1300),
            "vclk_0": _clock(NA, 0, 0),
            "fclk_0": _clock(_v(2000, "MHz"), 1200, 2000),
            "socclk_0": _clock(_v(1143, "MHz"), 28, 1143),
        },
        "temperature": {"edge": NA, "hotspot": _v(71, "C"), "mem": _v(58, "C")},
        "energy": {"total_energy_consumption": _v(1234567.891, "J")},
        "mem_usage": _mem(182_345, 196_592),
    },
    {
        "gpu": 1,
        "usage": NA,
        "power": {
            "socket_power": NA,
            "gfx_voltage": NA,
            "soc_voltage": NA,
            "mem_voltage": NA,
            "throttle_status": NA,
            "power_management": NA,
        },
        "clock": {"gfx_0": _clock(NA, 500, 2100), "mem_0": _clock(NA, 900, 1300)},
        "temperature": {"edge": _v(40, "C"), "hotspot": _v(44, "C"), "mem": NA},
        "energy": NA,
        "mem_usage": _mem(NA, 196_592),
    },
]


def _limit_7x(cap_w: int) -> dict[str, Any]:
    ppt0 = {"max_power_limit": _v(750, "W"), "min_power_limit": _v(0, "W"), "socket_power_limit": _v(cap_w, "W")}
    ppt1 = {"max_power_limit": NA, "min_power_limit": NA, "socket_power_limit": NA}
    return {
        "ppt0": ppt0,
        "ppt1": ppt1,
        "slowdown_edge_temperature": NA,
        "slowdown_hotspot_temperature": _v(100, "C"),
        "slowdown_vram_temperature": _v(105, "C"),
        "shutdown_edge_temperature": NA,
        "shutdown_hotspot_temperature": _v(110, "C"),
        "shutdown_vram_temperature": _v(115, "C"),
    }


def _limit_6x(cap_w: int) -> dict[str, Any]:
    return {
        "max_power": _v(750, "W"),
        "min_power": _v(0, "W"),
        "socket_power": _v(cap_w, "W"),
        "slowdown_edge_temperature": NA,
        "slowdown_hotspot_temperature": _v(100, "C"),
        "slowdown_vram_temperature": _v(105, "C"),
        "shutdown_edge_temperature": NA,
        "shutdown_hotspot_temperature": _v(110, "C"),
        "shutdown_vram_temperature": _v(115, "C"),
    }


def _static(gpu: int, bdf: str, limit: dict[str, Any] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "gpu": gpu,
        "asic": {
            "market_name": "AMD Instinct MI300X",
            "vendor_id": "0x1002",
            "vendor_name": "Advanced Micro Devices Inc. [AMD/ATI]",
            "subvendor_id": "0x1002",
            "device_id": "0x74a1",
            "subsystem_id": "0x74a1",
            "rev_id": "0x00",
            "asic_serial": "0x8C1D2E3F4A5B6C7D",
            "oam_id": gpu,
            "num_compute_units": 304,
            "target_graphics_version": "gfx942",
        },
        "bus": {
            "bdf": bdf,
            "max_pcie_width": 16,
            "max_pcie_speed": _v(32, "GT/s"),
            "pcie_interface_version": "Gen 5",
            "slot_type": "OAM",
        },
        "driver": {"name": "amdgpu", "version": "6.10.5"},
        "board": {
            "model_number": "102-G30211-00",
            "product_serial": "692251001124",
            "fru_id": NA,
            "product_name": "AMD Instinct MI300X OAM",
            "manufacturer_name": "AMD",
        },
    }
    if limit is not None:
        entry["limit"] = limit
    return entry


def _documents(shape: str, energy: bool) -> dict[str, Any]:
    """The files the script prints, keyed by name: list/static/metric for one shape, with or without -E/-l."""
    metric = [m if energy else {k: v for k, v in m.items() if k != "energy"} for m in METRIC]
    limit = _limit_7x if shape == "wrapped" else _limit_6x
    static = [
        _static(0, "0000:0c:00.0", limit(750) if energy else None),
        _static(1, "0000:22:00.0", limit(600) if energy else None),
    ]
    if shape == "wrapped":
        return {"list": {"gpu_data": LIST}, "static": {"gpu_data": static}, "metric": {"gpu_data": metric}}
    return {"list": LIST, "static": static, "metric": metric}


AMD_SMI = r"""#!/bin/sh
here=$(dirname "$0")
echo "$*" >> "$here/calls.log"
shape=${AMD_SMI_SHAPE:-wrapped}
full=full
if [ -n "$AMD_SMI_NO_ENERGY" ] || [ -e "$here/no-energy" ]; then full=reduced; fi
for arg in "$@"; do
  case "$arg" in
    -E|-l) if [ "$full" = reduced ]; then
             echo "usage: amd-smi $1 [-h] ..." >&2
             echo "amd-smi $1: error: unrecognized arguments: $arg" >&2
             exit 2
           fi ;;
  esac
done
case "$1" in
  list|static|metric)
    # amd-smi 26.x on Python 3.14 prints a SyntaxWarning (stderr) before the JSON
    echo "/usr/lib/python3/site-packages/amdsmi/amdsmi_interface.py:3569: SyntaxWarning: 'return' in a" \
      "'finally' block" >&2
    cat "$here/$1-$shape-$full.json" ;;
  "")  # no arguments: the banner above the device table
    echo "+-----------------------------------------------------------------------------------------+"
    echo "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |"
    echo "+-----------------------------------------+------------------------+----------------------+" ;;
  *) echo "unexpected $*" >&2; exit 2 ;;
esac
"""


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC | stat.S_IXGRP | stat.S_IXOTH)
    return path


def install(folder: Path, amd_smi: bool = True, nvidia_smi: bool = False) -> Path:
    """Write the chosen stand-ins (and amd-smi's documents) into ``folder``; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    if amd_smi:
        for shape in ("wrapped", "list"):
            for energy, full in ((True, "full"), (False, "reduced")):
                for name, doc in _documents(shape, energy).items():
                    (folder / f"{name}-{shape}-{full}.json").write_text(json.dumps(doc, indent=4))
        _script(folder / "amd-smi", AMD_SMI)
    if nvidia_smi:
        _script(folder / "nvidia-smi", NVIDIA_SMI)
    return folder
