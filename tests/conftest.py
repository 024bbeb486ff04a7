"""Fixtures for every test folder: real PostgreSQL, S3 and Prefect servers (tests/services.py), started once a session.

`.ci/run` starts both and exports their addresses; without them a fixture starts its own. Tests isolate themselves
inside the shared servers: ``create_database(pg_url)`` for a database of their own, ``new_bucket_name()`` for a
bucket.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.services import S3_KEY_ID, S3_SECRET, PostgresServer, PrefectServer, S3Server, require

# Files under tests/faults and tests/integration (paths under tests/) whose tests run in tests/unit's lane all the
# same, so that both lanes end together (the figures: docs/dev/performance.md#ci-lanes): first the fault tests that
# start no engine, container or shared service (damaged store files, the read-only query sandbox, hostile endpoints and
# the secrets walk, whose servers are the tests' own), then the workload and import tests (no container either).
BESIDE_UNIT = (
    "faults/test_damaged_files.py",
    "faults/test_query_readonly.py",
    "faults/test_hostile_servers.py",
    "faults/test_secrets.py",
    "integration/test_workloads.py",
    "integration/test_imports.py",
)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `integration` each test under tests/integration and tests/faults (they start servers, engines and tcobench
    processes), but those of BESIDE_UNIT: `make test` runs them in a lane of their own, beside tests/unit
    (tests/run_suite.sh)."""
    folders = [config.rootpath / "tests" / name for name in ("integration", "faults")]
    beside_unit = {config.rootpath / "tests" / name for name in BESIDE_UNIT}
    for item in items:
        if any(item.path.is_relative_to(folder) for folder in folders) and item.path not in beside_unit:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def _environment_restored() -> Iterator[None]:
    """Each test gets the process environment back as it found it: a command run in-process (CliRunner) writes
    os.environ (`--no-prefect` sets TCOBENCH_PREFECT=off), and a later test's subprocess would inherit it."""
    saved = dict(os.environ)
    yield
    if dict(os.environ) != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(autouse=True)
def _prefect_switch_restored() -> Iterator[None]:
    """A command run in-process decides Prefect on or off for the process (flows._orchestrator.use_settings, e.g.
    from `--no-prefect`); each test gets the decision back as it found it."""
    orchestrator = sys.modules.get("tcobench.flows._orchestrator")
    saved = dict(orchestrator._switch) if orchestrator is not None else None
    yield
    orchestrator = sys.modules.get("tcobench.flows._orchestrator")
    if orchestrator is not None:
        orchestrator._switch.clear()
        orchestrator._switch.update(saved or {})


@dataclass(frozen=True)
class S3Endpoint:
    """An S3-compatible server on 127.0.0.1 (plain http, path-style, region us-east-1)."""

    endpoint: str  # 127.0.0.1:PORT
    key_id: str
    secret: str


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """libpq URL of a PostgreSQL superuser on 127.0.0.1 (TCOBENCH_TEST_PG_URL, or a server started here)."""
    given = os.environ.get("TCOBENCH_TEST_PG_URL")
    if given:
        yield given
        return
    try:
        server = PostgresServer.start()
    except RuntimeError as exc:
        require(f"no PostgreSQL for the store/fleet tests ({exc}); .ci/run starts one")
        return
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def s3() -> Iterator[S3Endpoint]:
    """An S3-compatible server (TCOBENCH_TEST_S3_ENDPOINT + _KEY_ID + _SECRET, or SeaweedFS started here)."""
    given = os.environ.get("TCOBENCH_TEST_S3_ENDPOINT")
    if given:
        yield S3Endpoint(
            given,
            os.environ.get("TCOBENCH_TEST_S3_KEY_ID", S3_KEY_ID),
            os.environ.get("TCOBENCH_TEST_S3_SECRET", S3_SECRET),
        )
        return
    try:
        server = S3Server.start()
    except RuntimeError as exc:
        require(f"no S3 server for the store/fleet tests ({exc}); .ci/run starts SeaweedFS")
        return
    try:
        yield S3Endpoint(server.endpoint, server.key_id, server.secret)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def prefect_pg(pg_url: str) -> Iterator[PrefectServer]:
    """`prefect server start` on 127.0.0.1 with its database on that PostgreSQL and an API auth string (one per
    session: it is slow to start, docs/dev/performance.md#test-prefect-start)."""
    try:
        server = PrefectServer.start(pg_url)
    except RuntimeError as exc:
        require(f"no Prefect server on PostgreSQL for the fleet tests ({exc})")
        return
    try:
        yield server
    finally:
        server.stop()
