"""`tcobench worker` (a host's Prefect worker) and `tcobench fleet deploy|status` (the fleet's deployments and workers).

Fleet mode is opt-in: an inventory with a ``[fleet]`` table. The Prefect server comes from PREFECT_API_URL and
PREFECT_API_AUTH_STRING in the environment, never from a file or an option (options show up in process lists).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from tcobench.cli._common import (
    PartialThresholdOpt,
    PricesOpt,
    StoreOpt,
    err,
    guard,
    out,
    prefect_defaults,
    settings_for,
    store_parameter,
)
from tcobench.errors import ConfigError

__all__ = ["register"]

_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
PoolOpt = Annotated[
    str, typer.Option("--pool", help=r"Prefect work pool (type process) \[env TCOBENCH_FLEET_POOL; tcobench-fleet].")
]


def _default_pool() -> str:
    from tcobench.settings import current

    return current().fleet_pool


def _need_server(command: str) -> None:
    from tcobench.settings import prefect_api_url

    if not prefect_api_url():
        raise ConfigError(
            f"tcobench {command} needs the fleet's Prefect server: set PREFECT_API_URL (e.g. "
            "http://prefect.example.internal:4200/api) and PREFECT_API_AUTH_STRING"
        )


def _worker(
    host: Annotated[str | None, typer.Option(help="This host's name in the inventory (its work queue).")] = None,
    control: Annotated[bool, typer.Option("--control", help="Serve the nightly's own queue instead.")] = False,
    pool: PoolOpt = "",
    limit: Annotated[int, typer.Option(min=1, help="Runs at a time on this worker.")] = 1,
    heartbeat_s: Annotated[
        int | None, typer.Option("--heartbeat-s", min=1, help=r"Seconds between heartbeats \[Prefect's 30].")
    ] = None,
    poll_s: Annotated[
        float | None, typer.Option("--poll-s", min=0.5, help=r"Seconds between polls for runs \[Prefect's 10].")
    ] = None,
    allow_root: Annotated[bool, typer.Option("--allow-root", help="Run even as root (not recommended).")] = False,
) -> None:
    """Run this host's Prefect worker: the nightly's cells for --host run here, next to this host's engines."""
    from tcobench.schemas import CONTROL_QUEUE
    from tcobench.tasks.fleet import WorkerSpec, run_worker

    if (host is None) == (not control):
        raise typer.BadParameter(
            "give --host NAME (a GPU host) or --control (the nightly's queue)", param_hint="--host"
        )
    if host is not None and (not _NAME.match(host) or host == CONTROL_QUEUE):
        raise typer.BadParameter(
            f"{host!r} is not a host name (letters, digits, . _ -; not {CONTROL_QUEUE!r})", param_hint="--host"
        )
    spec = WorkerSpec(
        queue=host or CONTROL_QUEUE,
        pool=pool or _default_pool(),
        limit=limit,
        heartbeat_s=heartbeat_s,
        poll_s=poll_s,
        allow_root=allow_root,
    )
    code = run_worker(spec, say=lambda message: err.print(message, highlight=False, markup=False))
    raise typer.Exit(code)


def _fleet_deploy(
    inventory: Annotated[Path, typer.Option("--inventory", "-i", help=r"Hosts (TOML) with a \[fleet] table.")],
    matrix: Annotated[list[Path], typer.Option("--matrix", "-m", help="Matrix file (TOML); repeat.")],
    cron: Annotated[str | None, typer.Option(help="Cron schedule of the nightly, e.g. '0 2 * * *'.")] = None,
    store: StoreOpt = None,
    prices: PricesOpt = None,
    partial_threshold: PartialThresholdOpt = 0.05,
) -> None:
    """Register the nightly (control queue, optional cron) and the per-host deployment on the Prefect server."""
    from tcobench.tasks.inventory import load_plan
    from tcobench.tasks.prices import load_prices

    plan = load_plan(inventory, list(matrix), load_prices(prices))
    if plan.inventory.fleet is None:
        raise ConfigError(f"{inventory}: no [fleet] table; fleet mode is opt-in (see `tcobench docs fleet`)")
    settings = settings_for(store)
    given = settings.store if store is not None or "store" in settings.model_fields_set else None
    if given is None:
        raise ConfigError("give the store every host writes to (--store or TCOBENCH_STORE)")
    _need_server("fleet deploy")
    prefect_defaults()
    from tcobench.flows.fleet import HOST_DEPLOYMENT, NIGHTLY_DEPLOYMENT
    from tcobench.flows.nightly import deploy_nightly
    from tcobench.tasks.fleet import refuse_secrets

    params = {
        "inventory": str(inventory.resolve()),
        "matrices": [str(m.resolve()) for m in matrix],
        "store": store_parameter(given),
        "prices": str(prices.resolve()) if prices else None,
        "partial_threshold": partial_threshold,
        "fail_on_failed_cells": True,
    }
    refuse_secrets(params, "nightly deployment parameters")
    pool = plan.inventory.fleet.work_pool
    deploy_nightly(pool, params, cron)
    hosts = ", ".join(h.name for h in plan.inventory.hosts)
    out.print(
        f"deployed nightly/{NIGHTLY_DEPLOYMENT} (queue control{', cron ' + repr(cron) if cron else ''}) and "
        f"fleet-host/{HOST_DEPLOYMENT} in work pool {pool!r}; start `tcobench worker --control` on this "
        f"machine and `tcobench worker --host NAME` on each of: {hosts}",
        highlight=False,
    )


def _fleet_status(pool: PoolOpt = "") -> None:
    """The pool's workers: which hosts are online, and when each was last heard from."""
    _need_server("fleet status")
    prefect_defaults()
    from prefect.client.orchestration import get_client

    from tcobench.settings import prefect_api_url

    name = pool or _default_pool()
    try:
        with get_client(sync_client=True) as client:
            workers = client.read_workers_for_work_pool(name)
            queues = client.read_work_queues(work_pool_name=name)
    except Exception as exc:
        raise ConfigError(
            f"cannot read work pool {name!r} from {prefect_api_url()}: "
            f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        ) from exc
    out.print(f"work pool {name}: queues {', '.join(sorted(q.name for q in queues)) or '-'}", highlight=False)
    for w in sorted(workers, key=lambda w: w.name):
        beat = w.last_heartbeat_time.strftime("%Y-%m-%d %H:%M:%S UTC") if w.last_heartbeat_time else "never"
        out.print(
            f"  {w.name:30s} {str(getattr(w.status, 'value', w.status)).lower():8s} last heartbeat {beat}",
            highlight=False,
        )


def _fleet_init(
    folder: Annotated[Path, typer.Argument(help="Folder to write the files into (made if missing).")],
    host: Annotated[
        list[str] | None,
        typer.Option(help="A GPU host's name in the inventory (its work queue); repeat for each host. Required."),
    ] = None,
    venv: Annotated[
        str | None,
        typer.Option(
            help="The venv tcobench is installed in ON THE GPU HOSTS (the unit runs VENV/bin/tcobench), "
            "e.g. /opt/tcobench/venv. Required."
        ),
    ] = None,
    user: Annotated[str, typer.Option(help="The service user that runs the worker on the GPU hosts.")] = "tcobench",
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")] = False,
) -> None:
    """Write the fleet's set-up files from the installed package: compose file, env templates, one worker unit per
    GPU host, the smoke night and a checklist filled in for those hosts."""
    from tcobench.tasks.fleet.setup_files import FleetTarget, write_fleet_files

    if not host:
        raise typer.BadParameter(
            "give --host NAME for each GPU host (its name in the inventory): its worker unit is written for it",
            param_hint="--host",
        )
    if venv is None:
        raise typer.BadParameter(
            "give --venv PATH, where tcobench is installed on the GPU hosts (e.g. /opt/tcobench/venv): their "
            "worker units run PATH/bin/tcobench",
            param_hint="--venv",
        )
    try:
        target = FleetTarget(tuple(host), venv, user)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None
    for path in write_fleet_files(folder, target, force):
        out.print(f"wrote {path}", highlight=False, markup=False, soft_wrap=True)
    out.print(
        f"next: {folder / 'CHECKLIST.md'} (ports, service user, images and weights, units, smoke night); "
        "every step in full: tcobench docs fleet",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command("worker")(guard(_worker))
    fleet = typer.Typer(
        help="Fleet mode: deployments on the Prefect server and the hosts' workers.", no_args_is_help=True
    )
    fleet.command("deploy")(guard(_fleet_deploy))
    fleet.command("status")(guard(_fleet_status))
    fleet.command("init")(guard(_fleet_init))
    app.add_typer(fleet, name="fleet")
