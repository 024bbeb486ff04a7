"""Integration fixtures: real servers (llama.cpp's llama-server with the bundled Gemma 3 270M), torn down always."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcobench.schemas import BenchmarkConfig
from tcobench.tasks.engine import RunningEngine, launch_engine, stop_engine


@pytest.fixture(scope="session")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Prefect home for the whole session, so tests never touch the user's ~/.prefect."""
    return tmp_path_factory.mktemp("prefect-home")


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the bundled model is assembled: shared by the session (assembly verifies its sha256)."""
    return Path(os.environ.get("TCOBENCH_MODEL_CACHE") or tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[RunningEngine]:
    """A real llama-server on 127.0.0.1 serving the bundled model with 2 slots."""
    config = BenchmarkConfig.model_validate_json('{"workload": {"concurrency": [1, 2]}}')
    engine = launch_engine(config, tmp_path_factory.mktemp("engine-logs"), model_cache)
    try:
        yield engine
    finally:
        stop_engine(config, engine)


@pytest.fixture
def cli_env(tmp_path: Path, prefect_home: Path, model_cache: Path) -> dict[str, str]:
    """Environment for running the `tcobench` command: a fresh store per test, shared model cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(
        TCOBENCH_STORE=str(tmp_path / "store"),
        TCOBENCH_MODEL_CACHE=str(model_cache),
        PREFECT_HOME=str(prefect_home),
        COLUMNS="200",
    )
    return env
