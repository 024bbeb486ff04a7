"""Flow ``nightly``: every host of the inventory in parallel, each host's cells one after another.

Wiring only: load and validate the whole plan (nothing starts on a bad file), submit one host task per
host, collect the cell results, write the night's report, list its flagged changes, post them to the webhook from
configuration, publish the markdown summary as a Prefect artifact. Parameters are file
paths, so a served or work-pool deployment can be scheduled with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcobench.schemas import RunStatus
from tcobench.settings import Settings
from tcobench.tasks.alerts import announce_night
from tcobench.tasks.artifacts import publish_summary
from tcobench.tasks.inventory import load_plan
from tcobench.tasks.nightly import CellResult, nightly_markdown, run_cells
from tcobench.tasks.prices import load_prices
from tcobench.tasks.runs import new_id

from ._orchestrator import flow, task
from .benchmark import benchmark

__all__ = ["NightlyResult", "nightly"]

load_plan_task = task(load_plan, name="load_plan")
run_host_task: Any = task(run_cells, name="run_host")  # submitted: a Prefect task or the plain stand-in
publish_summary_task = task(publish_summary, name="publish_summary")
announce_night_task = task(announce_night, name="announce_night")  # report, flags, webhook


@dataclass(frozen=True)
class NightlyResult:
    batch_id: str
    cells: list[CellResult]
    markdown: str

    @property
    def failed(self) -> list[CellResult]:
        return [c for c in self.cells if c.status is RunStatus.failed]


@flow(name="nightly")
def nightly(
    inventory: str,
    matrices: list[str],
    store: str | None = None,
    prices: str | None = None,
    attempts: int = 2,
    backoff_s: float = 5.0,
) -> NightlyResult:
    settings = Settings()
    store_path = Path(store) if store else settings.store
    price_table = load_prices(Path(prices) if prices else None)
    plan = load_plan_task(Path(inventory), [Path(m) for m in matrices], price_table)
    batch_id = new_id()
    futures = [
        run_host_task.submit(
            plan.cells_of(host.name),
            benchmark,
            price_table,
            store_path,
            settings.model_cache,
            batch_id,
            attempts,
            backoff_s,
        )  # fmt: skip
        for host in plan.inventory.hosts
    ]
    cells = [cell for future in futures for cell in future.result()]
    markdown = announce_night_task(store_path, price_table, batch_id, cells, nightly_markdown(batch_id, cells))
    publish_summary_task(markdown, key="tcobench-nightly", description="tcobench nightly cells")
    return NightlyResult(batch_id, cells, markdown)
