"""Flow ``nightly``: every host of the inventory in parallel, each host's cells one after another.

Wiring only: load and validate the whole plan (nothing starts on a bad file); then either submit one host task
per host in this process (the default), or, for an inventory with ``[fleet]``, start one ``fleet-host`` run per
host on that host's own Prefect worker (``flows.fleet.run_fleet``, where each host publishes its runs' summary);
collect the cell results, publish one summary of the night's runs (in-process; a cell publishes none), write the
night's report, list its flagged changes, post them to the webhook from configuration, publish the markdown summary as a
Prefect artifact. Parameters are file paths, so a served or work-pool deployment can be scheduled with them;
``fail_on_failed_cells`` makes the flow run itself fail (a deployment's state says so). ``progress`` (in-process
only) receives each host's live progress and each level's result (``tasks.progress``); in fleet mode each host's
worker logs its own.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcobench.errors import Interrupted, NightlyError
from tcobench.flows._orchestrator import flow, inline, task
from tcobench.flows.benchmark import benchmark
from tcobench.flows.fleet import NIGHTLY_DEPLOYMENT, deploy_host_flow, module_deployment, run_fleet
from tcobench.schemas import CONTROL_QUEUE, PriceTable, RunStatus
from tcobench.settings import Settings
from tcobench.tasks.fleet import ensure_pool, ensure_queues
from tcobench.tasks.fleet.nightly import CellResult, nightly_markdown, run_cells
from tcobench.tasks.inventory import NightlyPlan, load_plan
from tcobench.tasks.load.shutdown import deferred
from tcobench.tasks.prices import load_prices
from tcobench.tasks.progress import NightProgress, ProgressSink
from tcobench.tasks.report.alerts import announce_night
from tcobench.tasks.report.artifacts import publish_run_cards, publish_summary
from tcobench.tasks.runs import PARTIAL_THRESHOLD, new_id

__all__ = ["NightlyResult", "deploy_nightly", "nightly"]

load_plan_task = task(load_plan, name="load_plan")
run_host_task: Any = task(run_cells, name="run_host")  # submitted: a Prefect task or the plain stand-in
publish_summary_task = task(publish_summary, name="publish_summary")
publish_run_cards_task = task(publish_run_cards, name="publish_run_cards")  # one summary of the night's runs
announce_night_task = task(announce_night, name="announce_night")  # report, flags, webhook


@dataclass(frozen=True)
class NightlyResult:
    batch_id: str
    cells: list[CellResult]
    markdown: str

    @property
    def failed(self) -> list[CellResult]:
        return [c for c in self.cells if c.status is RunStatus.failed]

    @property
    def not_ok(self) -> list[CellResult]:
        """Cells whose runs call for a non-zero exit (failed, or partial over the threshold), worst first."""
        return sorted((c for c in self.cells if c.exit_code != 0), key=lambda c: c.exit_code != 3)

    @property
    def failure_line(self) -> str:
        """One line naming every failed cell with its reason."""
        return f"{len(self.failed)} cell(s) failed: " + "; ".join(f"{c.cell} ({c.error})" for c in self.failed)


def _in_process(
    plan: NightlyPlan,
    prices: PriceTable,
    store: str,
    settings: Settings,
    batch_id: str,
    attempts: int,
    backoff_s: float,
    partial_threshold: float,
    sink: ProgressSink | None,
) -> list[CellResult]:
    night = NightProgress(plan.cells, sink, store, prices) if sink is not None else None
    futures = [
        run_host_task.submit(
            plan.cells_of(host.name),
            inline(benchmark),  # each cell's tasks are task runs of its host's task run, not a flow run per cell
            prices,
            store,
            settings.model_cache,
            batch_id,
            attempts,
            backoff_s,
            partial_threshold,
            night.of(host.name) if night is not None else None,
        )
        for host in plan.inventory.hosts
    ]
    cells: list[CellResult] = []
    with deferred():  # a signal stops each host's run in progress gracefully; its Interrupted comes back here
        for future in futures:
            try:
                cells.extend(future.result())
            except Interrupted:  # the night ends once every host's run in progress is stored, not at the first
                for other in futures:
                    with contextlib.suppress(Exception):  # a third signal (Stop) still stops at once
                        other.result()
                raise
    return cells


@flow(name="nightly")
def nightly(
    inventory: str,
    matrices: list[str],
    store: str | None = None,
    prices: str | None = None,
    attempts: int = 2,
    backoff_s: float = 5.0,
    partial_threshold: float = PARTIAL_THRESHOLD,
    fail_on_failed_cells: bool = False,
    progress: ProgressSink | None = None,
    profile: str | None = None,
) -> NightlyResult:
    settings = Settings()
    store_path = store or settings.store
    price_table = load_prices(Path(prices) if prices else None)
    plan = load_plan_task(Path(inventory), [Path(m) for m in matrices], price_table, profile or settings.profile)
    batch_id = new_id()
    hosts: list[tuple[str, str, str | None]] = []
    if plan.inventory.fleet is None:
        cells = _in_process(
            plan, price_table, store_path, settings, batch_id, attempts, backoff_s, partial_threshold, progress
        )
        publish_run_cards_task(
            store_path,
            price_table,
            [i for c in cells for i in c.run_ids],
            description=f"tcobench runs of nightly {batch_id}",
        )
    else:
        night = run_fleet(plan, price_table, store_path, batch_id, attempts, backoff_s, partial_threshold)
        cells, hosts = night.cells, night.host_lines
    markdown = announce_night_task(store_path, price_table, batch_id, cells, nightly_markdown(batch_id, cells, hosts))
    publish_summary_task(markdown, key="tcobench-nightly", description="tcobench nightly cells")
    result = NightlyResult(batch_id, cells, markdown)
    if fail_on_failed_cells and result.failed:
        raise NightlyError(result.failure_line)
    return result


def deploy_nightly(pool: str, parameters: dict[str, Any], cron: str | None) -> None:
    """Create or update the ``nightly`` deployment on the control queue (with a cron schedule if given)."""
    ensure_pool(pool)
    ensure_queues(pool, [CONTROL_QUEUE])
    about = "tcobench nightly: every host of the inventory, measured by its own worker."
    options: dict[str, Any] = {"work_queue_name": CONTROL_QUEUE, "parameters": parameters, "description": about}
    if cron:
        options["cron"] = cron
    module_deployment(nightly, NIGHTLY_DEPLOYMENT, pool, **options).apply()
    deploy_host_flow(pool)
