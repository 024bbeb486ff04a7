"""catalog_status: which catalog images a Docker host has, and what they carry (for `tcobench images list`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import docker
from docker.errors import ImageNotFound

from tcobench.images.build import SPEC_HASH_LABEL
from tcobench.images.catalog import reference_of
from tcobench.schemas import ImageCatalog

__all__ = ["ImageStatus", "catalog_status"]


@dataclass(frozen=True)
class ImageStatus:
    name: str
    reference: str
    engine: str
    vendor: str
    present: bool | None  # None: not known (no Docker daemon to ask)
    image_id: str | None
    size_bytes: int | None
    spec_hash: str | None
    build_time: str | None
    repo_digests: tuple[str, ...]


def catalog_status(client: docker.DockerClient | None, catalog: ImageCatalog, docker_dir: Path) -> list[ImageStatus]:
    """Each catalog image with what the Docker host has of it; ``client`` None (no daemon reachable): the catalog
    alone, nothing known of the host (``present`` None)."""
    rows = []
    for spec in catalog.images:
        reference = reference_of(spec, docker_dir)
        if client is None:
            rows.append(
                ImageStatus(
                    spec.name, reference, spec.engine.value, spec.vendor.value, None, None, None, None, None, ()
                )
            )
            continue
        try:
            image = client.images.get(reference)
        except ImageNotFound:
            rows.append(
                ImageStatus(
                    spec.name, reference, spec.engine.value, spec.vendor.value, False, None, None, None, None, ()
                )
            )
            continue
        labels = image.labels or {}
        rows.append(
            ImageStatus(
                spec.name,
                reference,
                spec.engine.value,
                spec.vendor.value,
                True,
                str(image.id),
                int(image.attrs.get("Size") or 0),
                labels.get(SPEC_HASH_LABEL),
                labels.get("io.tcobench.build-time"),
                tuple(image.attrs.get("RepoDigests") or ()),
            )
        )
    return rows
