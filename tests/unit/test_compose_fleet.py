"""docker/compose.fleet.yaml (the fleet's central services), checked statically: no registry can be reached here.

Every image is pinned by digest, with a comment above it naming the repository, path, commit and line that pair that
digest with its tag, or built from a Dockerfile whose base is; ports are published on ${TCOBENCH_FLEET_BIND}
(default this machine only); no secret is written in the file; the Prefect server is not older than the Prefect the
workers run.
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
# name:tag@sha256:<64 hex>, the tag kept beside the digest so a reader sees the release
PINNED = re.compile(r"^(?P<tag>[\w./-]+:[\w.-]+)@sha256:[0-9a-f]{64}$")
# a citation a reader can check: "Source: owner/name, path, commit <40 hex>, line N" (docker/*.Dockerfile style)
CITED = re.compile(r"Source: [\w.-]+/[\w.-]+, [\w./-]+[^,]*, commit [0-9a-f]{40}, line \d+\b")


def _comments_above(lines: list[str], index: int) -> str:
    """The comment block right above lines[index], on one line without its '#' marks."""
    start = index
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return " ".join(" ".join(line.lstrip().lstrip("#") for line in lines[start:index]).split())


def _assert_pinned_and_cited(image: str, lines: list[str], index: int, where: str) -> None:
    pinned = PINNED.match(image)
    assert pinned, f"{where}: {image} is not pinned as name:tag@sha256:<64 hex>"
    comments = _comments_above(lines, index)
    assert f"Pin: {pinned['tag']}" in comments, f"{where}: no 'Pin: {pinned['tag']}' above {image}"
    assert CITED.search(comments), f"{where}: {image} cites no repository, path, commit and line"
    for quoted in re.findall(r"sha256:([0-9a-f]+)", comments):  # a digest quoted in the citation is this one
        assert image.split("@sha256:")[1].startswith(quoted), f"{where}: the comment quotes sha256:{quoted}"


def test_every_pulled_image_is_pinned_by_digest_and_cites_a_source() -> None:
    lines = COMPOSE_TEXT.splitlines()
    images = [
        (i, line.split("image:", 1)[1].strip()) for i, line in enumerate(lines) if line.strip().startswith("image:")
    ]
    built = {s["image"] for s in COMPOSE["services"].values() if "build" in s}
    pulled = [(i, image) for i, image in images if image not in built]
    assert {image.split(":")[0] for _, image in pulled} == {"postgres", "chrislusf/seaweedfs"}
    assert len(images) == len(COMPOSE["services"])
    for index, image in pulled:
        _assert_pinned_and_cited(image, lines, index, f"compose.fleet.yaml line {index + 1}")


def _from_lines(path: Path) -> list[tuple[str, int]]:
    """Each FROM's image (its ARG default where it names one) and the line that sets it."""
    lines = path.read_text("utf-8").splitlines()
    found: list[tuple[str, int]] = []
    for index, line in enumerate(lines):
        if line.upper().startswith("FROM "):
            image = line.split()[1]
            if arg := re.fullmatch(r"\$\{(\w+)\}", image):
                index = next((i for i, x in enumerate(lines) if x.startswith(f"ARG {arg[1]}=")), -1)
                assert index >= 0, f"{path.name}: FROM {image} but no ARG {arg[1]}=<default>"
                image = lines[index].split("=", 1)[1].strip()
            found.append((image, index))
    return found


def test_every_fleet_dockerfile_builds_from_a_pinned_and_cited_base() -> None:
    dockerfiles = sorted((DOCKER / "fleet").glob("*.Dockerfile"))
    built = {
        DOCKER / s["build"]["context"] / s["build"]["dockerfile"] for s in COMPOSE["services"].values() if "build" in s
    }
    assert built and built <= set(dockerfiles)
    for path in dockerfiles:
        lines = path.read_text("utf-8").splitlines()
        froms = _from_lines(path)
        assert froms, f"{path.name}: no FROM"
        for image, index in froms:
            _assert_pinned_and_cited(image, lines, index, f"{path.name} line {index + 1}")


def test_the_prefect_server_runs_the_workers_release_as_non_root() -> None:
    build = COMPOSE["services"]["prefect-server"]["build"]
    info = parse_dockerfile((DOCKER / build["context"] / build["dockerfile"]).read_text("utf-8"))
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
