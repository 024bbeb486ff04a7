"""Fixtures shared by the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.factories import write_fleet


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with several nights of runs on NVIDIA and AMD hosts (factories.write_fleet), one per test module."""
    store = tmp_path_factory.mktemp("fleet")
    write_fleet(store)
    return store
