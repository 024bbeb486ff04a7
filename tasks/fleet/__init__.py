"""Fleet mode: each host's nightly cells run on that host through its Prefect worker.

    control (nightly flow)                                host N (tcobench worker --host N)
      load_plan -> host_parameters (no secrets)
      dispatch_and_gather: run_deployment(fleet-host,  --> fleet_host flow: run_cells on this host -> store
                           queue N), deadlines per host
      settle: cells from the store, failed rows for what never came

``params`` builds and checks what crosses to a host, ``gather`` follows the hosts' runs, ``settle`` reads the
outcome back from the store, ``worker`` runs Prefect's worker for one host.
"""

from __future__ import annotations

from tcobench.tasks.fleet.gather import (
    FINAL_STATES,
    HostOutcome,
    HostTrack,
    Observation,
    dispatch_and_gather,
    judge,
    worker_name,
)
from tcobench.tasks.fleet.params import (
    cells_from_parameters,
    host_parameters,
    prices_from_parameters,
    refuse_remote_engines,
    refuse_secrets,
    secret_values,
)
from tcobench.tasks.fleet.settle import batch_rows, settle
from tcobench.tasks.fleet.worker import (
    WORKER_HOST_ENV,
    WorkerSpec,
    check_worker_host,
    die_with_parent,
    ensure_pool,
    ensure_queues,
    run_worker,
    worker_command,
    worker_environment,
)

__all__ = [
    "FINAL_STATES",
    "WORKER_HOST_ENV",
    "HostOutcome",
    "HostTrack",
    "Observation",
    "WorkerSpec",
    "batch_rows",
    "cells_from_parameters",
    "check_worker_host",
    "die_with_parent",
    "dispatch_and_gather",
    "ensure_pool",
    "ensure_queues",
    "host_parameters",
    "judge",
    "prices_from_parameters",
    "refuse_remote_engines",
    "refuse_secrets",
    "run_worker",
    "secret_values",
    "settle",
    "worker_command",
    "worker_environment",
    "worker_name",
]
