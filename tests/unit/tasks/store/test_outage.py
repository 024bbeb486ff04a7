"""tasks.store.outage: which errors mean the store is unreachable, and the bounds of the retries.

The messages are the ones DuckDB 1.4.4 gave with the store's real services stopped (PostgreSQL by ``pg_ctl stop``
before an ATTACH and during a COMMIT; SeaweedFS killed before a write); the whole behaviour against the real
services is tests/integration/test_fleet_outages.py. Here the attempts are functions that raise those errors, so
the waits can be read without sleeping through them."""

from __future__ import annotations

import time

import duckdb
import pytest

from tcobench.tasks.store.outage import FIRST_WAIT_S, MAX_WAIT_S, ride_out, unreachable

PG_DOWN = (
    'IO Error: Failed to attach DuckLake MetaData "__ducklake_metadata_lake" at path + "postgres:dbname=lake '
    'host=127.0.0.1 port=55499 user=tcobench"Unable to connect to Postgres at "dbname=lake host=127.0.0.1 port=55499 '
    'user=tcobench": connection to server at "127.0.0.1", port 55499 failed: Connection refused Is the server '
    "running on that host and accepting TCP/IP connections?"
)
PG_GONE_IN_COMMIT = 'TransactionContext Error: Failed to commit: Failed to execute query "ROLLBACK": '
S3_DOWN = (
    "IO Error: Could not establish connection error for HTTP PUT to 'http://127.0.0.1:19337/lake/data/main/t/"
    "ducklake-01a2418d-d90b-7b91-8d35-55e2530e4933.parquet'"
)
S3_5XX = "HTTP Error: HTTP PUT error on 'http://127.0.0.1:8333/lake/x.parquet' (HTTP 503 Service Unavailable)"
NOT_OUTAGES = (
    "Conversion Error: Could not convert string 'x' to INT32",
    "TransactionContext Error: Failed to commit: Transaction conflict - attempting to insert into table runs",
    "IO Error: No space left on device",
    "HTTP Error: HTTP PUT error on 'http://127.0.0.1:8333/lake/x.parquet' (HTTP 403 Forbidden)",
    # the server answered and refused: configuration, not an outage (libpq's wording)
    'IO Error: Unable to connect to Postgres at "dbname=lake host=127.0.0.1": connection to server at "127.0.0.1", '
    'port 5432 failed: FATAL: password authentication failed for user "tcobench"',
    'IO Error: Unable to connect to Postgres at "dbname=nolake host=127.0.0.1": connection to server at '
    '"127.0.0.1", port 5432 failed: FATAL: database "nolake" does not exist',
)


@pytest.mark.parametrize("message", [PG_DOWN, PG_GONE_IN_COMMIT, S3_DOWN, S3_5XX])
def test_an_unreachable_catalog_or_object_store_is_an_outage(message: str) -> None:
    assert unreachable(message)


@pytest.mark.parametrize("message", NOT_OUTAGES)
def test_other_errors_are_not(message: str) -> None:
    assert not unreachable(message)


class Flaky:
    """Fails with ``message`` ``failures`` times, then returns the number of calls."""

    def __init__(self, message: str, failures: int) -> None:
        self.message, self.failures, self.calls = message, failures, 0

    def __call__(self) -> int:
        self.calls += 1
        if self.calls <= self.failures:
            raise duckdb.IOException(self.message)
        return self.calls


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every wait ride_out asks for; the clock moves by it (no real sleep)."""
    asked: list[float] = []
    clock = [1000.0]

    def sleep(seconds: float) -> None:
        asked.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(time, "sleep", sleep)
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    return asked


def test_a_write_goes_through_once_the_store_is_back(waits: list[float]) -> None:
    assert ride_out(Flaky(PG_DOWN, 12), "run x") == 13
    assert len(waits) == 12
    for attempt, wait in enumerate(waits, 1):  # doubling from FIRST_WAIT_S, capped at MAX_WAIT_S, jitter 0.5-1.5x
        base = min(MAX_WAIT_S, FIRST_WAIT_S * 2 ** (attempt - 1))
        assert 0.5 * base <= wait <= 1.5 * base, (attempt, wait)


def test_the_wait_is_bounded_by_the_limit_then_the_error_propagates(waits: list[float]) -> None:
    attempt = Flaky(S3_DOWN, 10_000)
    with pytest.raises(duckdb.IOException, match="Could not establish connection"):
        ride_out(attempt, "run x", limit_s=60)
    assert 60 < sum(waits) <= 60 + 1.5 * MAX_WAIT_S  # gave up at the first failure past the limit
    assert attempt.calls == len(waits) + 1


def test_the_limit_comes_from_the_environment(waits: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCOBENCH_STORE_OUTAGE_S", "5")
    with pytest.raises(duckdb.IOException):
        ride_out(Flaky(PG_DOWN, 10_000), "run x")
    assert 5 < sum(waits) <= 5 + 1.5 * MAX_WAIT_S


@pytest.mark.parametrize("message", NOT_OUTAGES)
def test_other_errors_are_not_retried(waits: list[float], message: str) -> None:
    attempt = Flaky(message, 1)
    with pytest.raises(duckdb.IOException):
        ride_out(attempt, "run x")
    assert attempt.calls == 1 and waits == []
