"""Engine images: the catalog of image specs (what to build) and the ``images`` table (what was built)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from tcobench.schemas.base import ContainerEngine, GpuVendor, StrictModel
from tcobench.schemas.records import DATE_PATTERN, HOST_PATTERN

__all__ = ["IMAGE_LABEL_PREFIX", "ImageCatalog", "ImageRecord", "ImageSpec"]

IMAGE_LABEL_PREFIX = "io.tcobench."  # our labels on images and containers; OCI labels sit beside them
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_REPOSITORY = re.compile(r"^[a-z0-9]+(?:[._/-][a-z0-9]+)*$")


class ImageSpec(StrictModel):
    """One image of the catalog: which Dockerfile, for which engine and vendor, tagged how.

    The pins (base image digest, engine version, archive sha256) live as ``ARG`` defaults in the
    Dockerfile itself, next to the comment that cites where each came from; ``build_args`` only adds
    to or overrides them.
    """

    name: str = Field(description="Catalog name, e.g. llama-cpp-cpu (what --image and `images build` accept).")
    description: str = Field(default="", description="One line about the image.")
    dockerfile: str = Field(description="Dockerfile, relative to the docker/ folder.")
    repository: str = Field(description="Image repository the build is tagged into, e.g. tcobench/llama-cpp-cpu.")
    version_arg: str = Field(description="Build arg whose value (the engine version) is the image tag.")
    engine: ContainerEngine = Field(description="Engine the image runs: llama.cpp or ollama.")
    vendor: GpuVendor = Field(description="Accelerator the image targets: cpu, nvidia or amd.")
    wheel: str | None = Field(
        default=None,
        description="Python distribution whose wheel (at version_arg) goes into the build context's wheelhouse.",
    )
    build_args: dict[str, str] = Field(default_factory=dict, description="Build args added to the Dockerfile's.")
    size_hint_bytes: int = Field(default=0, ge=0, description="Rough image size, for the doctor's disk check.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"must be lower-case letters, digits, '.', '_' or '-', got {value!r}")
        return value

    @field_validator("repository")
    @classmethod
    def _repository(cls, value: str) -> str:
        if not _REPOSITORY.match(value):
            raise ValueError(f"not a valid image repository: {value!r}")
        return value


class ImageCatalog(StrictModel):
    """Every image tcobench knows how to build."""

    images: tuple[ImageSpec, ...] = Field(min_length=1, description="The image specs.")

    @model_validator(mode="after")
    def _unique(self) -> ImageCatalog:
        names = [spec.name for spec in self.images]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate image name(s): {', '.join(dupes)}")
        return self


class ImageRecord(StrictModel):
    """One row per build, unchanged check or push of a catalog image (table ``images``)."""

    event_id: str = Field(description="Unique id of this row (UUID4 hex).")
    date: str = Field(pattern=DATE_PATTERN, description="UTC date of the event, YYYY-MM-DD (partition key).")
    host: str = Field(pattern=HOST_PATTERN, description="Docker host that built or pushed it (partition key).")
    ts_ns: int = Field(description="When the event finished, ns since the Unix epoch (UTC).")
    action: str = Field(description="built, unchanged (spec hash already built) or pushed.")
    name: str = Field(description="Catalog name of the image.")
    reference: str = Field(description="Local reference repository:tag.")
    spec_hash: str = Field(description="sha256 of Dockerfile, build context, resolved build args and base image id.")
    image_id: str = Field(description="Image id (sha256:... of its config).")
    repo_digest: str | None = Field(description="registry/repository@sha256:... once pushed; null before.")
    size_bytes: int = Field(description="Image size, bytes.")
    build_ns: int = Field(description="Wall time of the build, ns (0 when unchanged or pushed).")
    engine: str = Field(description="llama.cpp or ollama.")
    engine_version: str = Field(description="Engine version the image pins (its tag).")
    vendor: str = Field(description="cpu, nvidia or amd.")
    base_image: str = Field(description="BASE_IMAGE the image was built from.")
    base_digest: str | None = Field(description="Image id or repo digest of that base image.")
    pins: str = Field(description="JSON of every resolved build arg (versions, checksums, base image).")
    smoke_version: str | None = Field(description="Version the engine reported in the smoke test; null if none ran.")
    docker_host: str = Field(description="Docker host URL (or 'default').")
    tool_version: str = Field(description="tcobench version.")
    git_revision: str | None = Field(description="git commit of tcobench's source, when known.")
