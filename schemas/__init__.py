"""Pure data: pydantic models for configuration, prices and stored records; Arrow schemas derived.

The names load on first use (PEP 562): a command imports the models it needs (``tcobench.schemas.config``), not
Arrow's schemas (``arrow``, which imports pyarrow) nor every other model; `tcobench --help` and `tcobench query`
start without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tcobench.schemas.arrow import arrow_schema, arrow_type
    from tcobench.schemas.base import (
        ClientPlacement,
        ContainerEngine,
        EngineKind,
        GpuSource,
        GpuVendor,
        HostFactsSource,
        LoadMode,
        Phase,
        Protocol,
        RunStatus,
        SamplerKind,
        StrictModel,
        TelemetryPhase,
    )
    from tcobench.schemas.compare import BestOptions, CompareOptions
    from tcobench.schemas.config import (
        BUNDLED_MODEL_NAME,
        CONTAINER_PROTOCOLS,
        DEFAULT_PROMPTS,
        BenchmarkConfig,
        DeclaredHardware,
        EngineConfig,
        ModelConfig,
        PricingConfig,
        TelemetryConfig,
        WorkloadConfig,
    )
    from tcobench.schemas.container import DOCKER_HOST_SCHEMES, ContainerConfig, GpuConfig, OllamaSettings
    from tcobench.schemas.engine_metrics import EngineMetricRecord, EngineMetricsKind, EngineQuantity
    from tcobench.schemas.flags import Flag, flags_of
    from tcobench.schemas.images import IMAGE_LABEL_PREFIX, ImageCatalog, ImageRecord, ImageSpec
    from tcobench.schemas.inventory import CONTROL_QUEUE, FleetSettings, HostSpec, Inventory, Matrix, MatrixEngine
    from tcobench.schemas.models import SHAPES, ModelShape
    from tcobench.schemas.prices import (
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
    from tcobench.schemas.records import ClientProcessCheck, RequestRecord, RunRecord, TelemetryRecord
    from tcobench.schemas.serving import CONFIG_ID_LENGTH, DeclaredServing, GpusSource, ServingConfig, config_label
    from tcobench.schemas.store import CommitRecord
    from tcobench.schemas.vllm import VLLM_PYTHON_ENV, VllmSettings
    from tcobench.schemas.workload import (
        DatasetConfig,
        DatasetFormat,
        DatasetOrder,
        LengthDist,
        LengthKind,
        Preset,
        SloConfig,
        SweepConfig,
        parse_length,
    )

_HOMES = {
    "arrow_schema": "arrow",
    "arrow_type": "arrow",
    "ClientPlacement": "base",
    "ContainerEngine": "base",
    "EngineKind": "base",
    "GpuSource": "base",
    "GpuVendor": "base",
    "HostFactsSource": "base",
    "LoadMode": "base",
    "Phase": "base",
    "Protocol": "base",
    "RunStatus": "base",
    "SamplerKind": "base",
    "StrictModel": "base",
    "TelemetryPhase": "base",
    "BestOptions": "compare",
    "CompareOptions": "compare",
    "BUNDLED_MODEL_NAME": "config",
    "BenchmarkConfig": "config",
    "CONTAINER_PROTOCOLS": "config",
    "DEFAULT_PROMPTS": "config",
    "DeclaredHardware": "config",
    "EngineConfig": "config",
    "ModelConfig": "config",
    "PricingConfig": "config",
    "TelemetryConfig": "config",
    "WorkloadConfig": "config",
    "ContainerConfig": "container",
    "DOCKER_HOST_SCHEMES": "container",
    "GpuConfig": "container",
    "OllamaSettings": "container",
    "EngineMetricRecord": "engine_metrics",
    "EngineMetricsKind": "engine_metrics",
    "EngineQuantity": "engine_metrics",
    "Flag": "flags",
    "flags_of": "flags",
    "IMAGE_LABEL_PREFIX": "images",
    "ImageCatalog": "images",
    "ImageRecord": "images",
    "ImageSpec": "images",
    "CONTROL_QUEUE": "inventory",
    "FleetSettings": "inventory",
    "HostSpec": "inventory",
    "Inventory": "inventory",
    "Matrix": "inventory",
    "MatrixEngine": "inventory",
    "ModelShape": "models",
    "SHAPES": "models",
    "CostBasis": "prices",
    "HardwarePrice": "prices",
    "LatencyTarget": "prices",
    "OWNED": "prices",
    "OpsPrice": "prices",
    "PriceTable": "prices",
    "RentalPrice": "prices",
    "RentalTier": "prices",
    "SitePrice": "prices",
    "ClientProcessCheck": "records",
    "RequestRecord": "records",
    "RunRecord": "records",
    "TelemetryRecord": "records",
    "CONFIG_ID_LENGTH": "serving",
    "DeclaredServing": "serving",
    "GpusSource": "serving",
    "ServingConfig": "serving",
    "config_label": "serving",
    "CommitRecord": "store",
    "VLLM_PYTHON_ENV": "vllm",
    "VllmSettings": "vllm",
    "DatasetConfig": "workload",
    "DatasetFormat": "workload",
    "DatasetOrder": "workload",
    "LengthDist": "workload",
    "LengthKind": "workload",
    "Preset": "workload",
    "SloConfig": "workload",
    "SweepConfig": "workload",
    "parse_length": "workload",
}

__all__ = [
    "CONFIG_ID_LENGTH",
    "DeclaredServing",
    "GpusSource",
    "ServingConfig",
    "config_label",
    "BestOptions",
    "CompareOptions",
    "Flag",
    "flags_of",
    "CONTAINER_PROTOCOLS",
    "VLLM_PYTHON_ENV",
    "VllmSettings",
    "ClientPlacement",
    "CONTROL_QUEUE",
    "DOCKER_HOST_SCHEMES",
    "IMAGE_LABEL_PREFIX",
    "ContainerConfig",
    "DatasetConfig",
    "DatasetFormat",
    "DatasetOrder",
    "LengthDist",
    "LengthKind",
    "Preset",
    "SloConfig",
    "SweepConfig",
    "parse_length",
    "ContainerEngine",
    "CostBasis",
    "GpuConfig",
    "GpuSource",
    "GpuVendor",
    "HostFactsSource",
    "ImageCatalog",
    "ImageRecord",
    "ImageSpec",
    "OWNED",
    "OllamaSettings",
    "BUNDLED_MODEL_NAME",
    "SHAPES",
    "DEFAULT_PROMPTS",
    "BenchmarkConfig",
    "CommitRecord",
    "DeclaredHardware",
    "EngineConfig",
    "EngineKind",
    "FleetSettings",
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
    "ClientProcessCheck",
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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
