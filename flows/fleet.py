"""Fleet mode wiring: flow ``fleet-host`` (one host's cells, on that host) and the nightly's fan-out to it.

``fleet_host`` runs in the process Prefect's worker starts on the host (``tcobench worker --host NAME``): it dies
with its worker, refuses a run meant for another host, then runs the host's cells one after another exactly as
the in-process nightly does (engine on this host's loopback / local Docker socket, telemetry from this host's
devices, host facts detected here), writing each run to the shared store, its progress as lines of the run's
log (``tasks.progress``: a host's state every 30 s and at each cell and level, each level's result), and at the
end publishes two artifacts: the host's cells and one summary of its runs. It returns nothing through Prefect: the
store is the result.

Design notes: docs/dev/architecture/flows-and-fleet.md#flows-fleet.
"""

from __future__ import annotations

from typing import Any

from tcobench.flows._orchestrator import flow, inline, run_log
from tcobench.flows.benchmark import benchmark
from tcobench.schemas import FleetSettings, PriceTable
from tcobench.settings import Settings
from tcobench.tasks.fleet import (
    HostOutcome,
    cells_from_parameters,
    check_worker_host,
    die_with_parent,
    dispatch_and_gather,
    ensure_pool,
    ensure_queues,
    host_parameters,
    prices_from_parameters,
    refuse_remote_engines,
    settle,
)
from tcobench.tasks.fleet.nightly import CellResult, nightly_markdown, run_cells
from tcobench.tasks.inventory import NightlyPlan
from tcobench.tasks.progress import NightProgress, PlainSink
from tcobench.tasks.report.artifacts import publish_run_cards, publish_summary
from tcobench.tasks.runs import PARTIAL_THRESHOLD

__all__ = [
    "HOST_DEPLOYMENT",
    "NIGHTLY_DEPLOYMENT",
    "FleetNight",
    "deploy_host_flow",
    "fleet_host",
    "module_deployment",
    "run_fleet",
]

HOST_DEPLOYMENT = "tcobench-fleet-host"  # deployment of flow fleet-host: runs go to a host's queue
NIGHTLY_DEPLOYMENT = "tcobench-nightly"  # deployment of flow nightly on the control queue


@flow(name="fleet-host")
def fleet_host(
    host: dict[str, Any],
    batch_id: str,
    cells: list[dict[str, Any]],
    prices: dict[str, Any],
    store: str | None = None,
    attempts: int = 2,
    backoff_s: float = 5.0,
    partial_threshold: float = PARTIAL_THRESHOLD,  # absent from an older nightly's parameters: the default
) -> str:
    die_with_parent()
    check_worker_host(str(host.get("name")))
    settings = Settings()
    host_cells = cells_from_parameters(host, cells)
    refuse_remote_engines(host_cells)
    price_table, store_ref = prices_from_parameters(prices), store or settings.store
    progress = NightProgress(host_cells, PlainSink(run_log(), every_s=30.0), store_ref, price_table)  # worker's log
    results = run_cells(
        host_cells,
        inline(benchmark),
        price_table,
        store_ref,
        settings.model_cache,
        batch_id,
        attempts,
        backoff_s,
        partial_threshold,
        progress=progress.of(str(host.get("name"))),
    )
    publish_summary(
        nightly_markdown(batch_id, results),
        key="tcobench-fleet-host",
        description=f"tcobench nightly cells of host {host.get('name')}",
    )
    # one summary of the host's runs (its cells publish none: benchmark(summarise=False))
    publish_run_cards(
        store_ref,
        price_table,
        [i for r in results for i in r.run_ids],
        description=f"tcobench runs of host {host.get('name')}",
    )
    failed = [r.cell for r in results if r.status == "failed"]
    return f"{len(results) - len(failed)} of {len(results)} cells succeeded" + (
        f"; failed: {', '.join(failed)}" if failed else ""
    )


def module_deployment(fn: Any, name: str, pool: str, **options: Any) -> Any:
    """A deployment of flow ``fn`` in ``pool``, reached by its module path."""
    from prefect.types.entrypoint import EntrypointType

    # module path (tcobench.flows.fleet.fleet_host): importable wherever tcobench is installed, no source pull
    return fn.to_deployment(name=name, work_pool_name=pool, entrypoint_type=EntrypointType.MODULE_PATH, **options)


def deploy_host_flow(pool: str) -> None:
    """Create or update the ``fleet-host`` deployment in the pool (no default queue: each run names its host's)."""
    about = "One host's nightly cells, run on that host by its tcobench worker."
    module_deployment(fleet_host, HOST_DEPLOYMENT, pool, description=about).apply()


class FleetNight:
    """The fleet part of a night: each cell's result and each host's outcome."""

    def __init__(self, cells: list[CellResult], hosts: dict[str, HostOutcome]) -> None:
        self.cells, self.hosts = cells, hosts

    @property
    def host_lines(self) -> list[tuple[str, str, str | None]]:
        return [(h.host, h.status, h.reason) for h in self.hosts.values()]


def _log() -> Any:
    from prefect.logging import get_run_logger

    logger = get_run_logger()
    return logger.info


def run_fleet(
    plan: NightlyPlan,
    prices: PriceTable,
    store: str,
    batch_id: str,
    attempts: int,
    backoff_s: float,
    partial_threshold: float = PARTIAL_THRESHOLD,
) -> FleetNight:
    fleet: FleetSettings | None = plan.inventory.fleet
    assert fleet is not None  # run_fleet is only called for a fleet inventory
    hosts = plan.inventory.hosts
    ensure_pool(fleet.work_pool)
    ensure_queues(fleet.work_pool, [h.name for h in hosts])
    deploy_host_flow(fleet.work_pool)
    params = {
        h.name: host_parameters(
            h, plan.cells_of(h.name), batch_id, prices, store, attempts, backoff_s, partial_threshold
        )
        for h in hosts
    }
    budgets = {h.name: h.budget_s for h in hosts if h.budget_s is not None}
    outcomes = dispatch_and_gather(f"fleet-host/{HOST_DEPLOYMENT}", params, fleet, batch_id, _log(), budgets)
    return FleetNight(settle(store, prices, list(plan.cells), batch_id, outcomes, partial_threshold), outcomes)
