"""Honest concurrency (issue 33, item 6): 100,000 streams against the zero-cost endpoint (bench/zero_endpoint.py,
its own process) are refused with one line naming the limit when the process cannot open them, and a level the
plan cannot reach runs at what it can, warned, with the configured and the reached concurrency stored side by side.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import LoadMode, RequestRecord, WorkloadConfig
from tcobench.tasks.load.limits import FD_HEADROOM, check_load, plan_bound, port_range, reached
from tests.faults.harness import error_lines, fault_env, tcobench
from tests.services import free_ports
from tests.store_helpers import store_rows
from tests.unit.factories import make_request

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    (port,) = free_ports(1)
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "bench" / "zero_endpoint.py"),
            "--port",
            str(port),
            "--selector",
            "epoll",
            "--tokens",
            "8",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and "http://" in proc.stdout.readline()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def test_100000_streams_are_refused_naming_the_limit(tmp_path: Path, endpoint: str) -> None:
    """Enough requests for every stream (the plan could reach 100,000): what stops it is this process's limits."""
    done = tcobench(
        "run",
        "--endpoint",
        endpoint,
        "--model",
        "zero",
        "--no-prefect",
        "--concurrency",
        "100000",
        "--requests",
        "100000",
        "--warmup",
        "0",
        env=fault_env(tmp_path),
    )
    assert done.returncode == 1, done.stderr[-3000:]
    (line,) = error_lines(done.stderr)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert line.startswith("ConfigError: workload.concurrency 100000 cannot be opened here: "), line
    assert "RLIMIT_NOFILE" in line or "net.ipv4.ip_local_port_range" in line, line
    if hard != resource.RLIM_INFINITY and hard < 100000 // 16 + FD_HEADROOM:  # under any client process count
        assert f"over this process's limit of {hard} (RLIMIT_NOFILE" in line
    assert not (tmp_path / "store").exists()


def test_a_level_the_plan_cannot_reach_runs_lowered_warned_and_stored_honestly(tmp_path: Path, endpoint: str) -> None:
    done = tcobench(
        "run",
        "--endpoint",
        endpoint,
        "--model",
        "zero",
        "--no-prefect",
        "--concurrency",
        "100000",
        "--requests",
        "40",
        "--warmup",
        "1",
        env=fault_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (
        "warning: workload.concurrency 100000 exceeds what the plan can reach: 40 in flight at most (requests "
        "40, warm-up 1, turns 1)"
    ) in done.stderr
    (row,) = store_rows(
        tmp_path / "store", "SELECT concurrency, concurrency_reached, n, client_saturated FROM run_summary"
    )
    assert row["concurrency"] == 100000 and 1 <= row["concurrency_reached"] <= 40 and row["n"] == 40, row
    assert row["client_saturated"] is not None  # the self-check ran and says what it saw
    assert "(reached " in done.stdout


def test_reached_is_the_most_requests_in_flight_at_once() -> None:
    def req(start: int, length: int) -> RequestRecord:
        return make_request(start_ns=start, e2e_ns=length)

    assert reached([]) == 0
    assert reached([req(0, 10), req(10, 10), req(20, 10)]) == 1  # back to back: an end before a start
    assert reached([req(0, 100), req(10, 10), req(15, 10), req(50, 10)]) == 3


def test_the_plan_bounds_a_closed_loop_with_a_count_only() -> None:
    assert plan_bound(WorkloadConfig(requests=40, warmup_requests=1)) == 40
    assert plan_bound(WorkloadConfig(requests=3, warmup_requests=8)) == 8  # phases do not overlap: the larger
    assert plan_bound(WorkloadConfig(requests=40, turns=4)) == 10  # conversations
    assert plan_bound(WorkloadConfig(duration_s=5)) is None
    assert plan_bound(WorkloadConfig(mode=LoadMode.poisson, rate=5)) is None


def test_a_level_over_the_port_range_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    ports = port_range()
    if ports is None:
        pytest.skip("this kernel does not say its local port range")
    monkeypatch.setattr("tcobench.tasks.load.limits._descriptors", lambda need: None)
    with pytest.raises(ConfigError, match=rf"over the {ports} local ports .*ip_local_port_range"):
        check_load(WorkloadConfig(requests=ports + 1, warmup_requests=0, concurrency=(ports + 1,), client_procs=1))
