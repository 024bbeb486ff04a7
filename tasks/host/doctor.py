"""run_doctor: preflight checks of a Docker host before containers start, as plain findings.

The usual reasons a GPU benchmark run fails or measures the wrong thing, turned into checks with a cause
and a fix each:

Design notes: docs/dev/architecture/hosts-and-engines.md#tasks-doctor.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tcobench.errors import EngineError
from tcobench.schemas import GpuVendor
from tcobench.tasks.host.docker_client import describe_host, docker_client, is_local
from tcobench.tasks.host.gpu import Check, CheckStatus, vendor_for

__all__ = ["DEFAULT_MIN_FREE_BYTES", "disk_check", "run_doctor"]

DEFAULT_MIN_FREE_BYTES = 30 * 2**30  # an Ollama GPU image (8-20 GB) plus a mid-size model
_GIB = 2**30


def _existing_parent(path: Path) -> Path:
    for candidate in (path, *path.parents):
        try:
            if candidate.exists():
                return candidate
        except OSError:
            continue
    return Path("/")


def disk_check(data_root: str | None, local: bool, min_free_bytes: int) -> Check:
    """Free space under the daemon's data root against what an image and a model need."""
    if not local:
        return Check("disk space", CheckStatus.skip, "remote Docker host: run `tcobench doctor` on that host")
    folder = _existing_parent(Path(data_root or "/var/lib/docker"))
    try:
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        return Check("disk space", CheckStatus.warn, f"cannot measure free space of {folder}: {exc}")
    need = f"{free / _GIB:.1f} GiB free under {folder}; images and models need at least {min_free_bytes / _GIB:.0f} GiB"
    if free < min_free_bytes:
        return Check("disk space", CheckStatus.fail, f"only {need}: free space or move the daemon's data-root")
    return Check("disk space", CheckStatus.ok, need)


def run_doctor(
    docker_host: str | None = None,
    min_free_bytes: int = DEFAULT_MIN_FREE_BYTES,
    root: Path = Path("/"),
) -> list[Check]:
    """Every check, in order; never raises for what it finds (a failed check says what to do)."""
    where = describe_host(docker_host)
    try:
        client = docker_client(docker_host, EngineError, timeout_s=15)
    except EngineError as exc:
        return [Check("Docker daemon", CheckStatus.fail, str(exc))]
    try:
        info = client.info()
        version = client.version()
    finally:
        client.close()
    local = is_local(docker_host)
    checks = [
        Check(
            "Docker daemon",
            CheckStatus.ok,
            f"Docker {version.get('Version')} (API {version.get('ApiVersion')}) at {where}, "
            f"data root {info.get('DockerRootDir')}",
        )
    ]
    for vendor in (GpuVendor.nvidia, GpuVendor.amd):
        checks.extend(vendor_for(vendor).doctor_checks(root, info, local))
    checks.append(disk_check(info.get("DockerRootDir"), local, min_free_bytes))
    return checks
