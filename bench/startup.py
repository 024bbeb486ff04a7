"""Start-up of `tcobench run` (default job, embedded llama.cpp engine), with Prefect on and with --no-prefect.

The same split as bench/run_walltime.py (timestamps stored in the runs and requests rows of a fresh store),
plus the figure the start-up target is about:

  to first measured request   command start -> first request of phase ``measure`` sent (targets <= 15 s)
  to first request            command start -> first request sent (the first warm-up request)
  outside measurement         wall - sum over runs of (measure_end_ns - measure_start_ns)   (targets <= 10%)

Design notes: docs/dev/architecture/bench-and-build.md#bench-startup.
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
        data = store / "data" / "main"  # the DuckLake store's data files (written once, never deleted by a run)
        runs = con.sql(
            "SELECT started_ns, measure_start_ns, measure_end_ns, finished_ns "
            f"FROM read_parquet('{data}/runs/*.parquet') ORDER BY started_ns"
        )
        spans = runs.fetchall()
        windows = [(ms, me) for _, ms, me, _ in spans]
        firsts = dict(
            con.sql(
                f"SELECT phase, min(start_ns) FROM read_parquet('{data}/requests/**/*.parquet') GROUP BY phase"
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
        # the split of the time outside: command start -> first run begun (imports, Prefect, engine start, health,
        # workload plan); per run, its start -> first measured request (idle baseline, warm-up) and last measured
        # request -> run finished; between runs (write, sweep verdict); last run finished -> exit (summary, stop)
        "before_first_run_s": (spans[0][0] - t0) / 1e9,
        "run_lead_in_s": sum(ms - st for st, ms, _, _ in spans) / 1e9,
        "run_tail_s": sum(fin - me for _, _, me, fin in spans) / 1e9,
        "between_runs_s": sum(b[0] - a[3] for a, b in zip(spans, spans[1:], strict=False)) / 1e9,
        "after_last_run_s": (t1 - spans[-1][3]) / 1e9,
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
