"""Errors raised by tcobench.

One root, one subclass per stage; the CLI prints ``Kind: message`` on one line and exits non-zero.

    TcobenchError
    ├── ConfigError        bad configuration file, CLI argument or run matrix
    ├── PricingError       bad or missing price table / price row
    ├── ImageError         building, pushing or finding an engine image
    ├── EngineError        starting, reaching or talking to an inference engine
    ├── MeasurementError   the measurement itself could not be carried out
    ├── StoreError         reading or writing the Parquet store
    └── QueryError         SQL refused or failed
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "EngineError",
    "ImageError",
    "MeasurementError",
    "PricingError",
    "QueryError",
    "StoreError",
    "TcobenchError",
]


class TcobenchError(Exception):
    """Root of every error tcobench raises on purpose (anything else is a bug)."""

    kind = "Error"


class ConfigError(TcobenchError):
    kind = "ConfigError"


class PricingError(TcobenchError):
    kind = "PricingError"


class ImageError(TcobenchError):
    kind = "ImageError"


class EngineError(TcobenchError):
    kind = "EngineError"


class MeasurementError(TcobenchError):
    kind = "MeasurementError"


class StoreError(TcobenchError):
    kind = "StoreError"


class QueryError(TcobenchError):
    kind = "QueryError"
