"""GPU passthrough and host checks, one module per ``schemas.GpuVendor`` (cpu, nvidia, amd)."""

from __future__ import annotations

from tcobench.tasks.host.gpu import amd, cpu, nvidia  # noqa: F401  (importing registers the vendors)
from tcobench.tasks.host.gpu.base import Check, CheckStatus, GpuOptions, Vendor, vendor_for

__all__ = ["Check", "CheckStatus", "GpuOptions", "Vendor", "vendor_for"]
