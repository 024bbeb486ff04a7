"""Benchmark (b): where does the wall time of `tcobench run` go?

Runs the `tcobench run` command (default job unless arguments are given after --) with a fresh store and
splits its wall time, using the timestamps stored in the runs and requests rows:

  set-up        command start -> first request sent (imports, Prefect's in-process server, engine start)
  warm-up       per run: first warm-up request sent -> first measured request sent          (summed)
  measurement   per run: first measured request sent -> last measured request finished      (summed)
  write/summarise/other   the rest: writing Parquet, the summary queries, engine stop, exit

    .venv/bin/python bench/run_walltime.py [-- extra tcobench run arguments]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb


def main() -> None:
    extra = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else []
    exe = Path(sys.executable).parent / "tcobench"
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        env = dict(os.environ, TCOBENCH_STORE=str(store), COLUMNS="200")
        t0 = time.time_ns()
        done = subprocess.run([str(exe), "run", *extra], env=env, capture_output=True, text=True, check=False)
        t1 = time.time_ns()
        if done.returncode != 0:
            raise SystemExit(f"tcobench run failed ({done.returncode}): {done.stderr[-2000:]}")
        con = duckdb.connect()
        data = store / "data" / "main"  # the DuckLake store's data files
        runs = con.sql(
            f"SELECT run_id, measure_start_ns, measure_end_ns FROM read_parquet('{data}/runs/*.parquet')"
        ).fetchall()
        reqs = con.sql(
            f"SELECT run_id, phase, min(start_ns) FROM read_parquet('{data}/requests/**/*.parquet') GROUP BY ALL"
        ).fetchall()
    first = {(run, phase): start for run, phase, start in reqs}
    setup = min(start for _, _, start in reqs) - t0
    warmup = sum(ms - first.get((run, "warmup"), ms) for run, ms, _ in runs)
    measurement = sum(me - ms for _, ms, me in runs)
    total = t1 - t0
    rest = total - setup - warmup - measurement
    figures = {
        "total_s": total,
        "setup_s": setup,
        "warmup_s": warmup,
        "measurement_s": measurement,
        "write_summarise_other_s": rest,
    }
    for key, ns in figures.items():
        print(f"{key:26s} {ns / 1e9:8.2f} s  {ns / total:6.1%}")
    print(json.dumps({k: round(v / 1e9, 3) for k, v in figures.items()}))


if __name__ == "__main__":
    main()
