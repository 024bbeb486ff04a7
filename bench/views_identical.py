"""Same figures from two trees: every view's rows and every read command's output over one small store, diffed.

Builds one small fleet store, dumps every view (SELECT * ORDER BY ALL) and the read commands' output (COMMANDS,
_KEPT) from each tree, and diffs the dumps, numbers rounded to DIGITS significant digits (DuckDB's parallel sums
vary in the last digit from run to run). Exit 1 on a difference. Design notes: docs/dev/sql.md.

    python bench/views_identical.py --tree /work/main --tree .
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPARE = ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--resamples", "200"]
COMMANDS: dict[str, list[str]] = {
    "summary": ["summary"],
    "summary_json": ["summary", "--format", "json"],
    "summary_run": ["summary", "--run", "gpu-amd-1-n3-c4"],
    "compare": COMPARE,
    "compare_json": [*COMPARE, "--format", "json"],
    "compare_claim": [*COMPARE, "--claim", "1.2", "--format", "json"],
    "compare_interactivity": [*COMPARE, "--interactivity", "42"],
    "compare_interactivity_json": [*COMPARE, "--interactivity", "42", "--format", "json"],
    "best": ["best", "--a", "vendor=nvidia", "--b", "vendor=amd", "--interactivity", "42", "--resamples", "200"],
    "best_json": ["best", "--a", "vendor=nvidia", "--interactivity", "80", "--resamples", "200", "--format", "json"],
    "history": ["history"],
    "history_detail": ["history", "--detail"],
    "history_flagged": ["history", "--flagged-only"],
    "report": ["report", "--out", "{out}/report.html", "--resamples", "200"],
}
# the report's one line that changes from run to run: when it was written
_VOLATILE = re.compile(r"generated \d{4}-\d\d-\d\d[ T][\d:.]+( UTC)?|tcobench_report_[0-9a-f]+")
DIGITS = 12
_NUMBER = re.compile(r"-?\d+\.\d+(?:[eE][-+]?\d+)?")
_DUMP_VIEWS = r"""
import re, sys
from pathlib import Path
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.views import sql_views

out = Path(sys.argv[2])
con = connect(sys.argv[1], load_prices())
for name, text in sql_views():
    if not re.search(rf"^CREATE OR REPLACE VIEW {name}\b", text, re.M):
        continue  # a macro: its callers' views and commands show what it computes
    result = con.sql(f"SELECT * FROM {name} ORDER BY ALL")  # the connection may not write files: Python does
    lines = [repr(tuple(result.columns))] + [repr(row) for row in result.fetchall()]
    (out / f"view_{name}.txt").write_text("\n".join(lines) + "\n", "utf-8")
"""

# the last line of `tcobench run` (its summary of the batch first), over a batch of the store
_KEPT = r"""
import sys
from tcobench.cli import run
from tcobench.settings import Settings
from tcobench.tasks.prices import load_prices

run.print_workload = lambda *args, **kwargs: None  # the workload block needs a run's config, not the store
print(run._kept(Settings(store=sys.argv[1]), load_prices(), "gpu-amd-1-n3", {}, None))
"""


def build_store(folder: Path) -> Path:
    """The small fleet store (module docstring), written by the first tree."""
    sys.path.insert(0, str(ROOT))
    from tests.unit.factories import write_fleet

    store = folder / "store"
    write_fleet(store, nights=4, concurrency=(1, 4, 16))
    return store


def environment(tree: Path, store: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env.update(
        PYTHONPATH=str(tree),
        TCOBENCH_STORE=str(store),
        XDG_CACHE_HOME=str(tmp / "cache"),
        COLUMNS="200",
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def dump(tree: Path, store: Path, out: Path, tmp: Path) -> None:
    """Every view's rows and every command's output, from ``tree``, into ``out``."""
    out.mkdir(parents=True)
    env = environment(tree, store, tmp)
    done = subprocess.run(
        [sys.executable, "-c", _DUMP_VIEWS, str(store), str(out)], env=env, cwd=tree, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"{tree}: dumping the views failed: {done.stderr[-2000:]}")
    plan = [(name, ["-m", "tcobench", *args]) for name, args in COMMANDS.items()]
    for name, args in [*plan, ("run_kept", ["-c", _KEPT, str(store)])]:
        argv = [a.replace("{out}", str(out)) for a in args]
        done = subprocess.run([sys.executable, *argv], env=env, cwd=tree, capture_output=True, text=True)
        text = f"exit {done.returncode}\n{done.stdout}\n--- stderr\n{done.stderr}"
        (out / f"cmd_{name}.txt").write_text(text.replace(str(out), "OUT"), "utf-8")
    report = out / "report.html"
    if report.exists():
        report.write_text(_VOLATILE.sub("VOLATILE", report.read_text("utf-8")), "utf-8")


def _rounded(text: str) -> str:
    return _NUMBER.sub(lambda m: format(float(m[0]), f".{DIGITS}g"), text)


def differences(a: Path, b: Path) -> list[str]:
    """Unified diffs of the files of the two dumps (a file in one only: its name)."""
    lines: list[str] = []
    for name in sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()}):
        if not (a / name).exists() or not (b / name).exists():
            lines.append(f"only in {'first' if (a / name).exists() else 'second'} tree: {name}\n")
            continue
        old, new = (_rounded((a / name).read_text("utf-8")), _rounded((b / name).read_text("utf-8")))
        lines += difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{name}", f"b/{name}", n=1)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", type=Path, required=True, help="two trees: before, after")
    parser.add_argument("--keep", type=Path, help="write the dumps here (default: a temporary folder)")
    args = parser.parse_args()
    if len(args.tree) != 2:
        parser.error("give --tree twice: before and after")
    with tempfile.TemporaryDirectory(prefix="tcob-identical-") as name:
        tmp = args.keep or Path(name)
        store = build_store(tmp)
        dumps = [tmp / f"dump{i}" for i in range(2)]
        for tree, out in zip(args.tree, dumps, strict=True):
            dump(tree.resolve(), store, out, tmp)
        files = sorted(p.name for p in dumps[0].iterdir())
        diff = differences(*dumps)
        sys.stdout.writelines(diff)
        views = sum(f.startswith("view_") for f in files)
        print(
            f"# {views} views, {len(files) - views} command outputs compared: {'identical' if not diff else 'DIFFER'}"
        )
        raise SystemExit(1 if diff else 0)


if __name__ == "__main__":
    main()
