"""Settings from the environment (prefix TCOBENCH_); every default lives here."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "safe_host_name", "verified_extensions_file"]


def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def _state_home() -> Path:
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def verified_extensions_file() -> Path:
    """Where this user's processes remember the DuckDB extension files DuckDB has signature-checked
    (``tasks.store.lake``): under $XDG_CACHE_HOME (default ~/.cache)/tcobench."""
    return _cache_home() / "tcobench" / "duckdb-extensions-verified.json"


def safe_host_name(name: str) -> str:
    """A host name usable as a hive partition value: letters, digits, '.', '_' and '-' only."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", name.strip())
    return cleaned or "unknown-host"


class Settings(BaseSettings):
    """Where tcobench keeps its data and what it calls this host."""

    model_config = SettingsConfigDict(env_prefix="TCOBENCH_", extra="ignore")

    store: str = Field(
        default_factory=lambda: str(_data_home() / "tcobench" / "store"),
        description="The results store (TCOBENCH_STORE): a folder, sqlite://FOLDER or "
        "postgresql://HOST/DB?data=s3://BUCKET/PREFIX (see tasks/store/lake.py).",
    )
    model_cache: Path = Field(
        default_factory=lambda: _cache_home() / "tcobench" / "models",
        description="Where the bundled model file is assembled (TCOBENCH_MODEL_CACHE).",
    )
    host_name: str = Field(
        default_factory=socket.gethostname,
        description="Name of this host in stored rows (TCOBENCH_HOST_NAME).",
    )
    docker_dir: Path = Field(
        default_factory=lambda: Path(__file__).resolve().parent / "docker",
        description="Folder of the engine Dockerfiles the image catalog builds (TCOBENCH_DOCKER_DIR); default: the "
        "copy shipped inside the installed package.",
    )
    state_dir: Path = Field(
        default_factory=lambda: _state_home() / "tcobench",
        description="Where a running tcobench keeps its pid file (procs/), so a later run can reclaim what a "
        "crashed one left behind (TCOBENCH_STATE_DIR).",
    )
    stop_grace_s: float = Field(
        default=5.0,
        ge=0,
        le=600,
        description="Seconds requests in flight may take to finish after SIGINT/SIGTERM/SIGHUP or a run deadline "
        "(TCOBENCH_STOP_GRACE_S).",
    )
    ssh_command: str = Field(
        default="ssh",
        description="The ssh client for ssh:// Docker hosts, split like a shell line (TCOBENCH_SSH_COMMAND), e.g. "
        "'ssh -F /etc/tcobench/ssh_config'; tcobench adds -T, BatchMode=yes, ConnectTimeout, the user, port and host.",
    )
    registry: str | None = Field(
        default=None,
        description="Registry that `tcobench images push` pushes to, e.g. registry.example.com:5000 "
        "(TCOBENCH_REGISTRY).",
    )

    webhook_url: SecretStr | None = Field(
        default=None,
        description="URL a nightly posts its markdown summary and flags to, as JSON (TCOBENCH_WEBHOOK_URL): Slack, "
        "Mattermost and Teams incoming webhooks read its 'text'. A secret: never stored in rows, artifacts or logs.",
    )
    report_dir: Path | None = Field(
        default=None,
        description="Where a nightly writes its HTML report, nightly-<batch id>.html (TCOBENCH_REPORT_DIR); default: "
        "the store's reports/ folder.",
    )
    report_url: str | None = Field(
        default=None,
        description="Base URL under which report_dir is served (TCOBENCH_REPORT_URL); the Prefect artifact and the "
        "webhook then link the report there instead of by file:// path.",
    )
    profile: str | None = Field(
        default=None,
        description="Run profile for every nightly workload without its own profile (TCOBENCH_PROFILE; `tcobench "
        "nightly --profile claim` sets it): claim sets the defaults a published claim needs (docs/claim-grade.md).",
    )

    @field_validator("host_name")
    @classmethod
    def _safe_host(cls, value: str) -> str:
        return safe_host_name(value)
