"""A writer process for the store's concurrency and crash tests: commits runs of a known shape, one per commit.

    python -m tests.integration.store_writer STORE WRITER RUNS [REQUESTS]

Run i of writer w has run id ``w<w>-r<i>``, ``requests(i)`` requests and 2 telemetry samples, so a reader knows
exactly how many rows each visible run must have. Each commit prints ``committed <run id>`` once it returned.
"""

from __future__ import annotations

import sys

from tcobench.schemas import Phase
from tcobench.tasks.store.store import write_results
from tests.unit.factories import make_request, make_run, make_telemetry

__all__ = ["expected_requests", "main"]


def expected_requests(run_id: str, base: int) -> int:
    """Requests of a run this writer wrote: ``base`` plus 0-4, from its index."""
    return base + int(run_id.rsplit("-r", 1)[1]) % 5


def main(argv: list[str]) -> None:
    store, writer, runs = argv[0], argv[1], int(argv[2])
    base = int(argv[3]) if len(argv) > 3 else 20
    for i in range(runs):
        run_id = f"w{writer}-r{i}"
        n = expected_requests(run_id, base)
        requests = [
            make_request(run_id=run_id, phase=Phase.measure, request_index=k, itl_ns=[1_000_000] * 63) for k in range(n)
        ]
        telemetry = [make_telemetry(run_id=run_id, ts_ns=1_700_000_000_000_000_000 + k) for k in range(2)]
        write_results(store, make_run(run_id=run_id, batch_id=f"w{writer}"), requests, telemetry)
        print(f"committed {run_id}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
