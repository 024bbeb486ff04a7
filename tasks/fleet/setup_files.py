"""Write a fleet's set-up files from the installed package (``tcobench fleet init DIR``): no source checkout needed.

What is written (docs/fleet.md's checklist says where each goes): the central services' compose file and its build
context (``compose.fleet.yaml``, ``fleet/``), the control machine's env template (``fleet.env``), a GPU host's worker
env template (``worker.env``), the worker's systemd unit (``tcobench-worker.service``) and the smoke night's matrix
(``smoke-matrix.toml``). Env files are written mode 0600 (they are to hold secrets). An existing file is never
overwritten unless asked: the error names it and nothing is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from tcobench.errors import ConfigError

__all__ = ["FleetFile", "fleet_files", "write_fleet_files"]

_FLEET = "docker/fleet"


@dataclass(frozen=True)
class FleetFile:
    """One file to write: its path under the target folder, its text and its mode."""

    path: str
    text: str
    mode: int = 0o644


def _read(path: str) -> str:
    node: Traversable = files("tcobench").joinpath(path)
    return node.read_text("utf-8")


def fleet_files(host: str, tcobench_command: str) -> list[FleetFile]:
    """The set-up files, the worker unit filled in for ``host`` running ``tcobench_command``."""
    unit = _read(f"{_FLEET}/tcobench-worker.service").replace("@HOST@", host).replace("@TCOBENCH@", tcobench_command)
    return [
        FleetFile("compose.fleet.yaml", _read("docker/compose.fleet.yaml")),
        FleetFile("fleet/prefect-server.Dockerfile", _read(f"{_FLEET}/prefect-server.Dockerfile")),
        FleetFile("fleet/initdb/10-lake.sql", _read(f"{_FLEET}/initdb/10-lake.sql")),
        FleetFile("fleet/s3-identities.example.json", _read(f"{_FLEET}/s3-identities.example.json")),
        FleetFile("fleet.env", _read(f"{_FLEET}/fleet.env.example"), 0o600),
        FleetFile("worker.env", _read(f"{_FLEET}/worker.env.example"), 0o600),
        FleetFile("tcobench-worker.service", unit),
        FleetFile("smoke-matrix.toml", _read(f"{_FLEET}/smoke-matrix.toml")),
    ]


def write_fleet_files(folder: Path, host: str, tcobench_command: str, force: bool = False) -> list[Path]:
    """Write the set-up files under ``folder`` (made if missing); the paths written. Refuses (ConfigError, nothing
    written) when a file exists and ``force`` is false."""
    planned = [(folder / f.path, f) for f in fleet_files(host, tcobench_command)]
    existing = [str(path) for path, _ in planned if path.exists()]
    if existing and not force:
        raise ConfigError(f"fleet init: {', '.join(existing)} already exist(s); pass --force to overwrite")
    written = []
    for path, item in planned:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, item.mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(item.text)
        tmp.chmod(item.mode)
        tmp.replace(path)
        written.append(path)
    return written
