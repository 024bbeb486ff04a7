"""The claim profile's warning on start (`run --profile claim`, `nightly --profile claim`): every setting below the
profile's minimum, per workload, once; the runs are stored with claim_grade = false and the reason."""

from __future__ import annotations

from collections.abc import Iterable

from rich.markup import escape

from tcobench.cli._common import err
from tcobench.schemas import WorkloadConfig

__all__ = ["warn_claim_shortfalls"]


def warn_claim_shortfalls(workloads: Iterable[WorkloadConfig]) -> None:
    """One warning line per claim-profile workload whose settings fall short at some concurrency level."""
    from tcobench.tasks.workload.profiles import claim_shortfalls

    seen: set[str] = set()
    for w in workloads:
        short = list(dict.fromkeys(s for c in w.concurrency for s in claim_shortfalls(w, c)))
        if not short or w.name in seen:
            continue
        seen.add(w.name)
        err.print(
            f"[yellow]WARNING[/]: workload {escape(w.name)}: below the claim profile's minimums: "
            f"{escape('; '.join(short))}; its runs are stored with claim_grade = false (nothing is raised "
            "for you: docs/claim-grade.md)",
            highlight=False,
        )
