"""Orchestration overhead: `tcobench nightly` over simulated hosts x cells against the zero-cost endpoint.

Every simulated host (vendor cpu, price key cpu-generic-2c) runs the same matrix: one endpoint engine (the
zero-cost endpoint, pinned to core 1, no TTFT, no gaps, 4-token streams) x one model x ``--cells``
workloads (1 warm-up + 2 measured requests at concurrency 1). With ``--prefect server`` a real Prefect
server (``prefect server start`` on 127.0.0.1, its own PREFECT_HOME) is started first and the flow talks to
it through PREFECT_API_URL; ``--prefect off`` runs ``--no-prefect``.

Design notes: docs/dev/architecture/bench-and-build.md#bench-orchestration-overhead.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from _common import endpoint, load_average, machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_plan(folder: Path, url: str, hosts: int, cells: int) -> tuple[Path, Path]:
    inventory = folder / "inventory.toml"
    host = '[[hosts]]\nname = "sim-{:03d}"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n\n'
    inventory.write_text("".join(host.format(i) for i in range(hosts)))
    workloads = "".join(
        f'[[workloads]]\nname = "w{i}"\nmax_tokens = 4\nrequests = 2\nwarmup_requests = 1\nconcurrency = [1]\n\n'
        for i in range(cells)
    )
    matrix = folder / "matrix.toml"
    matrix.write_text(
        f'[[engines]]\nname = "zero"\nendpoint = "{url}"\nprotocol = "openai"\n\n'
        f'[[models]]\nname = "zero"\n\n{workloads}'
    )
    return inventory, matrix


def start_prefect_server(home: Path) -> tuple[subprocess.Popen[bytes], str, float]:
    port = _free_port()
    env = dict(
        os.environ,
        PREFECT_HOME=str(home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_LOGGING_LEVEL="WARNING",
    )
    prefect = Path(sys.executable).parent / "prefect"
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=(home / "server.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    api = f"http://127.0.0.1:{port}/api"
    while time.monotonic() - t0 < 180:
        try:
            if httpx.get(f"{api}/health", timeout=2, trust_env=False).status_code == 200:
                return proc, api, time.monotonic() - t0
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"Prefect server did not start in 180 s; see {home / 'server.log'}")


def store_figures(store: str | Path) -> dict[str, Any]:
    """Requests, their summed e2e time, the mean per-host span per cell and the run statuses, read through the
    store's catalog (any store URI; S3 credentials from this process's environment)."""
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.store.query import connect

    con = connect(str(store), load_prices(None))
    try:
        req = con.sql("SELECT count(*), sum(e2e_ns) FROM requests").fetchall()[0]
        spans = con.sql(
            "SELECT host, (max(finished_ns) - min(started_ns)) / 1e9 / count(*) FROM runs GROUP BY host"
        ).fetchall()
        status = con.sql("SELECT status, count(*) FROM runs GROUP BY 1").fetchall()
    finally:
        con.close()
    return {
        "requests": req[0],
        "request_s": (req[1] or 0) / 1e9,
        "host_span_per_cell_s": sum(s for _, s in spans) / max(len(spans), 1),
        "status": dict(status),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--cells", type=int, default=10, help="cells per host")
    parser.add_argument("--prefect", choices=("server", "off"), default="server")
    args = parser.parse_args()
    cells = args.hosts * args.cells
    print(f"# {machine()}; load {load_average()}; {args.hosts} hosts x {args.cells} cells, prefect {args.prefect}")
    with tempfile.TemporaryDirectory(prefix="tcob-orch-") as tmp, endpoint(0, 0, 4, 1) as ep:
        folder = Path(tmp)
        inventory, matrix = write_plan(folder, ep.url, args.hosts, args.cells)
        env = dict(os.environ, COLUMNS="200")
        server = None
        cmd = [
            str(Path(sys.executable).parent / "tcobench"),
            "nightly",
            "-i",
            str(inventory),
            "-m",
            str(matrix),
            "--store",
            str(folder / "store"),
        ]
        if args.prefect == "server":
            (folder / "prefect").mkdir()
            server, api, startup = start_prefect_server(folder / "prefect")
            env.update(PREFECT_API_URL=api, PREFECT_HOME=str(folder / "prefect"))
            print(f"prefect server up in {startup:.1f} s at {api}")
        else:
            cmd.append("--no-prefect")
        try:
            t0 = time.monotonic()
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            wall = time.monotonic() - t0
            rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        finally:
            if server is not None:
                server.terminate()
                server.wait(30)
        if done.returncode != 0:
            print(done.stdout[-3000:], done.stderr[-3000:])
        figures = store_figures(folder / "store")
    per_cell = wall / cells
    result = {
        "hosts": args.hosts,
        "cells": cells,
        "prefect": args.prefect,
        "rc": done.returncode,
        "wall_s": round(wall, 2),
        "wall_per_cell_s": round(per_cell, 4),
        "request_per_cell_s": round(figures["request_s"] / cells, 4),
        "overhead_per_cell_s": round(per_cell - figures["request_s"] / cells, 4),
        "host_span_per_cell_s": round(figures["host_span_per_cell_s"], 3),
        "peak_rss_mib": round(rss_mib),
        "requests": figures["requests"],
        "run_status": figures["status"],
        "load_after": load_average(),
    }
    for key, value in result.items():
        print(f"{key:22s} {value}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
