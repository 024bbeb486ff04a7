"""Start-up of `tcobench run` (default job, embedded llama.cpp engine), with Prefect on and with --no-prefect.

The same split as bench/run_walltime.py (timestamps stored in the runs and requests rows of a fresh store),
plus the figure the start-up target is about:

  to first measured request   command start -> first request of phase ``measure`` sent (targets <= 15 s)
  to first request            command start -> first request sent (the first warm-up request)
  outside measurement         wall - sum over runs of (measure_end_ns - measure_start_ns)   (targets <= 10%)

Design notes: docs/architecture.md#bench-startup.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
from _common import load_average, machine


def one_run(no_prefect: bool, extra: list[str]) -> dict[str, Any]:
    exe = Path(sys.executable).parent / "tcobench"
    with tempfile.TemporaryDirectory(prefix="tcob-startup-") as tmp:
        store = Path(tmp) / "store"
        env = dict(os.environ, TCOBENCH_STORE=str(store), COLUMNS="200")
        cmd = [str(exe), "run", *(["--no-prefect"] if no_prefect else []), *extra]
        t0 = time.time_ns()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        t1 = time.time_ns()
        if done.returncode != 0:
            raise SystemExit(f"tcobench run failed ({done.returncode}): {done.stderr[-2000:]}")
        con = duckdb.connect()
        runs = con.sql(f"SELECT measure_start_ns, measure_end_ns FROM read_parquet('{store}/runs/**/*.parquet')")
        windows = runs.fetchall()
        firsts = dict(
            con.sql(
                f"SELECT phase, min(start_ns) FROM read_parquet('{store}/requests/**/*.parquet') GROUP BY phase"
            ).fetchall()
        )
    total = (t1 - t0) / 1e9
    measurement = sum(end - start for start, end in windows) / 1e9
    return {
        "mode": "--no-prefect" if no_prefect else "prefect",
        "wall_s": total,
        "to_first_request_s": (min(firsts.values()) - t0) / 1e9,
        "to_first_measured_s": (firsts["measure"] - t0) / 1e9,
        "measurement_s": measurement,
        "outside_s": total - measurement,
        "outside_share": (total - measurement) / total,
        "load": load_average(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    print(f"# {machine()}; load {load_average()}")
    rows = []
    for _ in range(args.repeat):
        for no_prefect in (False, True):
            row = one_run(no_prefect, extra)
            rows.append(row)
            print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    for mode in ("prefect", "--no-prefect"):
        mine = [r for r in rows if r["mode"] == mode]
        med = {k: statistics.median(r[k] for r in mine) for k in mine[0] if isinstance(mine[0][k], float)}
        print(json.dumps({"mode": mode, "n": len(mine), **{k: round(v, 3) for k, v in med.items()}}))


if __name__ == "__main__":
    main()
