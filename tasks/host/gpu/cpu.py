"""CPU hosts: no passthrough."""

from __future__ import annotations

from pathlib import Path

from tcobench.schemas import GpuConfig, GpuVendor
from tcobench.tasks.host.gpu.base import GpuOptions, Vendor, register

__all__ = ["CpuVendor"]


@register(GpuVendor.cpu)
class CpuVendor(Vendor):
    def options(self, gpu: GpuConfig, local: bool, root: Path = Path("/")) -> GpuOptions:
        return GpuOptions(settings={"vendor": "cpu"})
