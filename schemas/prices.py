"""Price tables: hardware, site (electricity, PUE) and ops labour. Every row names its source and date."""

from __future__ import annotations

import datetime as dt

from pydantic import Field

from .base import StrictModel

__all__ = ["HardwarePrice", "OpsPrice", "PriceTable", "SitePrice"]


class _Sourced(StrictModel):
    source: str = Field(min_length=1, description="Where the figure comes from (URL, document, or 'assumption: ...').")
    as_of: dt.date = Field(description="Date the figure was true.")


class HardwarePrice(_Sourced):
    """One platform: what it costs to own and how much power it is assumed to draw."""

    description: str = Field(min_length=1, description="Human-readable name of the platform.")
    vendor: str = Field(min_length=1, description="nvidia, amd or cpu.")
    accelerators: int = Field(ge=0, description="Accelerators (GPUs) in this unit; 0 for a CPU host.")
    purchase_usd: float = Field(ge=0, description="Purchase price of the accelerators (or CPU host), USD.")
    server_share_usd: float = Field(ge=0, description="Share of server/chassis/memory/storage, USD.")
    lifetime_months: int = Field(gt=0, description="Months over which the hardware is amortised.")
    load_watts: float = Field(gt=0, description="Estimated power at load, W (used when nothing was measured).")
    idle_watts: float = Field(ge=0, description="Estimated power when idle, W.")
    adaptation_days: float = Field(
        ge=0, description="One-off engineer days from machine to first model running on this platform."
    )


class SitePrice(_Sourced):
    """A site: electricity price and facility overhead."""

    description: str = Field(min_length=1, description="Human-readable name of the site.")
    kwh_usd: float = Field(gt=0, description="Electricity price, USD per kWh.")
    pue: float = Field(ge=1.0, le=3.0, description="Power usage effectiveness (facility W / IT W).")


class OpsPrice(_Sourced):
    """Operations labour."""

    description: str = Field(min_length=1, description="Human-readable name of the labour assumption.")
    hours_per_host_month: float = Field(ge=0, description="Ops hours per host per month (drivers, rebuilds...).")
    hourly_usd: float = Field(ge=0, description="Loaded hourly rate of an ops engineer, USD.")
    daily_usd: float = Field(ge=0, description="Loaded daily rate of an engineer for adaptation work, USD.")


class PriceTable(StrictModel):
    """All price rows, keyed by name."""

    hardware: dict[str, HardwarePrice] = Field(min_length=1, description="Platforms by key.")
    site: dict[str, SitePrice] = Field(min_length=1, description="Sites by key.")
    ops: dict[str, OpsPrice] = Field(min_length=1, description="Ops-labour assumptions by key.")
