"""Write a fleet's set-up files from the installed package (``tcobench fleet init DIR``): no source checkout needed.

What is written: the central services' compose file and its build context (``compose.fleet.yaml``, ``fleet/``),
the control machine's env template (``fleet.env``), a GPU host's worker env template (``worker.env``), one systemd
unit per GPU host (``hosts/NAME/tcobench-worker.service``: the host's tcobench, its user), the smoke night's
matrix and endpoint (``smoke-matrix.toml``, ``zero_endpoint.py``) and ``CHECKLIST.md``, the steps filled in for
those hosts. Env files are mode 0600 (they are to hold secrets). An existing file is never overwritten unless
asked: the error names it and nothing is written. ``FleetTarget`` refuses what would write a broken unit.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from shlex import quote

from tcobench.errors import ConfigError
from tcobench.schemas import CONTROL_QUEUE

__all__ = ["FleetFile", "FleetTarget", "fleet_files", "write_fleet_files"]

_FLEET = "docker/fleet"
_HOST = re.compile(r"^[A-Za-z0-9._-]+$")
_USER = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")  # useradd's portable names
# a path systemd takes in ExecStart= as written: no spaces, quotes, specifiers (%), variables ($) or escapes
_UNIT_PATH = re.compile(r"^/[A-Za-z0-9._+@:/-]*$")


@dataclass(frozen=True)
class FleetFile:
    """One file to write: its path under the target folder, its text and its mode."""

    path: str
    text: str
    mode: int = 0o644


@dataclass(frozen=True)
class FleetTarget:
    """The GPU hosts the files are for: their inventory names, where tcobench is installed on them, who runs it."""

    hosts: tuple[str, ...]
    venv: str
    user: str = "tcobench"

    def __post_init__(self) -> None:
        if not self.hosts:
            raise ConfigError("give --host NAME for each GPU host (its name in the inventory)")
        for host in self.hosts:
            if not _HOST.match(host) or host == CONTROL_QUEUE:
                raise ConfigError(
                    f"--host {quote(host)} is not a host name (letters, digits, . _ -; not {CONTROL_QUEUE})"
                )
        if len(set(self.hosts)) != len(self.hosts):
            raise ConfigError(f"--host names a host twice: {' '.join(self.hosts)}")
        venv = PurePosixPath(self.venv)
        if not _UNIT_PATH.match(self.venv) or ".." in venv.parts or venv == PurePosixPath("/"):
            raise ConfigError(
                f"--venv {quote(self.venv)} is not an absolute path without spaces, quotes, % or $: give the venv "
                "tcobench is installed in on the GPU hosts, e.g. /opt/tcobench/venv"
            )
        if venv.parts[-2:] == ("bin", "tcobench"):
            raise ConfigError(
                f"--venv {self.venv} names the program, not its venv: give {venv.parent.parent} "
                "(the unit runs VENV/bin/tcobench)"
            )
        if not _USER.match(self.user):
            raise ConfigError(
                f"--user {quote(self.user)} is not a user name (lower-case letters, digits, _ and -, 32 at most, "
                "starting with a letter or _)"
            )

    @property
    def program(self) -> str:
        return str(PurePosixPath(self.venv) / "bin" / "tcobench")


def _read(path: str) -> str:
    node: Traversable = files("tcobench").joinpath(path)
    return node.read_text("utf-8")


def _fill(text: str, target: FleetTarget, host: str = "") -> str:
    values = {"@HOST@": host, "@HOSTS@": ", ".join(target.hosts), "@VENV@": target.venv, "@USER@": target.user}
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def fleet_files(target: FleetTarget) -> list[FleetFile]:
    """The set-up files, the units and the checklist filled in for ``target``."""
    unit = _read(f"{_FLEET}/tcobench-worker.service")
    return [
        FleetFile("compose.fleet.yaml", _read("docker/compose.fleet.yaml")),
        FleetFile("fleet/prefect-server.Dockerfile", _read(f"{_FLEET}/prefect-server.Dockerfile")),
        FleetFile("fleet/initdb/10-lake.sql", _read(f"{_FLEET}/initdb/10-lake.sql")),
        FleetFile("fleet/s3-identities.example.json", _read(f"{_FLEET}/s3-identities.example.json")),
        FleetFile("fleet.env", _read(f"{_FLEET}/fleet.env.example"), 0o600),
        FleetFile("worker.env", _read(f"{_FLEET}/worker.env.example"), 0o600),
        *(FleetFile(f"hosts/{host}/tcobench-worker.service", _fill(unit, target, host)) for host in target.hosts),
        FleetFile("smoke-matrix.toml", _read(f"{_FLEET}/smoke-matrix.toml")),
        FleetFile("zero_endpoint.py", _read(f"{_FLEET}/zero_endpoint.py")),
        FleetFile("CHECKLIST.md", _fill(_read(f"{_FLEET}/checklist.md"), target)),
    ]


def write_fleet_files(folder: Path, target: FleetTarget, force: bool = False) -> list[Path]:
    """Write the set-up files under ``folder`` (made if missing); the paths written. Refuses (ConfigError, nothing
    written) when a file exists and ``force`` is false."""
    planned = [(folder / f.path, f) for f in fleet_files(target)]
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
