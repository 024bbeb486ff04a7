"""Flow ``compact_store``: compact the results store (merge small files, cache per-run views, expire snapshots),
then check it; scheduled by the ``tcobench-compact-store`` deployment in prefect.yaml.

Wiring only: the steps are ``tasks.store.compact.compact_store`` and ``tasks.store.verify.verify_store`` (quick:
sizes and magic bytes; `tcobench store verify` decodes every file). The flow fails when the check finds a problem, so
the Prefect UI shows a red run and its artifact names what to look at.
"""

from __future__ import annotations

from tcobench.errors import StoreError
from tcobench.flows._orchestrator import flow, task
from tcobench.settings import Settings
from tcobench.tasks.report.artifacts import publish_summary
from tcobench.tasks.store.compact import CompactResult, compact_store
from tcobench.tasks.store.verify import verify_store

__all__ = ["compact"]

compact_task = task(compact_store, name="compact_store")
verify_task = task(verify_store, name="verify_store")
publish_task = task(publish_summary, name="publish_summary")


@flow(name="compact_store")
def compact(store: str | None = None, keep_days: float = 30.0) -> CompactResult:
    target = store or Settings().store
    result = compact_task(target, keep_days)
    check = verify_task(target, deep=False)
    lines = [
        f"# tcobench store compaction: {target}",
        "",
        f"{result.files_before} -> {result.files_after} data files in {result.seconds:.1f} s; per-run views "
        f"stored for {result.cached_runs} run(s); {result.expired_snapshots} snapshot(s) expired.",
        "",
        *[f"- {p.kind}: {p.subject}: {p.detail}" for p in check.problems],
    ]
    publish_task("\n".join(lines) + "\n", key="tcobench-store-compact", description="tcobench store compaction")
    if check.problems:
        raise StoreError(
            f"{len(check.problems)} problem(s) in {target} after compaction; run `tcobench store verify` there"
        )
    return result
