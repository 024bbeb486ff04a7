"""A fleet night through the outages of its two central services (issue 33, item 8), with real parts only.

The test starts its own PostgreSQL (the DuckLake catalog and the Prefect server's database, one server as in the
documented setup), its own SeaweedFS (the store's data files) and a Prefect server on that PostgreSQL, so it can
stop and start them on the same ports and data directories; the session's shared servers are never touched. Two
hosts (``tcobench worker`` processes on this machine) each measure one cell of three concurrency levels against
a zero-cost endpoint. One night, two faults in turn, each while a host is in the middle of a cell:

1. PostgreSQL stopped for 60 s while the hosts measure, then started again: the catalog and Prefect's API are gone
   together (the hosts' commits and their runs' Prefect calls wait: ``tasks.store.outage``, Prefect's client retries);
2. SeaweedFS killed (as a crash) and kept down for 60 s once the hosts measure again, so the level in progress is
   written while it is down.

What must hold (docs/reliability.md, "Central services"): every level of every cell has a run row, ok or failed
with its reason, and exactly one (a commit retried after the outage is not stored twice); every run's rows match
its commits row and ``tcobench store verify`` is clean (no half-written run); the night's exit status and its
markdown artifact say what the store says; and a run measured before an outage ended was committed after it (a
cell in flight finished through the outage rather than being lost).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_fleet import BIN, KEY_ENV, Fleet, _fleet_user, _night_markdown, _start_endpoint, newest_batch, query

from tests.conftest import S3Endpoint
from tests.services import PostgresServer, PrefectServer, S3Server, create_database, new_bucket_name, require

pytestmark = [pytest.mark.prefect, pytest.mark.fleet, pytest.mark.waits]

OUTAGE_S = 60.0  # each service is down this long (issue 33: "stopped for 60 s")
HOSTS = ("host-a", "host-b")
LEVELS = (1, 2, 3)
# each level: 4 measured requests of 12 tokens 100 ms apart, about 5 s at concurrency 1: long enough for the test
# to see a level start (the endpoint's request count) and stop a service while it is measured
WORKLOAD = (
    '[[workloads]]\nname = "steady"\nmax_tokens = 12\nrequests = 4\nwarmup_requests = 1\n'
    f"concurrency = [{', '.join(map(str, LEVELS))}]\n"
)


class Services:
    """This test's own PostgreSQL, SeaweedFS and Prefect server."""

    def __init__(self) -> None:
        self.pg: PostgresServer | None = None
        self.s3: S3Server | None = None
        self.prefect: PrefectServer | None = None

    def start(self) -> None:
        """SeaweedFS starts while PostgreSQL and then the Prefect server on it do (CI time)."""
        with ThreadPoolExecutor(1) as pool:
            s3 = pool.submit(S3Server.start)
            try:
                self.pg = PostgresServer.start()
                self.prefect = PrefectServer.start(self.pg.url)
            except RuntimeError as exc:
                failed: RuntimeError | None = exc
            else:
                failed = None
            try:
                self.s3 = s3.result()
            except RuntimeError as exc:
                failed = failed or exc
        if failed is not None:
            self.stop()
            require(f"cannot start the outage test's own PostgreSQL, SeaweedFS and Prefect server: {failed}")

    def stop(self) -> None:
        for server in (self.prefect, self.s3, self.pg):
            if server is not None:
                with contextlib.suppress(Exception):
                    server.stop()


@pytest.fixture(scope="module")
def outage_fleet() -> Iterator[tuple[Fleet, Services]]:
    services = Services()
    services.start()
    assert services.pg is not None and services.s3 is not None and services.prefect is not None
    root = Path(tempfile.mkdtemp(prefix="tcobench-outage-"))
    root.chmod(0o755)
    s3 = S3Endpoint(services.s3.endpoint, services.s3.key_id, services.s3.secret)
    secrets = {
        "AWS_ACCESS_KEY_ID": s3.key_id,
        "AWS_SECRET_ACCESS_KEY": s3.secret,
        "TCOBENCH_API_KEY": f"sk-{uuid.uuid4().hex}",
        KEY_ENV["host-a"]: f"sk-a-{uuid.uuid4().hex}",
    }
    catalog = create_database(services.pg.url, "outagelake")
    bucket = new_bucket_name("outage")
    fleet = Fleet(
        services.prefect, root, _fleet_user(), secrets, f"{catalog}?data=s3://{bucket}/night", catalog, s3, bucket
    )
    try:
        fleet.s3fs().create_dir(bucket)
        (root / "docker-config").mkdir()
        fleet.endpoints = {h: _start_endpoint(100, root / f"engine-{h}.log") for h in HOSTS}
        fleet.start_worker(*HOSTS)
        yield fleet, services
    finally:
        fleet.stop_worker(*fleet.workers)
        for endpoint in fleet.endpoints.values():
            endpoint.stop()
        services.stop()
        shutil.rmtree(root, ignore_errors=True)


def _served(fleet: Fleet) -> int:
    return sum(e.requests() for e in fleet.endpoints.values())


def _wait_measuring(fleet: Fleet, night: subprocess.Popen[bytes], since: int, what: str, timeout_s: float) -> None:
    """Until the hosts' endpoints have served 2 more requests than ``since`` (a level is being measured)."""
    deadline = time.monotonic() + timeout_s
    while _served(fleet) < since + 2:
        assert night.poll() is None, (
            f"the night ended before {what}: " + (fleet.root / "outage-night.log").read_text("utf-8", "replace")[-3000:]
        )
        assert time.monotonic() < deadline, f"no host measured within {timeout_s:g} s before {what}"
        time.sleep(0.2)


def test_a_night_rides_out_postgres_then_seaweedfs_down_for_a_minute(outage_fleet: tuple[Fleet, Services]) -> None:
    fleet, services = outage_fleet
    assert services.pg is not None and services.s3 is not None
    settings = "pickup_timeout_s = 120\nlost_after_s = 30\nhost_budget_s = 900\n"
    args = fleet.plan("outage", list(HOSTS), settings, WORKLOAD)
    started = time.monotonic()
    night = fleet.popen([str(BIN / "tcobench"), "nightly", *args, "--store", fleet.store], "outage-night")
    windows: dict[str, tuple[int, int]] = {}  # service -> (down, started again), ns since the epoch
    try:
        _wait_measuring(fleet, night, 0, "PostgreSQL's outage", 300)
        down = time.time_ns()
        services.pg.halt()
        time.sleep(OUTAGE_S)
        back = time.time_ns()  # the earliest it can answer again: resume() returns only once it does
        services.pg.resume()
        windows["PostgreSQL"] = (down, back)
        _wait_measuring(fleet, night, _served(fleet), "SeaweedFS's outage", 300)
        services.s3.halt()
        down = time.time_ns()
        time.sleep(OUTAGE_S)
        back = time.time_ns()
        services.s3.resume()
        windows["SeaweedFS"] = (down, back)
        code = night.wait(timeout=900)
    finally:
        if night.poll() is None:
            night.kill()
    wall = time.monotonic() - started
    output = (fleet.root / "outage-night.log").read_text("utf-8", "replace")
    batch = newest_batch(fleet)
    rows = query(
        fleet,
        "select r.run_id, r.cell, r.concurrency, r.status, r.error, r.measure_end_ns, c.committed_ns, "
        "c.requests, (select count(*) from requests q where q.run_id = r.run_id) as stored "
        f"from runs r left join commits c using (run_id) where r.batch_id = '{batch}' "
        "order by r.started_ns",
    )
    cells = {f"{h}/zero-{h}/zero/steady" for h in HOSTS}
    # nothing lost: every level of every cell has its run, or the cell has a failed row that says why (one row may
    # stand for a cell that failed before measuring); nothing twice: one row per run id, one ok run per level
    assert {r["cell"] for r in rows} == cells, (rows, output[-4000:])
    for cell in cells:
        mine = [r for r in rows if r["cell"] == cell]
        assert {r["concurrency"] for r in mine} == set(LEVELS) or any(r["status"] == "failed" for r in mine), mine
    assert all(r["error"] for r in rows if r["status"] == "failed"), rows
    assert len({r["run_id"] for r in rows}) == len(rows), rows
    ok = Counter((r["cell"], r["concurrency"]) for r in rows if r["status"] == "ok")
    assert set(ok.values()) <= {1}, ok
    assert all(r["committed_ns"] is not None and r["requests"] == r["stored"] for r in rows), rows  # whole runs
    # the night's exit status and its markdown say what the store says
    newest = {(r["cell"], r["concurrency"]): r for r in rows}  # oldest first: a retried level's newest row decides
    failed = {r["cell"]: r["error"] for r in newest.values() if r["status"] == "failed"}
    assert {r["status"] for r in rows} <= {"ok", "failed"}, rows
    assert code == (3 if failed else 0), (code, failed, output[-4000:])
    if failed:
        (line,) = [x for x in output.splitlines() if x.startswith("NightlyError:")]
        assert all(f"{cell} (" in line for cell in failed), line
    markdown = _night_markdown(fleet, batch)
    table = {
        m["cell"]: m["status"] for m in re.finditer(r"^\| (?P<cell>\S+) \| (?P<status>\w+) \|", markdown, re.MULTILINE)
    }
    assert {c: table.get(c) for c in cells} == {c: "failed" if c in failed else "ok" for c in cells}, markdown
    # a cell in flight went through each outage: a run measured before the service was started again was committed
    # after that (a writer that retries quickly commits before resume() has seen the service answer)
    for service, (_, up) in windows.items():
        through = [r for r in rows if r["status"] == "ok" and r["measure_end_ns"] < up < r["committed_ns"]]
        assert through, f"no run measured before {service} came back was committed after: {rows}"
    verify = fleet.run([str(BIN / "tcobench"), "store", "verify", "--store", fleet.store], "verify", 300)
    assert verify.returncode == 0 and "no problem found" in verify.stdout, verify.stdout + verify.stderr
    print(
        f"outage night: exit {code} in {wall:.1f} s; {len(rows)} runs, failed: {failed or 'none'}; "
        + "; ".join(f"{s} down {(u - d) / 1e9:.1f} s" for s, (d, u) in windows.items())
    )
