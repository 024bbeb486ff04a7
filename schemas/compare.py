"""compare's options: one declaration for `tcobench compare` (its flags) and the task (tasks/analysis/compare)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from tcobench.schemas.base import StrictModel
from tcobench.schemas.flags import Flag
from tcobench.schemas.prices import OWNED, CostBasis, RentalTier

__all__ = ["BestOptions", "CompareOptions", "PlanOptions", "PlanRate"]


class CompareOptions(StrictModel):
    """How two selections of runs are compared; the task checks the values (a ConfigError names a bad one)."""

    claim: Annotated[float | None, Flag("A claimed ratio 'A is N times as cost-efficient as B' to check.")] = Field(
        default=None, description="A claimed ratio A / B to judge against the interval."
    )
    basis: Annotated[
        CostBasis,
        Flag(
            f"Cost basis: owned, or a GPU-hour tier ({', '.join(t.value for t in RentalTier)}).",
            cli_type=str,
            default="owned",
            derived=True,
        ),
    ] = Field(default=OWNED, description="How the hardware is paid for: owned, or rented at a tier.")
    tokens: Annotated[str, Flag("Tokens counted: output, or total (prompt + output).")] = Field(
        default="output", description="Tokens counted: output, or total (prompt + output)."
    )
    allow_different: Annotated[
        bool,
        Flag(
            "Compare even when workload, model digest, context length or engine settings differ.",
            decls=("--allow-different",),
        ),
    ] = Field(default=False, description="Compare even when the sides' settings differ (the differences are kept).")
    exclude_flagged: Annotated[
        bool,
        Flag(
            "Leave out the runs `tcobench history` flags (listed either way under 'Flagged runs').",
            decls=("--exclude-flagged",),
        ),
    ] = Field(default=False, description="Leave out the runs `tcobench history` flags (they are listed either way).")
    resamples: Annotated[int, Flag("Bootstrap resamples.")] = Field(
        default=2000, description="Bootstrap resamples (at least 100)."
    )
    seed: Annotated[int, Flag("Seed of the bootstrap (fixed: the same data give the same CI).")] = Field(
        default=0, description="Seed of the bootstrap."
    )
    confidence: Annotated[float, Flag("Confidence level of the interval.")] = Field(
        default=0.95, description="Confidence level of the interval, in (0, 1)."
    )
    shape_tolerance: Annotated[
        float,
        Flag("Largest relative difference of the achieved ISL/OSL means (server-counted) accepted."),
    ] = Field(default=0.05, description="How far apart the sides' achieved ISL/OSL means may be, relative to B's.")
    claim_rules: Annotated[
        tuple[str, ...],
        Flag(
            "Claim-grade threshold NAME=VALUE, or NAME=off to turn a rule off; repeat for several (rules: "
            "duration, samples, steady_share, power, setup, shape, parity, accuracy, accuracy_floor; "
            "docs/claim-grade.md).",
            name="claim_rule",
            cli_type=list[str] | None,
            default=None,
        ),
    ] = Field(default=(), description="'NAME=VALUE' texts overriding the claim-grade rules' thresholds, 'NAME=off'.")
    interactivity: Annotated[
        tuple[float, ...] | None,
        Flag(
            "Compare at these interactivity targets, tok/s per user (e.g. 20,50,100), read off each "
            "side's frontier of tok/s per GPU; never extrapolated. Default: 3 spread over the overlap.",
            cli_type=str | None,
            derived=True,
        ),
    ] = Field(default=None, description="Targets in tok/s per user; None: 3 spread over the sides' overlap.")
    interactivity_quantile: Annotated[
        float,
        Flag("TPOT quantile interactivity is 1000 / (ms): 0.5 median, 0.9 the slowest users."),
    ] = Field(default=0.5, description="The TPOT quantile interactivity is 1000 / (ms) of.")
    frontier: bool = Field(default=True, description="Compare at equal interactivity too.")


class BestOptions(StrictModel):
    """How `tcobench best` ranks each platform's serving configurations at one interactivity (tasks/analysis/compare/
    best.py); the bootstrap's settings are compare's, so the same runs give the same intervals."""

    interactivity: float = Field(gt=0, description="The interactivity target, tok/s per user.")
    slo_ttft_ms: Annotated[float | None, Flag("SLO: TTFT p90 at most this, ms.")] = Field(
        default=None, gt=0, description="A configuration meets the SLO when its TTFT p90 at the target is at most this."
    )
    slo_tpot_ms: Annotated[float | None, Flag("SLO: TPOT p90 at most this, ms per token.")] = Field(
        default=None, gt=0, description="A configuration meets the SLO when its TPOT p90 at the target is at most this."
    )
    basis: CostBasis = Field(default=OWNED, description="How the hardware is paid for: owned, or rented at a tier.")
    resamples: int = CompareOptions.model_fields["resamples"].default
    seed: int = CompareOptions.model_fields["seed"].default
    confidence: float = CompareOptions.model_fields["confidence"].default
    interactivity_quantile: float = CompareOptions.model_fields["interactivity_quantile"].default


class PlanRate(StrEnum):
    """Which of the trace's per-minute output token rates the fleet is sized for (`tcobench plan --at`)."""

    peak = "peak"  # the busiest minute
    p95 = "p95"  # the 95th percentile over the minutes
    mean = "mean"  # the mean over the minutes


class PlanOptions(BestOptions):
    """How `tcobench plan` sizes each platform's fleet for a trace (tasks/analysis/compare/plan.py): the
    configuration to deploy is best's (the cheapest per token at the interactivity on ``basis`` that meets the SLO),
    sized for the trace's per-minute output token rate at ``at`` and priced on every cost basis."""

    at: PlanRate = Field(default=PlanRate.p95, description="The per-minute output token rate the fleet serves.")
