"""load_catalog / select / parse_dockerfile: what can be built, and what each Dockerfile pins."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from tcobench.errors import ImageError
from tcobench.schemas import ImageCatalog, ImageSpec
from tcobench.tasks.config import validation_message

__all__ = [
    "CATALOG_PATH",
    "PROVENANCE_ARGS",
    "DockerfileInfo",
    "load_catalog",
    "parse_dockerfile",
    "read_dockerfile",
    "reference_of",
    "select",
]

CATALOG_PATH = Path(__file__).with_name("catalog.toml")
# Build args tcobench fills at build time for the labels; every other ARG is a pin.
PROVENANCE_ARGS = frozenset({"BASE_DIGEST", "ARCHIVE_SHA256", "BUILD_TIME", "GIT_REVISION", "SPEC_HASH", "IMAGE_NAME"})
# BuildKit-only syntax the classic builder (docker SDK) cannot run.
_BUILDKIT = re.compile(
    r"^\s*(#\s*syntax\s*=|RUN\s+--mount|RUN\s+--network|RUN\s+--security|COPY\s+--link|"
    r"COPY\s+--chmod|ADD\s+--chmod|ADD\s+--checksum|.*<<[-~]?['\"]?[A-Z_]+)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class DockerfileInfo:
    """The instructions of a Dockerfile that matter here, continuation lines joined."""

    args: dict[str, str | None] = field(default_factory=dict)  # first declaration of each ARG and its default
    froms: list[str] = field(default_factory=list)  # FROM operands, as written
    labels: list[str] = field(default_factory=list)  # every key=value of every LABEL
    buildkit: list[str] = field(default_factory=list)  # lines with BuildKit-only syntax (must stay empty)
    user: str | None = None  # the last USER


def _instructions(text: str) -> list[str]:
    joined, current = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            if _BUILDKIT.match(line):
                joined.append(line)
            continue
        if line.lstrip().startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        joined.append(current + line)
        current = ""
    if current:
        joined.append(current)
    return joined


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value


def parse_dockerfile(text: str) -> DockerfileInfo:
    info = DockerfileInfo()
    user = None
    for line in _instructions(text):
        if _BUILDKIT.match(line):
            info.buildkit.append(line.strip())
        keyword, _, rest = line.strip().partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "ARG":
            name, eq, default = rest.partition("=")
            info.args.setdefault(name.strip(), _unquote(default.strip()) if eq else None)
        elif keyword == "FROM":
            info.froms.append(rest.split()[0] if rest else "")
        elif keyword == "LABEL":
            info.labels.extend(m.group(1) for m in re.finditer(r'([\w.-]+)=("[^"]*"|\S+)', rest))
        elif keyword == "USER":
            user = rest
    return DockerfileInfo(info.args, info.froms, info.labels, info.buildkit, user)


def load_catalog(path: Path | None = None) -> ImageCatalog:
    """The validated catalog; ImageError naming the file and field otherwise."""
    source = path or CATALOG_PATH
    try:
        data = tomllib.loads(source.read_text("utf-8"))
        return ImageCatalog.model_validate_json(json.dumps(data))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ImageError(f"cannot read image catalog {source}: {exc}") from exc
    except ValidationError as exc:
        raise ImageError(validation_message(exc, str(source))) from exc


def select(catalog: ImageCatalog, names: Iterable[str]) -> list[ImageSpec]:
    """The specs named (all of them when none is); ImageError listing the valid names otherwise."""
    wanted = list(names)
    by_name = {spec.name: spec for spec in catalog.images}
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        raise ImageError(f"unknown image {unknown[0]!r}; the catalog has: {', '.join(by_name)}")
    return [by_name[n] for n in wanted] if wanted else list(catalog.images)


def reference_of(spec: ImageSpec, docker_dir: Path, overrides: dict[str, str] | None = None) -> str:
    """repository:tag of a spec, the tag being its engine version (the Dockerfile's pin unless overridden)."""
    info = read_dockerfile(spec, docker_dir)
    version = (overrides or {}).get(spec.version_arg) or spec.build_args.get(spec.version_arg)
    version = version or info.args.get(spec.version_arg)
    if not version:
        raise ImageError(f"docker/{spec.dockerfile} has no default for {spec.version_arg}; pass --build-arg")
    return f"{spec.repository}:{version}"


def read_dockerfile(spec: ImageSpec, docker_dir: Path) -> DockerfileInfo:
    path = docker_dir / spec.dockerfile
    try:
        return parse_dockerfile(path.read_text("utf-8"))
    except OSError as exc:
        raise ImageError(f"cannot read {path} (image {spec.name}): {exc}") from exc
