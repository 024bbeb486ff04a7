"""The image catalog and the Dockerfile reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.errors import ImageError
from tcobench.images import load_catalog, parse_dockerfile, reference_of, select
from tcobench.schemas import ContainerEngine, GpuVendor

DOCKER_DIR = Path(__file__).resolve().parents[3] / "docker"


def test_catalog_lists_the_images() -> None:
    catalog = load_catalog()
    by_name = {spec.name: spec for spec in catalog.images}
    assert set(by_name) == {
        "llama-cpp-cpu",
        "ollama-cuda",
        "ollama-rocm",
        "vllm-cuda",
        "vllm-rocm",
        "sglang-cuda",
        "sglang-rocm",
    }
    for engine in (ContainerEngine.vllm, ContainerEngine.sglang):
        name = engine.value
        assert (by_name[f"{name}-cuda"].engine, by_name[f"{name}-cuda"].vendor) == (engine, GpuVendor.nvidia)
        assert (by_name[f"{name}-rocm"].engine, by_name[f"{name}-rocm"].vendor) == (engine, GpuVendor.amd)
    assert by_name["llama-cpp-cpu"].engine is ContainerEngine.llama_cpp and by_name["llama-cpp-cpu"].wheel
    assert by_name["ollama-cuda"].vendor is GpuVendor.nvidia and by_name["ollama-rocm"].vendor is GpuVendor.amd


def test_select_names_the_valid_choices() -> None:
    catalog = load_catalog()
    assert [s.name for s in select(catalog, [])] == [s.name for s in catalog.images]
    assert [s.name for s in select(catalog, ["ollama-rocm"])] == ["ollama-rocm"]
    with pytest.raises(ImageError, match="unknown image 'vllm'; the catalog has: llama-cpp-cpu, ollama-cuda"):
        select(catalog, ["vllm"])


def test_bad_catalog_is_one_line_naming_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "catalog.toml"
    bad.write_text('[[images]]\nname = "Bad Name"\n', "utf-8")
    with pytest.raises(ImageError) as info:
        load_catalog(bad)
    assert str(bad) in str(info.value) and "images.0" in str(info.value) and "\n" not in str(info.value)


def test_reference_is_repository_and_pinned_version() -> None:
    specs = {s.name: s for s in load_catalog().images}
    assert reference_of(specs["llama-cpp-cpu"], DOCKER_DIR) == "tcobench/llama-cpp-cpu:11434.0.0"
    assert reference_of(specs["ollama-cuda"], DOCKER_DIR) == "tcobench/ollama-cuda:0.32.0"
    assert reference_of(specs["ollama-cuda"], DOCKER_DIR, {"OLLAMA_VERSION": "0.33.1"}).endswith(":0.33.1")


DOCKERFILE = """# syntax=docker/dockerfile:1
ARG BASE_IMAGE=debian:12@sha256:abc
ARG EMPTY
FROM ${BASE_IMAGE} AS base
RUN --mount=type=cache,target=/x true
RUN apt-get update \\
    # a comment inside the instruction
    && true
COPY <<CONF /etc/x
CONF
LABEL a="one two" \\
      b=three
USER 10001:10001
"""


def test_parse_dockerfile_joins_continuations_and_finds_buildkit() -> None:
    info = parse_dockerfile(DOCKERFILE)
    assert info.args == {"BASE_IMAGE": "debian:12@sha256:abc", "EMPTY": None}
    assert info.froms == ["${BASE_IMAGE}"] and info.labels == ["a", "b"] and info.user == "10001:10001"
    assert len(info.buildkit) == 3  # the syntax line, RUN --mount, the heredoc
