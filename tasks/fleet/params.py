"""What the nightly hands a host's run (Prefect parameters), and the rule that no secret is ever among them.

Parameters are stored by the Prefect server and shown in its UI, so they carry data only: the host, its cells'
validated configurations, the price table, the batch id, the store's location, the retry policy and the night's
partial threshold (the host's run judges its cells by it, as the in-process night does; absent from an older
nightly's parameters, the host flow's default applies). Secrets (the Prefect auth string, S3 keys, API keys,
registry credentials) reach a host's run through its worker's environment. ``refuse_secrets`` checks every string
of the parameters for URL credentials (``scheme://user:password@``) and for the value of any secret-looking
variable of this process's environment, and names the parameter (never the value) when it finds one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from tcobench.errors import ConfigError
from tcobench.schemas import BenchmarkConfig, ClientPlacement, HostSpec, PriceTable
from tcobench.settings import variables_named
from tcobench.tasks.host.docker_client import describe_host, is_local
from tcobench.tasks.inventory import Cell
from tcobench.tasks.load.placement import placement_of_url
from tcobench.tasks.runs import PARTIAL_THRESHOLD

__all__ = [
    "cells_from_parameters",
    "host_parameters",
    "prices_from_parameters",
    "refuse_remote_engines",
    "refuse_secrets",
    "secret_values",
]

_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")
_SECRET_NAME = re.compile(r"SECRET|PASSWORD|PASSWD|TOKEN|AUTH_STRING|API_KEY|ACCESS_KEY|CREDENTIAL", re.IGNORECASE)
_MIN_SECRET_LEN = 6  # shorter values ("1", "true") would match everywhere and protect nothing


def host_parameters(
    host: HostSpec,
    cells: list[Cell],
    batch_id: str,
    prices: PriceTable,
    store: str,
    attempts: int,
    backoff_s: float,
    partial_threshold: float = PARTIAL_THRESHOLD,
) -> dict[str, Any]:
    """Parameters of one host's run (flow ``fleet-host``): plain JSON, checked by ``refuse_secrets``;
    ``partial_threshold``: the night's (``tcobench nightly --partial-threshold``)."""
    params = {
        "host": host.model_dump(mode="json", exclude_none=True),
        "batch_id": batch_id,
        "cells": [
            {"engine": c.engine, "model": c.model, "workload": c.workload, "config": c.config.model_dump(mode="json")}
            for c in cells
        ],
        "prices": prices.model_dump(mode="json"),
        "store": store,
        "attempts": attempts,
        "backoff_s": backoff_s,
        "partial_threshold": partial_threshold,
    }
    refuse_secrets(params, f"parameters of host {host.name}'s run")
    return params


def _validated(model: type[Any], data: Any, where: str) -> Any:
    try:
        return model.model_validate_json(json.dumps(data))
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ConfigError(f"{where}: {' '.join(str(exc).split())[:300]}") from exc


def cells_from_parameters(host: dict[str, Any], cells: list[dict[str, Any]]) -> list[Cell]:
    """The host's cells back from its run's parameters (validated again: they crossed a process boundary)."""
    spec: HostSpec = _validated(HostSpec, host, "fleet-host parameter host")
    return [
        Cell(
            spec,
            c["engine"],
            c["model"],
            c["workload"],
            _validated(BenchmarkConfig, c["config"], f"fleet-host cell {c.get('engine')}/{c.get('workload')}"),
        )
        for c in cells
    ]


def refuse_remote_engines(cells: list[Cell]) -> None:
    """On the host, before anything starts: every engine is on this host (fleet mode measures next to it).

    The plan was checked on the control machine; what "local" means is only known here (this worker's DOCKER_HOST,
    what ``localhost`` resolves to).
    """
    for cell in cells:
        engine = cell.config.engine
        if engine.container is not None and not is_local(engine.container.docker_host):
            raise ConfigError(
                f"cell {cell.label}: the Docker daemon {describe_host(engine.container.docker_host)} "
                "is not this host's; a fleet worker starts engines on its own host's Docker socket "
                "(unset DOCKER_HOST in the worker's environment, or point it at unix://...)"
            )
        if engine.url is not None and placement_of_url(engine.url) is not ClientPlacement.loopback:
            raise ConfigError(f"cell {cell.label}: endpoint {engine.url!r} is not on this host's loopback interface")


def prices_from_parameters(prices: dict[str, Any]) -> PriceTable:
    table: PriceTable = _validated(PriceTable, prices, "fleet-host parameter prices")
    return table


def secret_values() -> dict[str, str]:
    """{variable name: value} of this environment's variables whose names say they hold a secret."""
    return {k: v for k, v in variables_named(_SECRET_NAME).items() if len(v) >= _MIN_SECRET_LEN}


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}.{i}" if path else str(i))


def refuse_secrets(value: Any, what: str) -> None:
    """ConfigError naming the field (never the value) if ``value`` holds a URL password or a secret's value."""
    secrets = secret_values()
    for path, text in _strings(value, ""):
        if _URL_PASSWORD.search(text):
            raise ConfigError(
                f"{what}: {path} holds a URL with a password; give credentials through the "
                "environment of the workers instead"
            )
        for name, secret in secrets.items():
            if secret in text:
                raise ConfigError(
                    f"{what}: {path} contains the value of the secret variable {name}; secrets "
                    "reach hosts through their workers' environment, never as parameters"
                )
