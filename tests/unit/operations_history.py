"""A simulated nightly history for the operations views (environment_changes, measured_adaptation,
availability_since) and for `tcobench history --availability | --changes` and `compare --adaptation`.

Nights 0-6 start at T0_NS + night days (night n's batch is "n<n>"); cell y starts 1 h after cell x.

- amd-01 (platform amd-mi300x, cells x and y, ROCm): a slow first start: night 0 both cells fail (engine), night 1
  both fail (infrastructure), night 2 serves. ROCm 6.2 until night 3; 6.3 from night 4, where both cells fail
  (platform), and night 5 cell x fails (platform), y is ok; night 6 ok. Its driver reads 6.8.5 throughout.
- amd-02 (amd-mi300x, cell x): night 5 fails (engine), night 6 fails (harness): never adapted.
- nv-01 (nvidia-h100-sxm, cell x, CUDA 12.4, driver 550.54): ok every night but night 5 (harness) and night 6 (a failure
  stored before failure classes: no class, counted as unknown). Kernel 6.1.0 until night 2, 6.8.0 from night 3;
  image vllm/vllm-openai digest sha256:aa until night 3, sha256:bb from night 4. One run outside a nightly (night 1
  + 5 h) read its host facts on the client, whose kernel is 5.15.0: not a change of nv-01's kernel.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from tcobench.schemas import FailureClass, RunRecord, RunStatus
from tests.unit.factories import T0_NS, make_run

__all__ = ["DAY", "H", "history"]

H = 3_600_000_000_000  # ns per hour
DAY = 24 * H
P, E, HARNESS, INFRA = FailureClass.platform, FailureClass.engine, FailureClass.harness, FailureClass.infrastructure


def _run(
    host: str, cell: str, night: int, failure: FailureClass | None = None, failed: bool = False, **facts: Any
) -> RunRecord:
    start = T0_NS + night * DAY + (H if cell == "y" else 0)
    not_ok = failed or failure is not None
    return make_run(
        date=_date(start),
        run_id=f"{host}-{cell}-{night}",
        batch_id=f"n{night}",
        host=host,
        cell=f"{host}/{cell}",
        started_ns=start,
        finished_ns=start + H // 2,
        status=RunStatus.failed if not_ok else RunStatus.ok,
        error="boom" if not_ok else None,
        failure_class=failure,
        site_key="datacenter",
        ops_key="default",
        **facts,
    )


def _date(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns / 1e9, dt.UTC).date().isoformat()


def _amd01(night: int, cell: str) -> RunRecord:
    failure = {0: E, 1: INFRA, 4: P}.get(night) or (P if (night, cell) == (5, "x") else None)
    rocm = "6.2" if night <= 3 else "6.3"
    return _run("amd-01", cell, night, failure, hardware_key="amd-mi300x", driver_version="6.8.5", rocm_version=rocm)


def _nv01(night: int) -> RunRecord:
    return _run(
        "nv-01",
        "x",
        night,
        {5: HARNESS}.get(night),
        failed=night == 6,
        hardware_key="nvidia-h100-sxm",
        driver_version="550.54",
        cuda_version="12.4",
        host_kernel="6.1.0" if night <= 2 else "6.8.0",
        engine_kind="container",
        image="vllm/vllm-openai",
        image_digest="sha256:aa" if night <= 3 else "sha256:bb",
    )


def history() -> list[RunRecord]:
    """The module docstring's runs."""
    amd01 = [_amd01(n, cell) for n in range(7) for cell in ("x", "y")]
    amd02 = [_run("amd-02", "x", n, {5: E, 6: HARNESS}[n], hardware_key="amd-mi300x") for n in (5, 6)]
    nv01 = [_nv01(n) for n in range(7)]
    client = make_run(
        run_id="nv-01-adhoc",
        date=_date(T0_NS + DAY + 5 * H),
        batch_id="adhoc",
        host="nv-01",
        hardware_key="nvidia-h100-sxm",
        started_ns=T0_NS + DAY + 5 * H,
        finished_ns=T0_NS + DAY + 6 * H,
        host_facts_source="client",
        host_kernel="5.15.0",
        driver_version="550.54",
        cuda_version="12.4",
    )
    return [*amd01, *amd02, *nv01, client]
