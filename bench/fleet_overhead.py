"""Fleet overhead: a fleet nightly over N `tcobench worker` processes on this machine, next to the in-process nightly.

Everything real on 127.0.0.1 (PostgreSQL, a Prefect server, SeaweedFS, ``--hosts`` workers, the zero-cost
endpoint); the same plan run as a fleet and in-process, side by side; figures: overhead per cell, host span per
cell, failed cells.

    .venv/bin/python bench/fleet_overhead.py --hosts 20 --cells 5

Design notes: docs/dev/architecture/bench-and-build.md#bench-fleet-overhead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from _common import ROOT, endpoint, load_average, machine
from orchestration_overhead import store_figures, write_plan

sys.path.insert(0, str(ROOT))
from tests.services import (  # noqa: E402  (a checkout's test services)
    PostgresServer,
    PrefectServer,
    S3Server,
    create_database,
    new_bucket_name,
)

POOL = "tcobench-bench"


def _s3_env(s3: S3Server) -> dict[str, str]:
    """What every store client needs for the S3 data: the server's address, region and keys (environment only)."""
    return {
        "AWS_ENDPOINT_URL_S3": f"http://{s3.endpoint}",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": s3.key_id,
        "AWS_SECRET_ACCESS_KEY": s3.secret,
    }


def _env(server: PrefectServer, s3: S3Server | None, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "TCOBENCH_", "AWS_"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update(server.client_env)
    env.update(_s3_env(s3) if s3 is not None else {})
    env.update(PREFECT_HOME=str(home), COLUMNS="200", PREFECT_LOGGING_LEVEL="WARNING")
    return env


def _store(pg: PostgresServer, s3: S3Server, name: str) -> str:
    """A new fleet store: a PostgreSQL catalog database and an S3 bucket of its own."""
    bucket = new_bucket_name(name)
    s3.filesystem().create_dir(bucket)  # type: ignore[attr-defined]
    return f"{create_database(pg.url, name)}?data=s3://{bucket}/night"


@contextmanager
def workers(
    server: PrefectServer, s3: S3Server | None, hosts: list[str], folder: Path, poll_s: float = 10.0
) -> Iterator[float]:
    """One `tcobench worker` per host; yields the seconds until every one was online."""
    started = time.monotonic()
    procs = []
    flags = ["--allow-root"] if os.geteuid() == 0 else []
    for host in hosts:
        log = (folder / f"worker-{host}.log").open("wb")
        procs.append(
            subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "tcobench"),
                    "worker",
                    "--host",
                    host,
                    "--pool",
                    POOL,
                    "--poll-s",
                    f"{poll_s:g}",
                    *flags,
                ],
                env=_env(server, s3, folder / f"home-{host}"),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    try:
        yield _wait_online(server, set(hosts), started, procs)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def _wait_online(server: PrefectServer, hosts: set[str], started: float, procs: list[subprocess.Popen[bytes]]) -> float:
    user, _, password = server.auth.partition(":")
    while time.monotonic() - started < 900:
        if any(p.poll() is not None for p in procs):
            raise SystemExit("a worker exited while starting; see its log")
        response = httpx.post(
            f"{server.api}/work_pools/{POOL}/workers/filter",
            json={},
            auth=(user, password),
            timeout=30,
            trust_env=False,
        )
        online = (
            {w["name"] for w in response.json() if w["status"] == "ONLINE"} if response.status_code == 200 else set()
        )
        if {f"tcobench-{h}" for h in hosts} <= online:
            return time.monotonic() - started
        time.sleep(2)
    raise SystemExit("workers not online after 900 s")


def night(
    server: PrefectServer, s3: S3Server | None, inventory: Path, matrix: Path, store: str, folder: Path
) -> dict[str, object]:
    cmd = [
        str(Path(sys.executable).parent / "tcobench"),
        "nightly",
        "-i",
        str(inventory),
        "-m",
        str(matrix),
        "--store",
        store,
    ]
    t0 = time.monotonic()
    done = subprocess.run(
        cmd, env=_env(server, s3, folder / "home-nightly"), capture_output=True, text=True, check=False
    )
    wall = time.monotonic() - t0
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:])
    return {"rc": done.returncode, "wall_s": wall, **store_figures(store)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--cells", type=int, default=5, help="cells per host")
    parser.add_argument("--settle-s", type=float, default=30.0, help="wait after the workers are online")
    parser.add_argument(
        "--poll-s",
        type=float,
        default=10.0,
        help="each worker's poll interval (tcobench worker's default: Prefect's 10 s)",
    )
    args = parser.parse_args()
    cells = args.hosts * args.cells
    print(
        f"# {machine()}; load {load_average()}; {args.hosts} workers x {args.cells} cells; workers poll every "
        f"{args.poll_s:g} s"
    )
    folder = Path(tempfile.mkdtemp(prefix="tcob-fleet-bench-"))
    pg = PostgresServer.start()
    s3 = S3Server.start()
    os.environ.update(_s3_env(s3))  # store_figures reads the stores from this process
    try:
        server = PrefectServer.start(pg.url)
        try:
            with endpoint(0, 0, 4, 1) as ep:
                inventory, matrix = write_plan(folder, ep.url, args.hosts, args.cells)
                fleet_inventory = folder / "fleet-inventory.toml"
                fleet_inventory.write_text(f'[fleet]\nwork_pool = "{POOL}"\npoll_s = 1\n' + inventory.read_text())
                hosts = [f"sim-{i:03d}" for i in range(args.hosts)]
                with workers(server, s3, hosts, folder, args.poll_s) as online_s:
                    print(f"{args.hosts} workers online in {online_s:.1f} s; load {load_average()}", flush=True)
                    time.sleep(args.settle_s)
                    print(f"night starts; load {load_average()}", flush=True)
                    results = {"fleet": night(server, s3, fleet_inventory, matrix, _store(pg, s3, "fleet"), folder)}
                print(f"fleet night: {results['fleet']}; load {load_average()}", flush=True)
                results["in-process"] = night(server, s3, inventory, matrix, _store(pg, s3, "inproc"), folder)
        finally:
            server.stop()
    finally:
        s3.stop()
        pg.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{'':24s} {'fleet':>12s} {'in-process':>12s}")
    rows = {}
    for mode, r in results.items():
        request = float(r["request_s"]) / cells  # type: ignore[arg-type]
        wall = float(r["wall_s"])  # type: ignore[arg-type]
        rows[mode] = {
            "rc": r["rc"],
            "wall_s": round(wall, 1),
            "wall_per_cell_s": round(wall / cells, 3),
            "request_per_cell_s": round(request, 4),
            "overhead_per_cell_s": round(wall / cells - request, 3),
            "host_span_per_cell_s": round(float(r["host_span_per_cell_s"]), 3),  # type: ignore[arg-type]
            "run_status": r["status"],
        }
    for key in rows["fleet"]:
        print(f"{key:24s} {rows['fleet'][key]!s:>12s} {rows['in-process'][key]!s:>12s}")
    print(json.dumps({"hosts": args.hosts, "cells": cells, "load_after": load_average(), **rows}))


if __name__ == "__main__":
    main()
