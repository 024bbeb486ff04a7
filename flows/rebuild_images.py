"""Flow ``rebuild_images``: per catalog image, build (or find unchanged) -> smoke-test -> push -> record.

Wiring only: the steps are ``tcobench.images`` and ``tcobench.tasks.store.store`` functions; this module
decides their order. A failure of one image stops the flow with its ImageError (images already
finished keep their ``images`` rows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tcobench.errors import ImageError
from tcobench.flows._orchestrator import flow, task
from tcobench.images import BuildOutcome, build_image, image_record, load_catalog, push_image, select, smoke_test
from tcobench.images.build import OnLog
from tcobench.tasks.host.docker_client import docker_client
from tcobench.tasks.store.store import write_image_record

__all__ = ["ImageResult", "rebuild_images"]

build_image_task = task(build_image, name="build_image")
smoke_test_task = task(smoke_test, name="smoke_test")
push_image_task = task(push_image, name="push_image")
write_image_record_task = task(write_image_record, name="write_image_record")


@dataclass(frozen=True)
class ImageResult:
    outcome: BuildOutcome
    smoke_version: str
    repo_digest: str | None


@flow(name="rebuild_images")
def rebuild_images(
    store: str | Path,
    docker_dir: Path,
    names: Sequence[str] = (),
    overrides: Mapping[str, str] | None = None,
    force: bool = False,
    registry: str | None = None,
    docker_host: str | None = None,
    gpu_check: bool = True,
    on_log: OnLog | None = None,
) -> list[ImageResult]:
    specs = select(load_catalog(), names)
    client = docker_client(docker_host, ImageError, timeout_s=3600)
    results = []
    try:
        for spec in specs:
            outcome = build_image_task(client, spec, docker_dir, overrides, force, on_log)
            version = smoke_test_task(client, outcome, docker_host, gpu_check)
            write_image_record_task(store, image_record(outcome, docker_host, smoke_version=version))
            digest = None
            if registry:
                digest = push_image_task(client, outcome, registry, on_log)
                write_image_record_task(store, image_record(outcome, docker_host, "pushed", digest, version))
            results.append(ImageResult(outcome, version, digest))
    finally:
        client.close()
    return results
