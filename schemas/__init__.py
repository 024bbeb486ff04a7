"""Pure data: pydantic models for configuration, prices and stored records; Arrow schemas derived."""

from __future__ import annotations

from .arrow import arrow_schema, arrow_type
from .base import (
    ContainerEngine,
    EngineKind,
    GpuVendor,
    LoadMode,
    Phase,
    Protocol,
    RunStatus,
    SamplerKind,
    StrictModel,
    TelemetryPhase,
)
from .config import (
    BUNDLED_MODEL_NAME,
    CONTAINER_PROTOCOLS,
    DEFAULT_PROMPTS,
    BenchmarkConfig,
    EngineConfig,
    ModelConfig,
    PricingConfig,
    TelemetryConfig,
    WorkloadConfig,
)
from .container import DOCKER_HOST_SCHEMES, ContainerConfig, GpuConfig, OllamaSettings
from .engine_metrics import EngineMetricRecord, EngineMetricsKind, EngineQuantity
from .images import IMAGE_LABEL_PREFIX, ImageCatalog, ImageRecord, ImageSpec
from .inventory import HostSpec, Inventory, Matrix, MatrixEngine
from .models import SHAPES, ModelShape
from .prices import (
    OWNED,
    CostBasis,
    HardwarePrice,
    LatencyTarget,
    OpsPrice,
    PriceTable,
    RentalPrice,
    RentalTier,
    SitePrice,
)
from .records import RequestRecord, RunRecord, TelemetryRecord

__all__ = [
    "CONTAINER_PROTOCOLS",
    "DOCKER_HOST_SCHEMES",
    "IMAGE_LABEL_PREFIX",
    "ContainerConfig",
    "ContainerEngine",
    "CostBasis",
    "GpuConfig",
    "GpuVendor",
    "ImageCatalog",
    "ImageRecord",
    "ImageSpec",
    "OWNED",
    "OllamaSettings",
    "BUNDLED_MODEL_NAME",
    "SHAPES",
    "DEFAULT_PROMPTS",
    "BenchmarkConfig",
    "EngineConfig",
    "EngineKind",
    "EngineMetricRecord",
    "EngineMetricsKind",
    "EngineQuantity",
    "HardwarePrice",
    "HostSpec",
    "Inventory",
    "LatencyTarget",
    "LoadMode",
    "Matrix",
    "MatrixEngine",
    "ModelConfig",
    "ModelShape",
    "OpsPrice",
    "Phase",
    "PriceTable",
    "PricingConfig",
    "Protocol",
    "RentalPrice",
    "RentalTier",
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
