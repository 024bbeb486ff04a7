"""Settings from the environment (prefix TCOBENCH_); every default lives here.

This module is the only reader (and, at start-up, the only writer) of the process environment
(tests/unit/test_settings_only_reader.py holds it): tcobench's own variables are fields of ``Settings``, which the
commands build once (with their flags as overrides) and pass down; the variables of others (Prefect, Docker, AWS,
XDG, the terminal) and the variable a config names for its API key are read by the small functions below. A child
process gets its environment from ``child_environment`` instead of this process's environment being changed.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

__all__ = [
    "Settings",
    "apply_prefect_defaults",
    "current",
    "aws_variables",
    "child_environment",
    "docker_host",
    "docker_tls",
    "prefect_api_url",
    "safe_host_name",
    "secret_named",
    "state_home",
    "terminal_columns",
    "user_name",
    "variables_named",
    "verified_extensions_file",
]

_OFF = ("off", "0", "false", "no")  # TCOBENCH_PREFECT values that switch Prefect off; anything else keeps it on


def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def state_home() -> Path:
    """$XDG_STATE_HOME, default ~/.local/state."""
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


def _tcobench_variables() -> dict[str, str]:
    """TCOBENCH_<FIELD> variables by field name (the name in any case; an empty value counts as unset)."""
    return {
        key[len("TCOBENCH_") :].lower(): value
        for key, value in os.environ.items()
        if value and key.upper().startswith("TCOBENCH_")
    }


class Settings(BaseModel):
    """Where tcobench keeps its data and what it calls this host.

    Each field not given to the constructor comes from its TCOBENCH_<FIELD> variable (as pydantic-settings would
    read it, without its import cost: every field is a scalar).
    """

    model_config = ConfigDict(extra="ignore")

    def __init__(self, **values: Any) -> None:
        super().__init__(
            **{**{k: v for k, v in _tcobench_variables().items() if k in type(self).model_fields}, **values}
        )

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
        default_factory=lambda: state_home() / "tcobench",
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
    metrics_textfile: Path | None = Field(
        default=None,
        description="Where a nightly writes the store's Prometheus metrics after the night, atomically, as `tcobench "
        "metrics --textfile` does (TCOBENCH_METRICS_TEXTFILE): a .prom file of node_exporter's textfile directory.",
    )
    profile: str | None = Field(
        default=None,
        description="Run profile for every nightly workload without its own profile (TCOBENCH_PROFILE; `tcobench "
        "nightly --profile claim` overrides it): claim sets the defaults a published claim needs "
        "(docs/claim-grade.md).",
    )

    prefect: bool = Field(
        default=True,
        description="Run the flows with Prefect (TCOBENCH_PREFECT; off, 0, false or no switch it off, as "
        "`--no-prefect` does): off runs the very same wiring as plain function calls.",
    )
    shape_tolerance: float = Field(
        default=0.10,
        description="How far a run's mean input or output length may be from the asked before view run_shape "
        "flags it, as a fraction in [0, 10) (TCOBENCH_SHAPE_TOLERANCE; `tcobench run --shape-tolerance`).",
    )
    downtime_min_nights: int = Field(
        default=14,
        ge=1,
        description="Host nights of a platform's nightly history below which the TCO's downtime term is left out "
        "as 'not enough history' (TCOBENCH_DOWNTIME_MIN_NIGHTS; view tco_scenarios, docs/cost-model.md#downtime).",
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="API key sent as `Authorization: Bearer` to an endpoint whose config names no api_key_env "
        "(TCOBENCH_API_KEY; `tcobench run --api-key`). A secret: never stored.",
    )
    fleet_pool: str = Field(
        default="tcobench-fleet",
        description="The fleet's Prefect work pool (TCOBENCH_FLEET_POOL).",
    )
    worker_host: str | None = Field(
        default=None,
        description="The host a fleet worker serves (TCOBENCH_WORKER_HOST, set by `tcobench worker` for its child): "
        "a run for another host is refused.",
    )
    store_wait_s: float = Field(
        default=120.0,
        description="Seconds a store write waits for another writer's lock (TCOBENCH_STORE_WAIT_S).",
    )
    store_outage_s: float = Field(
        default=300.0,  # longer than a database or object store restart takes
        description="Seconds a write waits for an unreachable store (TCOBENCH_STORE_OUTAGE_S).",
    )
    store_min_free_mb: float = Field(
        default=100.0,
        description="Free space (MiB) a store's folders must keep before a run starts (TCOBENCH_STORE_MIN_FREE_MB).",
    )
    duckdb_threads: int | None = Field(
        default=None,
        ge=1,
        description="Threads each DuckDB instance over a store may use (TCOBENCH_DUCKDB_THREADS); default: DuckDB's "
        "own, one per core. 1 suits processes that share the cores with others (docs/store.md#duckdb-threads).",
    )
    powercap_root: Path = Field(
        default=Path("/sys/class/powercap"),
        description="The powercap tree read for CPU energy (TCOBENCH_POWERCAP_ROOT), e.g. a copied or mounted /sys.",
    )
    vllm_python: Path | None = Field(
        default=None,
        description="A Python with vLLM, for engine.kind 'vllm' without engine.vllm.python (TCOBENCH_VLLM_PYTHON).",
    )

    @field_validator("prefect", mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        return value.strip().lower() not in _OFF if isinstance(value, str) else value

    @field_validator("shape_tolerance", mode="before")
    @classmethod
    def _fraction(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ValueError(f"TCOBENCH_SHAPE_TOLERANCE: not a number, got {value!r}") from None
        if isinstance(value, int | float) and not 0 <= value < 10:
            raise ValueError(f"TCOBENCH_SHAPE_TOLERANCE: {value:g} is not a fraction between 0 and 10")
        return value

    @field_validator("host_name")
    @classmethod
    def _safe_host(cls, value: str) -> str:
        return safe_host_name(value)


def secret_named(name: str) -> SecretStr | None:
    """The value of the environment variable ``name`` (a config names it, e.g. engine.api_key_env), read at use and
    never stored; None when it is unset or empty."""
    value = os.environ.get(name, "")
    return SecretStr(value) if value else None


def variables_named(pattern: re.Pattern[str]) -> dict[str, str]:
    """{name: value} of this environment's variables whose names match ``pattern`` (tasks.fleet.params: the
    secrets a parameter must not carry)."""
    return {k: v for k, v in os.environ.items() if pattern.search(k)}


def prefect_api_url() -> str | None:
    """PREFECT_API_URL: the Prefect server this process talks to; None for the in-process one."""
    return os.environ.get("PREFECT_API_URL") or None


def docker_host() -> str | None:
    """DOCKER_HOST: the Docker daemon when no host is given; None for the local socket."""
    return os.environ.get("DOCKER_HOST") or None


def docker_tls() -> tuple[str | None, bool]:
    """(DOCKER_CERT_PATH, DOCKER_TLS_VERIFY not "" or "0"), as the docker CLI reads them."""
    return os.environ.get("DOCKER_CERT_PATH"), os.environ.get("DOCKER_TLS_VERIFY", "1") not in ("", "0")


def aws_variables() -> dict[str, str]:
    """The standard AWS variables that are set (credentials, region, endpoint), for an S3 store's secret."""
    return {k: v for k, v in os.environ.items() if k.startswith("AWS_") and v}


def terminal_columns() -> str:
    """COLUMNS as given (a width or ""), for help and tables to fit the terminal."""
    return os.environ.get("COLUMNS", "")


def user_name() -> str:
    """USER, for a message that tells this user what to run."""
    return os.environ.get("USER", "$USER")


def child_environment(
    base: Mapping[str, str] | None = None,
    *,
    drop: tuple[str, ...] = (),
    defaults: Mapping[str, str] | None = None,
    **extra: str,
) -> dict[str, str]:
    """The environment of a child process: ``base`` (default: a copy of this process's), less ``drop``, with
    ``defaults`` where unset and ``extra`` always; this process's environment is left as it is."""
    env = dict(os.environ if base is None else base)
    for name in drop:
        env.pop(name, None)
    for name, value in (defaults or {}).items():
        env.setdefault(name, value)
    env.update(extra)
    return env


def apply_prefect_defaults(defaults: Mapping[str, str]) -> None:
    """Process start-up only: Prefect reads its settings (PREFECT_*) from this process's environment, so a command
    that is about to import Prefect sets its defaults there; a variable the user set wins."""
    for name, value in defaults.items():
        if not name.startswith("PREFECT_"):
            raise ValueError(f"apply_prefect_defaults: {name} is not a Prefect setting")
        os.environ.setdefault(name, value)


def current() -> Settings:
    """``Settings()`` of this process, or a ConfigError of one line naming the variable and why its value is bad."""
    try:
        return Settings()
    except ValidationError as exc:
        from tcobench.errors import ConfigError

        first = exc.errors()[0]
        name = f"TCOBENCH_{str(first['loc'][0]).upper()}" if first["loc"] else "TCOBENCH_*"
        reason = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(reason if reason.startswith(name) else f"{name}: {reason}, got {first['input']!r}") from None
