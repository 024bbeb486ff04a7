"""NVIDIA GPUs through the ``nvidia-smi`` command: the fallback where NVML's Python binding is missing, and the
way to sample an engine whose container runs on a remote Docker host (the command runs inside the container).

One ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits`` per sample: power in W (converted to mW),
memory in MiB (to bytes), SM clock in MHz, utilisation in %. nvidia-smi offers no energy counter, so the
``energy`` view integrates power for these runs.
"""

from __future__ import annotations

import re
import subprocess
from typing import Any

from tcobench.schemas import GpuVendor, SamplerKind
from tcobench.tasks.host.telemetry.base import Reading, Runner, Sampler, SamplerUnavailable, register

__all__ = ["NvidiaSmiSampler", "local_runner"]

_QUERY = "index,uuid,power.draw,utilization.gpu,memory.used,clocks.sm,temperature.gpu,power.limit"
_DESCRIBE = "name,driver_version,power.limit,clocks.max.sm,vbios_version"


def local_runner(cmd: list[str], timeout_s: float = 2) -> str:
    """Run a command on this host; its stdout. OSError when it cannot run, fails or takes over ``timeout_s``."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OSError(f"{cmd[0]}: {exc}") from exc
    if done.returncode != 0:
        raise OSError(f"{cmd[0]} exited with {done.returncode}: {(done.stderr or done.stdout).strip()[:200]}")
    return done.stdout


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None


def _scaled(text: str, factor: float) -> int | None:
    value = _number(text)
    return round(value * factor) if value is not None else None


def _text(cell: str | None) -> str | None:
    """A text cell; None for an empty one or nvidia-smi's "[N/A]" and "[Not Supported]"."""
    return cell if cell and not cell.startswith("[") else None


def _rows(output: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.split(",")] for line in output.splitlines() if line.strip()]


@register(SamplerKind.nvidia_smi, "nvidia-smi")
class NvidiaSmiSampler(Sampler):
    def __init__(self, devices: tuple[int, ...] | None, runner: Runner | None = None) -> None:
        self.run = runner or local_runner
        self.where = "in the engine container" if runner else "on this host"
        try:
            first = _rows(self._query(_QUERY))
        except OSError as exc:
            raise SamplerUnavailable(f"nvidia-smi {self.where}: {exc}") from exc
        visible = [int(r[0]) for r in first if r and r[0].isdigit()]
        self.indices = devices if devices is not None else tuple(visible)
        if not visible or any(i not in visible for i in self.indices):
            raise SamplerUnavailable(f"nvidia-smi {self.where}: GPUs {visible}; asked for {list(self.indices)}")

    def _query(self, fields: str) -> str:
        return self.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"])

    def read(self) -> list[Reading]:
        out = []
        for row in _rows(self._query(_QUERY)):
            if len(row) < 8 or not row[0].isdigit() or int(row[0]) not in self.indices:
                continue
            out.append(
                Reading(
                    device_index=int(row[0]),
                    device_uuid=row[1] or None,
                    power_mw=_scaled(row[2], 1000),
                    util_pct=_number(row[3]),
                    mem_used_bytes=_scaled(row[4], 2**20),
                    sm_clock_mhz=_scaled(row[5], 1),
                    temperature_c=_number(row[6]),
                    power_limit_mw=_scaled(row[7], 1000),
                )
            )
        return out

    def _cuda_version(self) -> str | None:
        """The driver's CUDA version from nvidia-smi's banner ("... CUDA Version: 13.0 |"); --query-gpu has none."""
        try:
            found = re.search(r"CUDA Version:\s*([0-9][0-9.]*)", self.run(["nvidia-smi"]))
        except OSError:
            return None
        return found.group(1) if found else None

    def describe(self) -> dict[str, Any]:
        try:
            rows = [r for r in _rows(self._query(f"index,uuid,{_DESCRIBE}")) if int(r[0]) in self.indices]
        except (OSError, ValueError):
            rows = []
        first = rows[0] if rows else ["", "", None, None, "", "", ""]
        return {
            "gpu_vendor": GpuVendor.nvidia,
            "gpu_name": first[2],
            "gpu_count": len(self.indices),
            "gpu_uuids": ",".join(r[1] for r in rows) or None,
            "driver_version": first[3],
            "cuda_version": self._cuda_version(),
            "gpu_firmware": _text(first[6]) if len(first) > 6 else None,
            "gpu_power_limit_mw": _scaled(first[4], 1000) if first[4] else None,
            "gpu_max_sm_clock_mhz": _scaled(first[5], 1) if first[5] else None,
            "telemetry_note": f"power: nvidia-smi power.draw {self.where}; no energy counter (integrated)",
        }
