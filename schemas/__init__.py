"""Pure data: pydantic models for configuration, prices and stored records; Arrow schemas derived."""

from __future__ import annotations

from .arrow import arrow_schema, arrow_type
from .base import EngineKind, LoadMode, Phase, Protocol, RunStatus, SamplerKind, StrictModel, TelemetryPhase
from .config import (
    BUNDLED_MODEL_NAME,
    DEFAULT_PROMPTS,
    BenchmarkConfig,
    EngineConfig,
    ModelConfig,
    PricingConfig,
    TelemetryConfig,
    WorkloadConfig,
)
from .prices import HardwarePrice, OpsPrice, PriceTable, SitePrice
from .records import RequestRecord, RunRecord, TelemetryRecord

__all__ = [
    "BUNDLED_MODEL_NAME",
    "DEFAULT_PROMPTS",
    "BenchmarkConfig",
    "EngineConfig",
    "EngineKind",
    "HardwarePrice",
    "LoadMode",
    "ModelConfig",
    "OpsPrice",
    "Phase",
    "PriceTable",
    "PricingConfig",
    "Protocol",
    "RequestRecord",
    "RunRecord",
    "RunStatus",
    "SamplerKind",
    "SitePrice",
    "StrictModel",
    "TelemetryConfig",
    "TelemetryPhase",
    "TelemetryRecord",
    "WorkloadConfig",
    "arrow_schema",
    "arrow_type",
]
