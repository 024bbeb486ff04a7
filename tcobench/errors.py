"""Errors raised by tcobench, and the exit status each one gives the command line.

One root, one subclass per stage; the CLI prints ``Kind: message`` on one line and exits with the error's
``exit_code`` (the table is ``ExitCode``; docs/failures.md, "Errors and exit status", shows it to users).

    TcobenchError            exit 1 unless stated
    ├── ConfigError        bad configuration file, CLI argument or run matrix
    ├── PricingError       bad or missing price table / price row
    ├── ImageError         building, pushing or finding an engine image
    ├── EngineError        starting, reaching or talking to an inference engine
    │   └── EngineDiedError  the engine died while a run was measured (exit 3)
    ├── MeasurementError   the measurement itself could not be carried out
    ├── RunError           a run finished but failed (exit 3), or failed requests over the threshold (exit 4)
    ├── Interrupted        stopped by a signal: SIGINT (exit 130), SIGTERM (143), SIGHUP (129)
    ├── ChangeError        `history --fail-on-change` flagged a change beyond run-to-run noise (exit 1)
    ├── ClaimError         `compare --claim N --fail-if-unsupported`: the data do not support the claim (exit 5)
    ├── StoreError         reading or writing the results store
    ├── QueryError         SQL refused or failed
    ├── DoctorError        a preflight check of a host failed
    └── NightlyError       cells of a nightly failed (exit 3)
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import IntEnum
from typing import Any

__all__ = [
    "ChangeError",
    "ClaimError",
    "ConfigError",
    "DoctorError",
    "EngineDiedError",
    "EngineError",
    "ExitCode",
    "ImageError",
    "Interrupted",
    "MeasurementError",
    "NightlyError",
    "PricingError",
    "QueryError",
    "RunError",
    "StoreError",
    "TcobenchError",
    "causes",
]


class ExitCode(IntEnum):
    """Exit status of every tcobench command (documented in docs/failures.md, "Errors and exit status")."""

    ok = 0  # everything asked for was done, every run ok
    error = 1  # an error before (or instead of) measuring: config, prices, engine start, store, query...; a flagged
    # change with `history --fail-on-change`
    usage = 2  # the command line itself is wrong (unknown option, bad value of an option, missing argument)
    failed = 3  # a run (or a nightly cell) finished but failed
    partial = 4  # a run finished with failed requests above the partial threshold
    unsupported = 5  # `compare --claim N --fail-if-unsupported`: the measurements do not support the claim
    hangup = 129  # SIGHUP (the terminal went away): 128 + 1
    interrupted = 130  # SIGINT (Ctrl-C): 128 + 2
    terminated = 143  # SIGTERM: 128 + 15


class TcobenchError(Exception):
    """Root of every error tcobench raises on purpose (anything else is a bug).

    ``exit_code`` is the class's unless one is given (a RunError is 3 or 4, an Interrupted 130, 143 or 129).
    """

    kind = "Error"
    exit_code: ExitCode = ExitCode.error

    def __init__(self, message: str = "", exit_code: ExitCode | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class ConfigError(TcobenchError):
    kind = "ConfigError"


class PricingError(TcobenchError):
    kind = "PricingError"


class ImageError(TcobenchError):
    kind = "ImageError"


class EngineError(TcobenchError):
    kind = "EngineError"


class EngineDiedError(EngineError):
    """The engine died while a run was being measured; that run is stored as failed first."""

    exit_code = ExitCode.failed


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


class RunError(TcobenchError):
    """Runs were measured and stored, but one failed (exit 3) or lost too many requests (exit 4)."""

    kind = "RunError"
    exit_code = ExitCode.failed


class Interrupted(TcobenchError):
    """A signal stopped the work; what was finished is stored first. Exit 128 + the signal's number."""

    kind = "Interrupted"
    exit_code = ExitCode.interrupted


class ChangeError(TcobenchError):
    """`tcobench history --fail-on-change` flagged a change beyond run-to-run noise."""

    kind = "ChangeError"
    exit_code = ExitCode.error  # 1, as a CI step or cron job expects of a failed check


class ClaimError(TcobenchError):
    """`tcobench compare --claim N --fail-if-unsupported`: the claimed ratio lies above the interval (or a target
    has no ratio) somewhere it was checked, so CI and cron can gate on a published claim."""

    kind = "ClaimError"
    exit_code = ExitCode.unsupported


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then the exception it was raised from (its ``__cause__``, else its ``__context__``), and so on; each
    once, so a chain that loops ends."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
