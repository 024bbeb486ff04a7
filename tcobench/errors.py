"""Errors raised by tcobench, and the exit status each one gives the command line.

One root, one subclass per stage; the CLI prints ``Kind: message`` on one line and exits with the error's
``exit_code`` (the table is ``ExitCode``; the README's "Exit status" section shows it to users).

    TcobenchError            exit 1 unless stated
    ├── ConfigError        bad configuration file, CLI argument or run matrix
    ├── PricingError       bad or missing price table / price row
    ├── ImageError         building, pushing or finding an engine image
    ├── EngineError        starting, reaching or talking to an inference engine
    ├── MeasurementError   the measurement itself could not be carried out
    ├── StoreError         reading or writing the results store
    ├── QueryError         SQL refused or failed
    ├── DoctorError        a preflight check of a host failed
    └── NightlyError       cells of a nightly failed (exit 3)
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

__all__ = [
    "ConfigError",
    "DoctorError",
    "EngineError",
    "ExitCode",
    "ImageError",
    "MeasurementError",
    "NightlyError",
    "PricingError",
    "QueryError",
    "StoreError",
    "TcobenchError",
]


class ExitCode(IntEnum):
    """Exit status of every tcobench command (documented in the README, "Exit status")."""

    ok = 0  # everything asked for was done, every run ok
    error = 1  # an error before (or instead of) measuring: config, prices, engine start, store, query...
    usage = 2  # the command line itself is wrong (unknown option, bad value of an option, missing argument)
    failed = 3  # a run (or a nightly cell) finished but failed
    partial = 4  # a run finished with failed requests above the partial threshold
    interrupted = 130  # SIGINT (Ctrl-C): 128 + 2
    terminated = 143  # SIGTERM: 128 + 15


class TcobenchError(Exception):
    """Root of every error tcobench raises on purpose (anything else is a bug)."""

    kind = "Error"
    exit_code: ExitCode = ExitCode.error


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
    stored: Any = None  # what was committed before the store refused a write (the benchmark flow's result)


class QueryError(TcobenchError):
    kind = "QueryError"


class DoctorError(TcobenchError):
    kind = "DoctorError"


class NightlyError(TcobenchError):
    kind = "NightlyError"
    exit_code = ExitCode.failed
