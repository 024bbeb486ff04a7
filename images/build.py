"""build_image / smoke_test / push_image / image_record: make a catalog image, prove it runs, publish it.

Spec hash (what "unchanged" means): sha256 over the Dockerfile's text, every file of the build context
(the wheelhouse), the resolved pins (every build arg but the provenance ones) and the id of the base
image on the daemon. The image carries it as ``io.tcobench.spec-hash``: when the image tagged
``repository:tag`` already carries the same hash, the build is skipped unless forced.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import docker
from docker.errors import APIError, DockerException, ImageNotFound
from docker.models.images import Image

from tcobench import __version__
from tcobench.errors import ImageError
from tcobench.images import wheelhouse
from tcobench.images.catalog import PROVENANCE_ARGS, read_dockerfile
from tcobench.schemas import GpuConfig, ImageRecord, ImageSpec
from tcobench.settings import safe_host_name
from tcobench.tasks.engine.local import free_port
from tcobench.tasks.engine.model import file_sha256
from tcobench.tasks.engine.recipes import recipe_for
from tcobench.tasks.engine.recipes.base import SmokeAddress
from tcobench.tasks.host.docker_client import describe_host, engine_address, is_local, run_to_completion
from tcobench.tasks.host.gpu import vendor_for
from tcobench.tasks.runs import git_revision

__all__ = [
    "SPEC_HASH_LABEL",
    "BuildOutcome",
    "OnLog",
    "build_image",
    "built_outcome",
    "image_record",
    "push_image",
    "smoke_test",
]

SPEC_HASH_LABEL = "io.tcobench.spec-hash"
OnLog = Callable[[str], None]


@dataclass(frozen=True)
class BuildOutcome:
    """What a build produced (or found already built)."""

    spec: ImageSpec
    reference: str
    image_id: str
    size_bytes: int
    spec_hash: str
    action: str  # built or unchanged
    build_ns: int
    pins: dict[str, str]
    base_image: str
    base_digest: str | None


def _resolve_args(spec: ImageSpec, docker_dir: Path, overrides: Mapping[str, str]) -> dict[str, str]:
    info = read_dockerfile(spec, docker_dir)
    unknown = sorted(set(overrides) - set(info.args))
    if unknown:
        raise ImageError(
            f"--build-arg {unknown[0]} is not an ARG of docker/{spec.dockerfile}; it has: "
            f"{', '.join(a for a in info.args if a not in PROVENANCE_ARGS)}"
        )
    args = {k: v for k, v in info.args.items() if v is not None and k not in PROVENANCE_ARGS}
    args.update(spec.build_args)
    args.update(overrides)
    missing = [k for k, v in info.args.items() if v is None and k not in PROVENANCE_ARGS and not args.get(k)]
    if missing:
        raise ImageError(
            f"docker/{spec.dockerfile} pins no default for {', '.join(missing)}: pass --build-arg "
            f"{missing[0]}=... (from a published source), see the comment beside it"
        )
    if spec.version_arg not in args or "BASE_IMAGE" not in args:
        raise ImageError(f"docker/{spec.dockerfile} must declare ARG BASE_IMAGE and ARG {spec.version_arg}")
    return args


def _wheelhouse(spec: ImageSpec, version: str, target: Path) -> str | None:
    """Copy the spec's wheel into ``target`` (built once per build setting: images/wheelhouse.py); its sha256."""
    if spec.wheel is None:
        return None
    requirement = f"{spec.wheel}=={version}"
    try:
        made = wheelhouse.wheel(requirement)
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(made, target / made.name)
    except (wheelhouse.WheelError, OSError) as exc:
        raise ImageError(f"cannot get the wheel of {requirement} for image {spec.name}: {exc}") from exc
    return file_sha256(target / made.name)


def _base_digest(client: docker.DockerClient, base: str) -> str | None:
    """Repo digest (or id) of the base image when the daemon already has it; None when the build will pull it."""
    try:
        image = client.images.get(base)
    except ImageNotFound:
        return None
    except (APIError, DockerException) as exc:
        raise ImageError(f"cannot inspect base image {base}: {exc}") from exc
    digests = image.attrs.get("RepoDigests") or []
    return str(digests[0].split("@", 1)[1]) if digests else str(image.id)


def _spec_hash(dockerfile: str, context: Path, pins: Mapping[str, str], base_digest: str | None) -> str:
    files = {str(p.relative_to(context)): file_sha256(p) for p in sorted(context.rglob("*")) if p.is_file()}
    blob = json.dumps(
        {"dockerfile": dockerfile, "files": files, "pins": dict(pins), "base": base_digest}, sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _existing(client: docker.DockerClient, reference: str) -> Image | None:
    try:
        return client.images.get(reference)
    except ImageNotFound:
        return None


def _stream_build(
    client: docker.DockerClient, context: Path, reference: str, args: dict[str, str], on_log: OnLog | None
) -> None:
    try:
        stream = client.api.build(
            path=str(context),
            dockerfile="Dockerfile",
            tag=reference,
            buildargs=args,
            network_mode="host",
            rm=True,
            forcerm=True,
            decode=True,
        )
        for message in stream:
            if "error" in message:
                detail = message.get("errorDetail", {}).get("message") or message["error"]
                raise ImageError(f"building {reference} failed: {' '.join(str(detail).split())}")
            text = str(message.get("stream") or message.get("status") or "").rstrip()
            if text and on_log is not None:
                for line in text.splitlines():
                    on_log(line)
    except (APIError, DockerException) as exc:
        raise ImageError(f"building {reference} failed: {' '.join(str(exc).split())}") from exc


def build_image(
    client: docker.DockerClient,
    spec: ImageSpec,
    docker_dir: Path,
    overrides: Mapping[str, str] | None = None,
    force: bool = False,
    on_log: OnLog | None = None,
) -> BuildOutcome:
    """Build ``spec`` (classic builder, host network), or report it unchanged; ImageError naming what failed."""
    args = _resolve_args(spec, docker_dir, overrides or {})
    version, base = args[spec.version_arg], args["BASE_IMAGE"]
    reference = f"{spec.repository}:{version}"
    base_digest = _base_digest(client, base)
    dockerfile = (docker_dir / spec.dockerfile).read_text("utf-8")
    with tempfile.TemporaryDirectory(prefix=f"tcobench-build-{spec.name}-") as tmp:
        context = Path(tmp)
        wheel_sha = _wheelhouse(spec, version, context / "wheelhouse")
        spec_hash = _spec_hash(dockerfile, context, args, base_digest)
        (context / "Dockerfile").write_text(dockerfile, "utf-8")
        found = _existing(client, reference)
        if found is not None and not force and (found.labels or {}).get(SPEC_HASH_LABEL) == spec_hash:
            return _outcome(spec, reference, found, spec_hash, "unchanged", 0, args, base_digest)
        provenance = {
            "BASE_DIGEST": base_digest or "pulled-at-build",
            "BUILD_TIME": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "GIT_REVISION": git_revision() or "unknown",
            "SPEC_HASH": spec_hash,
            "IMAGE_NAME": spec.name,
        }
        if wheel_sha is not None:
            provenance["ARCHIVE_SHA256"] = wheel_sha
        started = time.monotonic_ns()
        _stream_build(client, context, reference, {**args, **provenance}, on_log)
        elapsed = time.monotonic_ns() - started
    image = client.images.get(reference)
    return _outcome(spec, reference, image, spec_hash, "built", elapsed, args, base_digest)


def built_outcome(client: docker.DockerClient, spec: ImageSpec, docker_dir: Path) -> BuildOutcome:
    """The image a previous build left for ``spec`` (as tagged now); ImageError when there is none."""
    args = _resolve_args(spec, docker_dir, {})
    reference = f"{spec.repository}:{args[spec.version_arg]}"
    image = _existing(client, reference)
    if image is None:
        raise ImageError(
            f"image {reference} ({spec.name}) is not built on this Docker host: run "
            f"`tcobench images build {spec.name}` first"
        )
    labels = image.labels or {}
    base_digest = labels.get("io.tcobench.base-digest")
    return _outcome(
        spec,
        reference,
        image,
        labels.get(SPEC_HASH_LABEL, "unknown"),
        "unchanged",
        0,
        args,
        base_digest if base_digest not in (None, "unknown") else None,
    )


def _outcome(
    spec: ImageSpec,
    reference: str,
    image: Image,
    spec_hash: str,
    action: str,
    build_ns: int,
    pins: dict[str, str],
    base_digest: str | None,
) -> BuildOutcome:
    return BuildOutcome(
        spec=spec,
        reference=reference,
        image_id=str(image.id),
        size_bytes=int(image.attrs.get("Size") or 0),
        spec_hash=spec_hash,
        action=action,
        build_ns=build_ns,
        pins=dict(pins),
        base_image=pins["BASE_IMAGE"],
        base_digest=base_digest,
    )


def _gpu_available(client: docker.DockerClient, spec: ImageSpec, local: bool) -> bool:
    checks = vendor_for(spec.vendor).doctor_checks(Path("/"), client.info(), local)
    return bool(checks) and all(c.status.value == "ok" for c in checks)


def smoke_test(client: docker.DockerClient, outcome: BuildOutcome, docker_host: str | None, gpu_check: bool) -> str:
    """Start the image's engine and return the version it reports; with ``gpu_check`` (and a GPU of the
    image's vendor on the host) also prove the GPU is visible inside. ImageError otherwise."""
    bind, connect = engine_address(docker_host)
    address = SmokeAddress(bind, connect, free_port())
    version = recipe_for(outcome.spec.engine).smoke(client, outcome.image_id, address)
    vendor = vendor_for(outcome.spec.vendor)
    command = vendor.visible_command()
    local = is_local(docker_host)
    if gpu_check and command is not None and _gpu_available(client, outcome.spec, local):
        options = vendor.options(GpuConfig(vendor=outcome.spec.vendor), local)
        code, output = run_to_completion(
            client,
            outcome.image_id,
            command[1:],
            entrypoint=command[:1],
            environment=options.environment,
            **options.create_kwargs,
        )
        if code != 0:
            raise ImageError(
                f"smoke test of {outcome.reference}: the GPU is not visible inside ({' '.join(command)} "
                f"exited with code {code}: {' '.join(output.split())[:200]})"
            )
    return version


def push_image(client: docker.DockerClient, outcome: BuildOutcome, registry: str, on_log: OnLog | None = None) -> str:
    """Tag ``registry/repository:tag`` and push it; returns ``registry/repository@sha256:...``."""
    repository = f"{registry.rstrip('/')}/{outcome.spec.repository}"
    tag = outcome.reference.rsplit(":", 1)[1]
    digest = None
    try:
        client.images.get(outcome.image_id).tag(repository, tag)
        for message in client.api.push(repository, tag=tag, stream=True, decode=True):
            if "error" in message:
                raise ImageError(f"pushing {repository}:{tag} failed: {' '.join(str(message['error']).split())}")
            digest = (message.get("aux") or {}).get("Digest") or digest
            if on_log is not None and message.get("status"):
                on_log(f"{message.get('id', '')} {message['status']}".strip())
    except (APIError, DockerException) as exc:
        raise ImageError(f"pushing {repository}:{tag} failed: {' '.join(str(exc).split())}") from exc
    if not digest:
        raise ImageError(f"pushing {repository}:{tag}: the registry returned no digest")
    return f"{repository}@{digest}"


def image_record(
    outcome: BuildOutcome,
    docker_host: str | None,
    action: str | None = None,
    repo_digest: str | None = None,
    smoke_version: str | None = None,
) -> ImageRecord:
    """The ``images`` table row of a build (or of a push, with ``action='pushed'``)."""
    now = dt.datetime.now(dt.UTC)
    host = socket.gethostname() if is_local(docker_host) else urlsplit(docker_host or "").hostname or "unknown"
    return ImageRecord(
        event_id=uuid.uuid4().hex,
        date=now.date().isoformat(),
        host=safe_host_name(host),
        ts_ns=int(now.timestamp() * 1e9),
        action=action or outcome.action,
        name=outcome.spec.name,
        reference=outcome.reference,
        spec_hash=outcome.spec_hash,
        image_id=outcome.image_id,
        repo_digest=repo_digest,
        size_bytes=outcome.size_bytes,
        build_ns=outcome.build_ns if action is None else 0,
        engine=outcome.spec.engine.value,
        engine_version=outcome.reference.rsplit(":", 1)[1],
        vendor=outcome.spec.vendor.value,
        base_image=outcome.base_image,
        base_digest=outcome.base_digest,
        pins=json.dumps(outcome.pins, sort_keys=True),
        smoke_version=smoke_version,
        docker_host=describe_host(docker_host),
        tool_version=__version__,
        git_revision=git_revision(),
    )
