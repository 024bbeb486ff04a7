"""Price tables: hardware, site (electricity, PUE), ops labour, GPU-hour rates and latency targets.

Every price row names its source and date. ``rental`` (USD per GPU-hour: hyperscaler-owned, neocloud-owned,
3-year rental...) and ``latency_target`` are optional sections, so a table written for the first three
sections stays valid.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import StrEnum
from typing import Self

from pydantic import Field, model_validator

from tcobench.schemas.base import GpuVendor, StrictModel
from tcobench.schemas.flags import Flag

__all__ = [
    "OWNED",
    "PRICES_FLAG",
    "CostBasis",
    "HardwarePrice",
    "LatencyTarget",
    "OpsPrice",
    "PriceTable",
    "RentalPrice",
    "RentalTier",
    "SitePrice",
]


# The --prices option of every command that reads prices, declared on the field it sets (PricingConfig.table); here,
# beside the table it names, so that a command reading the store need not import the run's configuration models.
PRICES_FLAG = Flag("Price table (TOML); default: the shipped one.", decls=("--prices",), name="prices_file")


class RentalTier(StrEnum):
    """How a GPU-hour rate is paid: the tiers of SemiAnalysis InferenceX (the shipped [rental] rows), and the
    common cloud ones a team adds for its own quotes."""

    hyperscaler_own = "hyperscaler-own"  # a hyperscaler's all-in cost of owning the GPU, per hour (InferenceX)
    neocloud_own = "neocloud-own"  # a neocloud's all-in cost of owning the GPU, per hour (InferenceX)
    rental_3yr = "rental-3yr"  # a 3-year rental contract (InferenceX)
    rental_1yr = "rental-1yr"  # a 1-year rental contract
    on_demand = "on-demand"  # a cloud's on-demand price


@dataclass(frozen=True)
class CostBasis:
    """How the hardware is paid for: owned (the [hardware] row, amortised) or rented at a tier's GPU-hour rate.

    ``str()`` is the view's ``basis`` column: ``owned`` or ``rented: <tier>`` (view cost_basis).
    """

    tier: RentalTier | None = None  # None: owned

    def __str__(self) -> str:
        return "owned" if self.tier is None else f"rented: {self.tier.value}"

    @property
    def owned(self) -> bool:
        return self.tier is None

    @property
    def option(self) -> str:
        """The value to type for this basis (``--basis``): ``owned`` or the bare tier name."""
        return "owned" if self.tier is None else self.tier.value

    @classmethod
    def parse(cls, text: str) -> CostBasis:
        """``owned``, ``rented: <tier>`` or a bare tier name; ValueError listing the values to type otherwise."""
        value = text.strip().removeprefix("rented:").strip()
        if text.strip() == "owned":
            return cls()
        try:
            return cls(RentalTier(value))
        except ValueError:
            valid = ", ".join(b.option for b in cls.every())
            raise ValueError(f"unknown cost basis {text!r}: choose {valid}") from None

    @classmethod
    def every(cls) -> list[CostBasis]:
        """owned, then every rented tier."""
        return [cls(), *(cls(t) for t in RentalTier)]


OWNED = CostBasis()


class _Sourced(StrictModel):
    source: str = Field(min_length=1, description="Where the figure comes from (URL, document, or 'assumption: ...').")
    as_of: dt.date = Field(description="Date the figure was true.")


class HardwarePrice(_Sourced):
    """One platform: what it costs to own and how much power it is assumed to draw."""

    description: str = Field(min_length=1, description="Human-readable name of the platform.")
    vendor: GpuVendor = Field(description="nvidia, amd or cpu.")
    accelerators: int = Field(ge=0, description="Accelerators (GPUs) in this unit; 0 for a CPU host.")
    purchase_usd: float = Field(ge=0, description="Purchase price of the accelerators (or CPU host), USD.")
    server_share_usd: float = Field(ge=0, description="Share of server/chassis/memory/storage, USD.")
    lifetime_months: int = Field(gt=0, description="Months over which the hardware is amortised.")
    load_watts: float = Field(gt=0, description="Estimated power at load, W (used when nothing was measured).")
    idle_watts: float = Field(ge=0, description="Estimated power when idle, W.")
    adaptation_days: float = Field(
        ge=0, description="One-off engineer days from machine to first model running on this platform."
    )
    vram_gb: float | None = Field(default=None, gt=0, description="Memory per accelerator, GB (VRAM per dollar).")


class SitePrice(_Sourced):
    """A site: electricity price and facility overhead."""

    description: str = Field(min_length=1, description="Human-readable name of the site.")
    kwh_usd: float = Field(gt=0, description="Electricity price, USD per kWh.")
    pue: float = Field(ge=1.0, le=3.0, description="Power usage effectiveness (facility W / IT W).")
    grid_gco2e_per_kwh: float | None = Field(
        default=None,
        ge=0,
        description="Carbon intensity of the site's electricity, gCO2e per kWh (its source and date in the row's "
        "source); none: no carbon figure (views tco, platform_cost: gco2e_per_m_output_tokens).",
    )


class OpsPrice(_Sourced):
    """Operations labour."""

    description: str = Field(min_length=1, description="Human-readable name of the labour assumption.")
    hours_per_host_month: float = Field(ge=0, description="Ops hours per host per month (drivers, rebuilds...).")
    hourly_usd: float = Field(ge=0, description="Loaded hourly rate of an ops engineer, USD.")
    daily_usd: float = Field(ge=0, description="Loaded daily rate of an engineer for adaptation work, USD.")
    downtime_usd_per_hour: float | None = Field(
        default=None,
        ge=0,
        description="Business cost of an hour without the host, USD (its source and date in the row's source); "
        "none: no downtime term (views tco, platform_cost: downtime_usd_month).",
    )


class RentalPrice(_Sourced):
    """A cost basis priced per GPU-hour instead of owned: a cloud rental or a published all-in owned rate."""

    description: str = Field(min_length=1, description="Human-readable name of the rate.")
    hardware: str = Field(min_length=1, description="Key of the [hardware] row (platform) this rate prices.")
    tier: RentalTier = Field(
        description="How the rate is paid: hyperscaler-own, neocloud-own, rental-3yr, rental-1yr or on-demand."
    )
    usd_per_gpu_hour: float = Field(gt=0, description="USD per accelerator per hour, paid for every hour.")


class LatencyTarget(StrictModel):
    """A service-level target: runs meeting it compete on cost (view cost_at_latency_target)."""

    description: str = Field(min_length=1, description="What the target stands for.")
    ttft_p90_ms: float = Field(gt=0, description="Largest acceptable 90th percentile time to first token, ms.")
    tpot_p90_ms: float = Field(gt=0, description="Largest acceptable 90th percentile time per output token, ms.")


class PriceTable(StrictModel):
    """All price rows, keyed by name."""

    hardware: dict[str, HardwarePrice] = Field(min_length=1, description="Platforms by key.")
    site: dict[str, SitePrice] = Field(min_length=1, description="Sites by key.")
    ops: dict[str, OpsPrice] = Field(min_length=1, description="Ops-labour assumptions by key.")
    rental: dict[str, RentalPrice] = Field(default_factory=dict, description="GPU-hour rates by key (optional).")
    latency_target: dict[str, LatencyTarget] = Field(
        default_factory=dict, description="Latency targets by key (optional)."
    )

    @model_validator(mode="after")
    def _rental_rows_name_a_platform(self) -> Self:
        for key, row in self.rental.items():
            if row.hardware not in self.hardware:
                valid = ", ".join(sorted(self.hardware))
                raise ValueError(f"rental.{key}.hardware: no row {row.hardware!r} in [hardware] (valid: {valid})")
        return self
