"""Small stores answer at once: each light command's wall time on a 16-run store, side by side for several trees.

Each command runs as a new process per tree, the trees alternating in every round, beside DuckDB's own time for the
same SQL where it fits (``x_duckdb``). Targets: --help <= 0.3 s, query <= 0.6 s, compare (with or without
--interactivity) <= 1 s, history <= 0.6 s, report <= 2 s; figures in docs/dev/performance.md#small-store.

    python bench/small_store.py --tree /work/main --tree . --rounds 5

Design notes: docs/dev/architecture/bench-and-build.md#bench-small-store.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, load_average, machine

COMPARE = ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd"]
COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    "query": ["query", "select 1"],
    "query_runs": ["query", "select count(*) AS n from runs"],
    "summary": ["summary"],
    "compare": COMPARE,
    "compare_interactivity": [*COMPARE, "--interactivity", "42"],
    "history": ["history"],
    "report": ["report", "--out", "{tmp}/report.html"],
}
_LAKE = (
    "import sys, duckdb, duckdb_ext; from pathlib import Path\n"
    "platform = duckdb.execute('PRAGMA platform').fetchone()[0]\n"
    "ext = next(Path(b) / 'extensions' / f'v{duckdb.__version__}' / platform / 'ducklake.duckdb_extension'\n"
    "           for b in duckdb_ext.__path__ if (Path(b) / 'extensions').is_dir())\n"
    "con = duckdb.connect(config={'autoload_known_extensions': False, 'autoinstall_known_extensions': False})\n"
    "con.execute(f\"LOAD '{ext}'\")\n"
    "store = sys.argv[1]\n"
    "con.execute(f\"ATTACH 'ducklake:{store}/catalog.ducklake' AS lake (DATA_PATH '{store}/data/', READ_ONLY)\")\n"
    "print(con.execute('SELECT count(*) FROM lake.main.runs').fetchone()[0])\n"
)
BASELINES: dict[str, list[str]] = {
    "duckdb": ["-c", "import duckdb; print(duckdb.sql('SELECT 1').fetchall())"],
    "duckdb_lake": ["-c", _LAKE, "{store}"],
}
RATIO_OF = {"query": "duckdb", "query_runs": "duckdb_lake"}


def build_store(folder: Path) -> Path:
    """The 16-run store: 2 platforms x 4 concurrency levels x 2 nights, 20 requests a run."""
    sys.path.insert(0, str(ROOT))
    from tests.unit.factories import write_fleet

    store = folder / "store"
    write_fleet(store, nights=2, concurrency=(1, 4, 16, 64), regression=None)
    return store


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s of the process) of one run; a failed command stops the bench."""
    cpu0, t0 = _cpu_children(), time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - t0, _cpu_children() - cpu0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:6])} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, cpu


def environment(tree: Path, index: int, store: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env.update(
        PYTHONPATH=str(tree),
        PYTHONPYCACHEPREFIX=str(tmp / "pyc" / str(index)),
        TCOBENCH_STORE=str(store),
        XDG_CACHE_HOME=str(tmp / "cache"),
        COLUMNS="200",
    )
    return env


def run_bench(trees: list[Path], names: list[str], rounds: int, store: Path, tmp: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    plan = [(n, COMMANDS[n]) for n in names] + [(n, BASELINES[n]) for n in BASELINES]
    for r in range(rounds + 1):  # round 0: warm-up, not counted
        for name, args in plan:
            order = trees if r % 2 else list(reversed(trees))  # who goes first alternates between rounds
            for i, tree in sorted(enumerate(trees), key=lambda it: order.index(it[1])):
                if name in BASELINES and i:
                    continue  # DuckDB's own time does not depend on the tree
                shown = [a.replace("{tmp}", str(tmp)).replace("{store}", str(store)) for a in args]
                argv = [sys.executable, *shown] if name in BASELINES else [sys.executable, "-m", "tcobench", *shown]
                wall, cpu = timed(argv, environment(tree, i, store, tmp), tree)
                if r:
                    rows.append(
                        {
                            "command": name,
                            "tree": str(tree) if name not in BASELINES else "-",
                            "round": r,
                            "wall_s": wall,
                            "cpu_s": cpu,
                            "load": load_average(),
                        }
                    )
        print(f"# round {r} done, load {load_average()}", file=sys.stderr, flush=True)
    return rows


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    base = {name: statistics.median(r["wall_s"] for r in rows if r["command"] == name) for name in BASELINES}
    out = []
    for key in dict.fromkeys((r["command"], r["tree"]) for r in rows):
        walls = [r["wall_s"] for r in rows if (r["command"], r["tree"]) == key]
        cpus = [r["cpu_s"] for r in rows if (r["command"], r["tree"]) == key]
        med = statistics.median(walls)
        entry = {
            "command": key[0],
            "tree": key[1],
            "n": len(walls),
            "median_s": round(med, 3),
            "min_s": round(min(walls), 3),
            "max_s": round(max(walls), 3),
            "cpu_median_s": round(statistics.median(cpus), 3),
        }
        if key[0] in RATIO_OF:
            entry["x_duckdb"] = round(med / base[RATIO_OF[key[0]]], 2)
        out.append(entry)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", help="a source tree (repeatable); default: this one")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--commands", default=",".join(COMMANDS), help=f"comma-separated, of {', '.join(COMMANDS)}")
    parser.add_argument("--json", type=Path, help="write every timed run here")
    args = parser.parse_args()
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    names = [n for n in args.commands.split(",") if n]
    unknown = set(names) - set(COMMANDS)
    if unknown:
        parser.error(f"--commands: unknown {', '.join(sorted(unknown))} (valid: {', '.join(COMMANDS)})")
    with tempfile.TemporaryDirectory(prefix="tcob-small-") as folder:
        tmp = Path(folder)
        store = build_store(tmp)
        print(f"# {machine()}; load before {load_average()}; store {store} (16 runs)", flush=True)
        rows = run_bench(trees, names, args.rounds, store, tmp)
        print(f"# load after {load_average()}", flush=True)
    for entry in summary(rows):
        print(json.dumps(entry))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), "utf-8")


if __name__ == "__main__":
    main()
