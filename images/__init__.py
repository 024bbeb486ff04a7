"""Engine images: the catalog of image specs (catalog.toml) and the logic to build, smoke-test and push them.

The Dockerfiles live in the repository's ``docker/`` folder (``Settings.docker_dir``).
"""

from __future__ import annotations

from tcobench.images.build import BuildOutcome, build_image, built_outcome, image_record, push_image, smoke_test
from tcobench.images.catalog import CATALOG_PATH, DockerfileInfo, load_catalog, parse_dockerfile, reference_of, select
from tcobench.images.status import ImageStatus, catalog_status

__all__ = [
    "CATALOG_PATH",
    "BuildOutcome",
    "DockerfileInfo",
    "ImageStatus",
    "build_image",
    "built_outcome",
    "catalog_status",
    "image_record",
    "load_catalog",
    "parse_dockerfile",
    "push_image",
    "reference_of",
    "select",
    "smoke_test",
]
