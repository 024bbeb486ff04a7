"""Static checks of every Dockerfile in docker/ (the GPU images cannot be built here: no registry pulls).

Each must: take ``ARG BASE_IMAGE`` defaulting to a tag pinned by digest and build FROM it; pin every
checksum as 64 hex digits (or leave it empty so the build fails asking for it); cite a source in a
comment above each pin; use classic-builder syntax only; run as a non-root numeric user; and carry
the OCI labels plus ours. The catalog's engine/vendor must match the labels.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tcobench.images import load_catalog, parse_dockerfile
from tcobench.images.catalog import PROVENANCE_ARGS

DOCKER_DIR = Path(__file__).resolve().parents[3] / "docker"
DOCKERFILES = sorted(DOCKER_DIR.glob("*.Dockerfile"))
SPECS = {spec.dockerfile: spec for spec in load_catalog().images}
REQUIRED_LABELS = {
    "org.opencontainers.image.title",
    "org.opencontainers.image.version",
    "org.opencontainers.image.created",
    "org.opencontainers.image.revision",
    "org.opencontainers.image.base.name",
    "org.opencontainers.image.base.digest",
    "io.tcobench.engine",
    "io.tcobench.engine-version",
    "io.tcobench.vendor",
    "io.tcobench.base-digest",
    "io.tcobench.archive-sha256",
    "io.tcobench.build-time",
    "io.tcobench.git-revision",
    "io.tcobench.spec-hash",
    "io.tcobench.image-name",
}
PINNED_IMAGE = re.compile(r"^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _info(path: Path):  # type: ignore[no-untyped-def]
    return parse_dockerfile(path.read_text("utf-8"))


def test_every_catalog_image_has_its_dockerfile() -> None:
    assert {p.name for p in DOCKERFILES} == set(SPECS)


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_base_image_pinned_by_digest(path: Path) -> None:
    info = _info(path)
    base = info.args.get("BASE_IMAGE")
    assert base and PINNED_IMAGE.match(base), f"{path.name}: BASE_IMAGE default {base!r} is not name:tag@sha256"
    assert info.froms == ["${BASE_IMAGE}"]
    assert next(iter(info.args)) == "BASE_IMAGE"  # declared before FROM, so FROM can use it


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_checksums_are_sha256_or_left_for_the_user(path: Path) -> None:
    sums = {k: v for k, v in _info(path).args.items() if k.endswith("SHA256") and k not in PROVENANCE_ARGS}
    for name, value in sums.items():
        assert value is None or SHA256.match(value), f"{path.name}: {name}={value!r}"


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_every_pin_cites_its_source(path: Path) -> None:
    lines = path.read_text("utf-8").splitlines()
    args = _info(path).args
    pins = [k for k, v in args.items() if v and k not in PROVENANCE_ARGS and ("SHA256" in k or k == "BASE_IMAGE")]
    for name in pins:
        index = next(i for i, line in enumerate(lines) if line.startswith(f"ARG {name}="))
        above = "\n".join(lines[max(0, index - 6) : index])
        assert "Source:" in above, f"{path.name}: no 'Source:' comment above ARG {name}"


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_classic_builder_non_root_and_labelled(path: Path) -> None:
    info = _info(path)
    assert info.buildkit == [], f"{path.name}: BuildKit-only syntax {info.buildkit}"
    user = (info.user or "0").split(":")[0]
    assert user.isdigit() and user != "0", f"{path.name}: USER {info.user!r} is not a non-root uid"
    assert set(info.labels) >= REQUIRED_LABELS, sorted(REQUIRED_LABELS - set(info.labels))


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_catalog_matches_the_labels(path: Path) -> None:
    text = path.read_text("utf-8")
    spec = SPECS[path.name]
    assert f'io.tcobench.engine="{spec.engine.value}"' in text
    assert f'io.tcobench.vendor="{spec.vendor.value}"' in text
    assert spec.version_arg in parse_dockerfile(text).args


def test_ollama_images_check_their_archives() -> None:
    cuda = (DOCKER_DIR / "ollama-cuda.Dockerfile").read_text("utf-8")
    rocm = (DOCKER_DIR / "ollama-rocm.Dockerfile").read_text("utf-8")
    for text in (cuda, rocm):
        assert "ollama-linux-amd64.tar.zst" in text and "sha256sum -c -" in text
        assert "exit 1" in text  # an empty checksum stops the build with a message asking for it
    # The ROCm archive holds only ROCm libraries: it is extracted over the base archive, after it.
    assert rocm.index("tar --zstd -xf /tmp/ollama.tar.zst") < rocm.index("tar --zstd -xf /tmp/ollama-rocm.tar.zst")
    assert rocm.count("sha256sum -c -") == 2
