"""CPU hosts through Linux RAPL powercap (``/sys/class/powercap/intel-rapl:N/energy_uj``, microjoules).

The counter wraps at ``max_energy_range_uj``; readings are cumulative since boot, converted to mJ and
unwrapped here so that deltas stay correct. No power reading exists, only energy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tcobench.schemas import SamplerKind
from tcobench.settings import current
from tcobench.tasks.host.telemetry.base import Reading, Runner, Sampler, SamplerUnavailable, pick_devices, register

__all__ = ["RaplSampler", "powercap_root"]


def powercap_root() -> Path:
    """The powercap tree (TCOBENCH_POWERCAP_ROOT overrides it, e.g. for a copied or mounted /sys)."""
    return current().powercap_root


@register(SamplerKind.cpu, "rapl")
class RaplSampler(Sampler):
    def __init__(self, devices: tuple[int, ...] | None, runner: Runner | None = None) -> None:
        root = powercap_root()
        zones = sorted(root.glob("intel-rapl:[0-9]*"), key=lambda p: p.name) if root.is_dir() else []
        zones = [z for z in zones if z.name.count(":") == 1]  # packages, not their sub-zones
        if not zones:
            raise SamplerUnavailable(f"RAPL: no powercap package zones under {root}")
        self.indices = pick_devices("RAPL", len(zones), devices)
        self.zones = [zones[i] for i in self.indices]
        try:
            self.ranges = [int((z / "max_energy_range_uj").read_text()) for z in self.zones]
            self.last = [int((z / "energy_uj").read_text()) for z in self.zones]
        except (OSError, ValueError) as exc:
            raise SamplerUnavailable(f"RAPL: {root} is not readable ({exc}); run as root or grant read") from exc
        self.wraps = [0] * len(self.zones)

    def read(self) -> list[Reading]:
        out = []
        for k, zone in enumerate(self.zones):
            try:
                raw = int((zone / "energy_uj").read_text())
            except (OSError, ValueError):
                out.append(Reading(device_index=self.indices[k]))
                continue
            if raw < self.last[k]:
                self.wraps[k] += 1
            self.last[k] = raw
            total_uj = raw + self.wraps[k] * self.ranges[k]
            out.append(Reading(device_index=self.indices[k], energy_mj=total_uj // 1000))
        return out

    def describe(self) -> dict[str, Any]:
        return {"gpu_vendor": None, "gpu_count": 0}
