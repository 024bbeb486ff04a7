"""Fixtures of the export tests: a store with a GPU fleet (tests/unit/conftest.py's ``fleet``) and a small store with
the runs the fleet lacks: a CPU run, and a run that failed before its first request."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.schemas import Phase, RunStatus
from tests.unit.factories import T0_NS, make_request, make_run


@pytest.fixture(scope="module")
def odd_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run ``cpu-ok`` (no GPU, three ok measured requests and one warm-up) and run ``failed-early`` (no request)."""
    from tcobench.tasks.store.store import RunRows, write_runs

    store = tmp_path_factory.mktemp("odd")
    cpu = make_run(run_id="cpu-ok", batch_id="b1")
    requests = [make_request(run_id="cpu-ok", phase=Phase.warmup, request_index=0)]
    requests += [
        make_request(
            run_id="cpu-ok",
            request_index=i,
            start_ns=T0_NS + 5_000_000_000 + i * 2_000_000_000,
            ttft_ns=(100 + 50 * i) * 1_000_000,
            e2e_ns=(1100 + 100 * i) * 1_000_000,
            decode_ns=(1000 + 50 * i) * 1_000_000,
            itl_ns=[10_000_000, (20 + i) * 1_000_000],
            chunks=3,
            prompt_tokens=10 + i,
            output_tokens=11,
        )
        for i in range(3)
    ]
    failed = make_run(
        run_id="failed-early",
        batch_id="b1",
        started_ns=T0_NS + 60 * 10**9,
        finished_ns=T0_NS + 61 * 10**9,
        measure_start_ns=None,
        measure_end_ns=None,
        status=RunStatus.failed,
        error="engine did not start",
    )
    write_runs(store, [RunRows(cpu, requests), RunRows(failed)])
    return store
