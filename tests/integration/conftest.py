"""Integration fixtures: real servers (llama.cpp's llama-server with the bundled Gemma 3 270M; a Docker daemon,
a debootstrap base image and a registry from .ci/run), torn down always."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai_stub import StubConfig, StubServer, openai_stub

from tcobench.schemas import BenchmarkConfig
from tcobench.tasks.engine import RunningEngine, launch_engine, stop_engine
from tests.services import require


@pytest.fixture(scope="session")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Prefect home for the whole session, so tests never touch the user's ~/.prefect."""
    return tmp_path_factory.mktemp("prefect-home")


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the bundled model is assembled: shared by the session (assembly verifies its sha256)."""
    return Path(os.environ.get("TCOBENCH_MODEL_CACHE") or tmp_path_factory.mktemp("models"))


@pytest.fixture
def env(tmp_path: Path, prefect_home: Path, model_cache: Path) -> dict[str, str]:
    """The environment of a `tcobench` subprocess: a store of its own, the shared model cache and Prefect home, and
    nothing of the caller's TCOBENCH_/PREFECT_ settings."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    environ.update(
        TCOBENCH_STORE=str(tmp_path / "store"),
        TCOBENCH_MODEL_CACHE=str(model_cache),
        PREFECT_HOME=str(prefect_home),
        COLUMNS="200",
    )
    return environ


@pytest.fixture
def stub(stub_tokenizer: Any) -> Iterator[StubServer]:
    """The OpenAI stub (openai_stub.py) with the module's ``stub_tokenizer``."""
    with openai_stub(StubConfig(tokenizer=stub_tokenizer)) as server:
        yield server


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
        TCOBENCH_STATE_DIR=str(tmp_path / "state"),  # pid files of this test's runs (tasks/host/procs.py)
        TCOBENCH_MODEL_CACHE=str(model_cache),
        PREFECT_HOME=str(prefect_home),
        COLUMNS="200",
    )
    return env


# --- Docker (dockerd, base image and registry are started by .ci/run; see its header) ---------------------


@pytest.fixture(scope="session")
def docker_host() -> str:
    """URL of a reachable Docker daemon (TCOBENCH_TEST_DOCKER_HOST, DOCKER_HOST or the local socket)."""
    from tcobench.errors import EngineError
    from tcobench.tasks.host.docker_client import docker_client

    host = os.environ.get("TCOBENCH_TEST_DOCKER_HOST") or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        docker_client(host, EngineError, timeout_s=10).close()
    except EngineError as exc:
        require(f"no Docker daemon for the Docker tests ({exc}); .ci/run starts one")
    return host


@pytest.fixture(scope="session")
def docker_api(docker_host: str) -> Iterator[Any]:
    """A docker SDK client of that daemon."""
    from tcobench.tasks.host.docker_client import docker_client

    client = docker_client(docker_host, timeout_s=120)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def base_image(docker_api: Any) -> str:
    """A local base image (no registry pulls here): .ci/run imports a debootstrap rootfs as local/debian:bookworm."""
    from docker.errors import ImageNotFound

    name = os.environ.get("TCOBENCH_TEST_BASE_IMAGE")
    if not name:
        require("TCOBENCH_TEST_BASE_IMAGE is not set (.ci/run imports a debootstrap rootfs and sets it)")
    try:
        docker_api.images.get(name)
    except ImageNotFound:
        require(f"base image {name} (TCOBENCH_TEST_BASE_IMAGE) is not on the Docker host")
    return str(name)


@pytest.fixture(scope="session")
def registry() -> str:
    """host:port of a registry on 127.0.0.1 (TCOBENCH_TEST_REGISTRY; .ci/run starts docker-registry)."""
    import httpx

    address = os.environ.get("TCOBENCH_TEST_REGISTRY")
    if not address:
        require("TCOBENCH_TEST_REGISTRY is not set (.ci/run starts docker-registry on 127.0.0.1:5000)")
    try:
        ok = httpx.get(f"http://{address}/v2/", timeout=5, trust_env=False).status_code == 200
    except httpx.HTTPError:
        ok = False
    if not ok:
        require(f"no registry answers at http://{address}/v2/")
    return str(address)


@pytest.fixture(scope="session")
def cpu_image(docker_host: str, base_image: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The llama.cpp CPU image, force-built by `tcobench images build` FROM the local base image.

    Returns its reference, image id and the store the build row went to.
    """
    from cli_helpers import tcobench

    store = tmp_path_factory.mktemp("images-store")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env["COLUMNS"] = "200"
    done = tcobench(
        "images",
        "build",
        "llama-cpp-cpu",
        "--build-arg",
        f"BASE_IMAGE={base_image}",
        "--force",
        "--no-prefect",
        "--docker-host",
        docker_host,
        "--store",
        str(store),
        env=env,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("llama-cpp-cpu: "))
    _, action, reference, image_id, *_ = line.split()
    assert action == "built", line
    return {"reference": reference, "image_id": image_id, "store": str(store)}
