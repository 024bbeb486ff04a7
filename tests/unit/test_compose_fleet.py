"""docker/compose.fleet.yaml (the fleet's central services), checked statically: no registry can be reached here.

Every image is pinned by digest with its source cited above it, or built from a Dockerfile whose base is; ports are
published on ${TCOBENCH_FLEET_BIND} (default this machine only); no secret is written in the file; the Prefect
server is not older than the Prefect the workers run.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml
from packaging.version import Version

from tcobench.images import parse_dockerfile

DOCKER = Path(__file__).resolve().parents[2] / "docker"
COMPOSE_TEXT = (DOCKER / "compose.fleet.yaml").read_text("utf-8")
COMPOSE: dict[str, Any] = yaml.safe_load(COMPOSE_TEXT)
PINNED = re.compile(r"^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$")


def test_pulled_images_are_pinned_by_digest_and_cite_a_source() -> None:
    lines = COMPOSE_TEXT.splitlines()
    pulled = [s for s in COMPOSE["services"].values() if "build" not in s]
    assert {s["image"].split(":")[0] for s in pulled} == {"postgres", "chrislusf/seaweedfs"}
    for service in pulled:
        assert PINNED.match(service["image"]), service["image"]
        index = next(i for i, line in enumerate(lines) if line.strip() == f"image: {service['image']}")
        _assert_cited("\n".join(lines[max(0, index - 6) : index]), service["image"])


# a citation a reader can check: "Source: owner/name, path, commit <40 hex>" (as docker/*.Dockerfile cite theirs)
CITED = re.compile(r"Source: [\w.-]+/[\w.-]+, [\w./-]+[^,]*, commit [0-9a-f]{40}\b")


def _assert_cited(comments: str, image: str) -> None:
    assert CITED.search(" ".join(comments.replace("#", " ").split())), f"{image}: no repository, path and commit"


def test_the_prefect_server_is_built_from_a_pinned_base_at_the_workers_release() -> None:
    build = COMPOSE["services"]["prefect-server"]["build"]
    info = parse_dockerfile((DOCKER / build["context"] / build["dockerfile"]).read_text("utf-8"))
    assert PINNED.match(info.args["BASE_IMAGE"] or "") and info.froms == ["${BASE_IMAGE}"]
    text = (DOCKER / build["context"] / build["dockerfile"]).read_text("utf-8")
    _assert_cited(text.split("ARG BASE_IMAGE=")[0].split("\n\n")[-1], info.args["BASE_IMAGE"] or "")
    assert Version(info.args["PREFECT_VERSION"] or "0") >= Version(version("prefect"))
    assert COMPOSE["services"]["prefect-server"]["image"].endswith(f":{info.args['PREFECT_VERSION']}")
    user = (info.user or "0").split(":")[0]
    assert user.isdigit() and user != "0"


def test_ports_are_published_on_the_chosen_address_only() -> None:
    for name, service in COMPOSE["services"].items():
        for port in service.get("ports", []):
            assert port.startswith("${TCOBENCH_FLEET_BIND:-127.0.0.1}:"), f"{name}: {port}"


def test_no_secret_is_written_in_the_file() -> None:
    env = {k: str(v) for s in COMPOSE["services"].values() for k, v in (s.get("environment") or {}).items()}
    for key in ("POSTGRES_PASSWORD", "PREFECT_SERVER_API_AUTH_STRING"):
        assert env[key].startswith("${") and ":?" in env[key], f"{key} must come from the environment"
    assert "${TCOBENCH_PG_PASSWORD" in env["PREFECT_API_DATABASE_CONNECTION_URL"]
    assert COMPOSE["secrets"]["s3_identities"]["file"].startswith("${TCOBENCH_S3_IDENTITIES:?")
