"""Build inputs that need no daemon: resolved pins, the spec hash, the images row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcobench.errors import ImageError
from tcobench.images import BuildOutcome, image_record, load_catalog
from tcobench.images.build import _resolve_args, _spec_hash
from tcobench.schemas import ImageSpec

DOCKER_DIR = Path(__file__).resolve().parents[3] / "docker"
SPECS = {spec.name: spec for spec in load_catalog().images}


def test_pins_come_from_the_dockerfile_and_overrides_win() -> None:
    args = _resolve_args(SPECS["ollama-rocm"], DOCKER_DIR, {"BASE_IMAGE": "local/rocm:7"})
    assert args["OLLAMA_VERSION"] == "0.32.0" and len(args["OLLAMA_ROCM_SHA256"]) == 64
    assert args["BASE_IMAGE"] == "local/rocm:7"
    assert "BUILD_TIME" not in args and "SPEC_HASH" not in args  # provenance args are not pins


def test_unknown_build_arg_lists_the_real_ones() -> None:
    with pytest.raises(ImageError, match="--build-arg OLAMA_VERSION is not an ARG of docker/ollama-cuda.Dockerfile"):
        _resolve_args(SPECS["ollama-cuda"], DOCKER_DIR, {"OLAMA_VERSION": "1"})


def test_a_pin_without_default_must_be_given(tmp_path: Path) -> None:
    (tmp_path / "x.Dockerfile").write_text("ARG BASE_IMAGE=debian:12\nARG V=1\nARG X_SHA256\nFROM ${BASE_IMAGE}\n")
    spec = ImageSpec.model_validate_json(
        json.dumps(
            {
                "name": "x",
                "dockerfile": "x.Dockerfile",
                "repository": "t/x",
                "version_arg": "V",
                "engine": "ollama",
                "vendor": "cpu",
            }
        )
    )
    with pytest.raises(ImageError, match="pins no default for X_SHA256: pass --build-arg X_SHA256="):
        _resolve_args(spec, tmp_path, {})
    assert _resolve_args(spec, tmp_path, {"X_SHA256": "ab" * 32})["X_SHA256"] == "ab" * 32


def test_spec_hash_changes_with_every_input(tmp_path: Path) -> None:
    (tmp_path / "wheel.whl").write_bytes(b"1")
    base = _spec_hash("FROM x", tmp_path, {"A": "1"}, "sha256:b")
    assert base == _spec_hash("FROM x", tmp_path, {"A": "1"}, "sha256:b")
    assert base != _spec_hash("FROM y", tmp_path, {"A": "1"}, "sha256:b")
    assert base != _spec_hash("FROM x", tmp_path, {"A": "2"}, "sha256:b")
    assert base != _spec_hash("FROM x", tmp_path, {"A": "1"}, "sha256:c")
    (tmp_path / "wheel.whl").write_bytes(b"2")
    assert base != _spec_hash("FROM x", tmp_path, {"A": "1"}, "sha256:b")


def test_image_record_rows() -> None:
    outcome = BuildOutcome(
        spec=SPECS["llama-cpp-cpu"],
        reference="tcobench/llama-cpp-cpu:11434.0.0",
        image_id="sha256:" + "1" * 64,
        size_bytes=123,
        spec_hash="f" * 64,
        action="built",
        build_ns=5_000_000_000,
        pins={"BASE_IMAGE": "local/debian:bookworm", "ENGINE_VERSION": "11434.0.0"},
        base_image="local/debian:bookworm",
        base_digest="sha256:" + "2" * 64,
    )
    built = image_record(outcome, "unix:///run/x.sock", smoke_version="0.6.0")
    assert built.action == "built" and built.build_ns == 5_000_000_000 and built.engine == "llama.cpp"
    assert built.engine_version == "11434.0.0" and json.loads(built.pins)["BASE_IMAGE"] == "local/debian:bookworm"
    assert built.docker_host == "unix:///run/x.sock" and built.repo_digest is None and built.vendor == "cpu"
    pushed = image_record(outcome, "tcp://gpu-box.example:2376", "pushed", "r:5000/t@sha256:" + "3" * 64)
    assert pushed.action == "pushed" and pushed.build_ns == 0 and pushed.host == "gpu-box.example"
    assert pushed.repo_digest is not None and pushed.repo_digest.startswith("r:5000/t@sha256:")
