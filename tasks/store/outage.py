"""ride_out: a store write tried again while the store's catalog database or object store cannot be reached.

A write that fails because PostgreSQL (the catalog) or the S3 server cannot be reached is tried again from the
start, with a jittered doubling backoff, until ``TCOBENCH_STORE_OUTAGE_S`` have passed; each attempt is one whole
transaction, so a retried commit is never stored twice. Any other error is not retried here.

Design notes: docs/dev/architecture/store.md#tasks-outage.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable
from typing import TypeVar

import duckdb

from tcobench.settings import current

__all__ = ["FIRST_WAIT_S", "MAX_WAIT_S", "OUTAGE_S", "outage_limit_s", "ride_out", "unreachable"]

OUTAGE_S = 300.0  # default of TCOBENCH_STORE_OUTAGE_S: longer than a database or object store restart takes
FIRST_WAIT_S = 0.5
MAX_WAIT_S = 10.0  # the longest wait between two attempts (before jitter)
T = TypeVar("T")
_log = logging.getLogger("tcobench.store")
# what libpq (through DuckDB's postgres extension) and DuckDB's httpfs say when the server is away
_MARKERS = (
    "unable to connect",
    "connection refused",
    "could not connect",
    "connection to server",
    "server closed the connection",
    "terminating connection",
    "no connection to the server",
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is in recovery",
    "could not establish connection",
    "connection reset",
    "broken pipe",
    "failed to commit: failed to execute query",  # the catalog's connection died during COMMIT (libpq says no more)
)
# ... unless the server answered and said no: wrong credentials or a missing database are configuration, final
_REFUSALS = ("authentication failed", "no password supplied", "does not exist", "pg_hba.conf", "permission denied")
_HTTP_5XX = re.compile(r"\bHTTP 5\d\d\b|\b5\d\d (Internal Server Error|Bad Gateway|Service Unavailable|Gateway Time)")


def unreachable(message: str) -> bool:
    """Whether a DuckDB error message says the catalog database or the object store could not be reached."""
    lowered = message.lower()
    if any(r in lowered for r in _REFUSALS):
        return False
    return any(m in lowered for m in _MARKERS) or _HTTP_5XX.search(message) is not None


def outage_limit_s() -> float:
    """How long a write waits for an unreachable store (TCOBENCH_STORE_OUTAGE_S, default OUTAGE_S seconds)."""
    return current().store_outage_s


def ride_out(attempt: Callable[[], T], what: str, limit_s: float | None = None) -> T:
    """``attempt()``, tried again (module docstring) while it fails with a duckdb.Error saying the store is
    unreachable, for at most ``limit_s`` (default ``outage_limit_s()``) seconds from the first such failure."""
    limit = outage_limit_s() if limit_s is None else limit_s
    since: float | None = None
    tries = 0
    while True:
        try:
            result = attempt()
        except duckdb.Error as exc:
            message = " ".join(str(exc).split())
            now = time.monotonic()
            if not unreachable(message) or (since is not None and now - since > limit):
                raise
            if since is None:
                since = now
                _log.warning(
                    "store unreachable while writing %s (%s); trying again for up to %g s (TCOBENCH_STORE_OUTAGE_S)",
                    what,
                    message[:300],
                    limit,
                )
            tries += 1
            time.sleep(min(MAX_WAIT_S, FIRST_WAIT_S * 2 ** (tries - 1)) * (0.5 + random.random()))
            continue
        if since is not None:
            _log.warning(
                "store reachable again: %s written after %.0f s and %d retries", what, time.monotonic() - since, tries
            )
        return result
