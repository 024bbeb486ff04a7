"""Client headroom: our load generator (tasks/load/measure.py) on core 0 against the zero-cost endpoint on core 1.

Three scenarios, each level run by us and (unless --no-anchor) by aiperf 0.13.0 from its own venv, same core:

  timing     TTFT 20 ms, gap 5 ms, 32 tokens, concurrency 1, 16 and 64: error of measured TTFT and of every
             inter-token gap against the configured values (p50, p99, ms)
  requests   short streams (TTFT 20 ms, gap 2 ms, 8 tokens), concurrency swept upwards: requests/s
  tokens     long streams (TTFT 20 ms, gap 10 ms, 256 tokens), concurrency swept upwards: streamed tokens/s

Design notes: docs/dev/architecture/bench-and-build.md#bench-client-headroom.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from _common import cpu_seconds, endpoint, load_average, machine
from _headroom import Scenario, figures

from tcobench.schemas import Protocol, WorkloadConfig
from tcobench.tasks.load.measure import measure
from tcobench.tasks.load.record import RunContext
from tcobench.tasks.load.selfcheck import run_fields
from tcobench.tasks.load.stream import Target

PROMPT = " ".join(["a"] * 16)


SCENARIOS = (
    Scenario("timing", 20.0, 5.0, 32, (1, 16, 64), 6, 60),
    Scenario("requests", 20.0, 2.0, 8, (4, 8, 12, 16, 24, 32, 48, 64, 128), 16, 400),
    Scenario("tokens", 20.0, 10.0, 256, (16, 32, 64, 128, 192, 256, 384, 512), 2, 64),
)
QUICK = (
    Scenario("timing", 20.0, 5.0, 32, (1,), 6, 20),
    Scenario("requests", 20.0, 2.0, 8, (16, 64), 6, 100),
    Scenario("tokens", 20.0, 10.0, 64, (64,), 1, 64),
)


def ideal_rate(f: dict[str, Any]) -> float:
    """Requests/s the endpoint would allow at this concurrency if the client cost nothing."""
    seconds_per_request = (float(f["ttft_ms"]) + (int(f["tokens"]) - 1) * float(f["itl_ms"])) / 1e3
    return int(f["concurrency"]) / seconds_per_request


def holds(f: dict[str, Any], drift: float) -> bool:
    """No failed request, and p50 TTFT and p50 gap within ``drift`` (a fraction) of the configured values.

    In the ``tokens`` scenario every stream of a level starts in the same instant (closed loop, equal
    lengths), so TTFT there measures how fast a burst of requests goes out; its criterion is the gap's p50
    and an achieved rate of at least 1 - ``drift`` of the ideal one instead.
    """
    if f["errors"] or not f["ok"]:
        return False
    gap_ok = bool(abs(f["itl_err_p50_ms"]) <= drift * f["itl_ms"])
    if f["scenario"] == "tokens":
        return gap_ok and bool(f["req_s"] >= (1 - drift) * ideal_rate(f))
    return gap_ok and bool(abs(f["ttft_err_p50_ms"]) <= drift * f["ttft_ms"])


def procs_of(client: str) -> int:
    """Client processes of a client name: ours (1), ours-xN (N)."""
    return int(client.partition("-x")[2] or 1)


def run_ours(url: str, sc: Scenario, concurrency: int, procs: int = 1) -> dict[str, Any]:
    n = max(sc.min_requests, sc.requests_per_slot * concurrency)
    workload = WorkloadConfig(
        name=sc.name,
        prompts=(PROMPT,),
        max_tokens=sc.tokens,
        warmup_requests=concurrency,
        requests=n,
        concurrency=(concurrency,),
        request_timeout_s=120,
        client_procs=procs,
    )
    target = Target(url, Protocol.openai, "zero")
    result = measure(target, workload, RunContext("headroom", dt.date.today().isoformat(), "bench"), concurrency)
    ok = [r for r in result.measured if r.error is None]
    window = (result.measure_end_ns or 0) - (result.measure_start_ns or 0)
    ttft = [r.ttft_ns for r in ok if r.ttft_ns is not None]
    tokens = sum(r.output_tokens or 0 for r in ok)
    gaps = [g for r in ok for g in r.itl_ns]
    f = figures(sc, ttft, gaps, len(ok), len(result.measured) - len(ok), tokens, window / 1e9)
    check = run_fields(result.client)
    lags = check.get("client_own_lag_p99_ns") or [0]
    f.update({"procs": procs, "saturated": check.get("client_saturated"), "own_lag_p99_ms": max(lags) / 1e6})
    return f


def _endpoint_stats(url: str) -> dict[str, Any]:
    stats: dict[str, Any] = httpx.get(f"{url}/stats?reset=1", trust_env=False).json()
    return stats


def run_level(client: str, url: str, pid: int, sc: Scenario, concurrency: int) -> dict[str, Any]:
    _endpoint_stats(url)
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    if client.startswith("ours"):
        f = run_ours(url, sc, concurrency, procs_of(client))
    else:
        from anchor import run_anchor

        f = run_anchor(client, url, sc, concurrency)
    busy = (cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)
    late = _endpoint_stats(url)["lateness_ns"]
    f.update(
        {
            "client": client,
            "scenario": sc.name,
            "concurrency": concurrency,
            "endpoint_cpu": busy,
            "endpoint_late_p50_ms": (late["p50"] or 0) / 1e6,
            "endpoint_late_p99_ms": (late["p99"] or 0) / 1e6,
            "load": load_average(),
        }
    )
    return f


def _fmt(v: Any, spec: str = ".2f") -> str:
    return "-" if v is None else format(v, spec)


def print_row(f: dict[str, Any], drift: float) -> None:
    print(
        f"{f['client']:8s} {f['scenario']:8s} c={f['concurrency']:<4d} ok={f['ok']:<5d} err={f['errors']:<3d} "
        f"req/s={_fmt(f['req_s'], '.1f'):>8s} tok/s={_fmt(f['tok_s'], '.0f'):>7s} "
        f"ttft_err p50/p99={_fmt(f['ttft_err_p50_ms'], '.3f')}/{_fmt(f['ttft_err_p99_ms'], '.3f')} ms "
        f"itl_err p50/p99={_fmt(f['itl_err_p50_ms'], '.3f')}/{_fmt(f['itl_err_p99_ms'], '.3f')} ms "
        f"endpoint cpu={f['endpoint_cpu']:.0%} late p50={f['endpoint_late_p50_ms']:.3f} ms "
        f"{'holds' if holds(f, drift) else 'DRIFTS'} load={f['load']}"
        f"{' SATURATED' if f.get('saturated') else ''}",
        flush=True,
    )


def summary(rows: list[dict[str, Any]], clients: list[str], drift: float) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for client in clients:
        mine = [r for r in rows if r["client"] == client]
        held = [r for r in mine if holds(r, drift)]
        best_req = max((r["req_s"] for r in held if r["scenario"] == "requests"), default=None)
        best_tok = max((r["tok_s"] for r in held if r["scenario"] == "tokens"), default=None)
        keys = ("ttft_err_p50_ms", "ttft_err_p99_ms", "itl_err_p50_ms", "itl_err_p99_ms")
        out[client] = {"req_s": best_req, "tok_s": best_tok}
        for level in (1, 64):  # timing errors at one stream and at 64 (issue 15's acceptance level)
            row = next((r for r in mine if r["scenario"] == "timing" and r["concurrency"] == level), None)
            out[client].update({f"{k}_c{level}": row and row[k] for k in keys})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-anchor", action="store_true", help="only our client")
    parser.add_argument("--anchors", default="aiperf", help="comma-separated: aiperf,guidellm")
    parser.add_argument("--quick", action="store_true", help="a few small levels (smoke test)")
    parser.add_argument("--drift", type=float, default=0.1, help="tolerance: fraction of the configured value")
    parser.add_argument("--only", help="run only this scenario")
    parser.add_argument("--levels", help="comma-separated concurrency levels replacing each scenario's own")
    parser.add_argument("--json", help="write every level's figures here")
    parser.add_argument("--from-json", help="only summarise the rows of an earlier --json file")
    parser.add_argument("--scaling", type=int, default=0, help="also run ours with N client processes (ours-xN)")
    parser.add_argument("--client-cores", default="0", help="cores of the client side, comma-separated [0]")
    parser.add_argument("--endpoint-core", default="1", help="core of the endpoint, or none (unpinned) [1]")
    args = parser.parse_args()
    if args.from_json:
        saved: list[dict[str, Any]] = json.loads(Path(args.from_json).read_text())["rows"]
        for row in saved:
            print_row(row, args.drift)
        print(json.dumps(summary(saved, sorted({r["client"] for r in saved}, reverse=True), args.drift), indent=1))
        return
    # the client side (us, our worker processes, aiperf started from here) on the client cores
    os.sched_setaffinity(0, {int(c) for c in args.client_cores.split(",")})
    endpoint_core = None if args.endpoint_core == "none" else int(args.endpoint_core)
    clients = ["ours"] + ([f"ours-x{args.scaling}"] if args.scaling > 1 else [])
    clients += [] if args.no_anchor else args.anchors.split(",")
    print(f"# {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; {machine()}; load {load_average()}", flush=True)
    rows: list[dict[str, Any]] = []
    for sc in QUICK if args.quick else SCENARIOS:
        if args.only and sc.name != args.only:
            continue
        with endpoint(sc.ttft_ms, sc.itl_ms, sc.tokens, endpoint_core) as ep:
            levels = [int(c) for c in args.levels.split(",")] if args.levels else sc.levels
            for concurrency in levels:
                for client in clients:
                    row = run_level(client, ep.url, ep.pid, sc, concurrency)
                    rows.append(row)
                    print_row(row, args.drift)
    result = summary(rows, clients, args.drift)
    print(json.dumps(result, indent=1))
    if args.json:
        with Path(args.json).open("w") as handle:
            json.dump({"rows": rows, "summary": result}, handle, indent=1)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
