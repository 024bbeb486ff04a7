"""tests/run_suite.sh runs every test exactly once: its five marker expressions (three lanes at once, then two alone)
are disjoint and cover every combination of the markers they split on, and the markers are where the script says."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "run_suite.sh"
LANES = ("UNIT", "SERVERS", "WAITS", "QUIET", "HOG")
SPLIT_ON = ("servers", "waits", "quiet", "hog")
NAME = re.compile(r"[a-z_]+")


def _expressions() -> dict[str, str]:
    """The lanes' `-m` expressions, as the script assigns them (NAME="...")."""
    found = dict(re.findall(r'^([A-Z]+)="([^"]*)"$', SCRIPT.read_text("utf-8"), re.MULTILINE))
    assert set(LANES) <= set(found), f"run_suite.sh assigns {sorted(found)}, not all of {LANES}"
    return {lane: found[lane] for lane in LANES}


def _selects(expression: str, markers: dict[str, bool]) -> bool:
    """Whether pytest's `-m expression` selects a test with these markers (and, or, not, parentheses, names)."""
    python = NAME.sub(lambda m: m.group() if m.group() in ("and", "or", "not") else f"m[{m.group()!r}]", expression)
    return bool(eval(python, {"__builtins__": {}}, {"m": markers}))  # the script's own expressions, names made lookups


def test_each_combination_of_markers_is_in_exactly_one_lane() -> None:
    expressions = _expressions()
    for values in itertools.product([False, True], repeat=len(SPLIT_ON)):
        markers = dict(zip(SPLIT_ON, values, strict=True))
        lanes = [lane for lane, expression in expressions.items() if _selects(expression, markers)]
        assert len(lanes) == 1, f"a test marked {markers} runs in {lanes or 'no lane'}"


def test_the_lanes_use_declared_markers_only() -> None:
    declared = {
        m.split(":")[0]
        for m in tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["pytest"]["ini_options"]["markers"]
    }
    used = {n for e in _expressions().values() for n in NAME.findall(e)} - {"and", "or", "not"}
    assert used == set(SPLIT_ON) and used <= declared, (used, declared)


def _collected(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout[-2000:] + done.stderr[-2000:]
    return {line for line in done.stdout.splitlines() if "::" in line}


def test_real_tests_land_in_the_lane_their_folder_and_markers_say() -> None:
    """Collected for real, with one file per kind: a unit test, a quiet one, a fault test, a waits one and a hog one."""
    files = [
        "tests/unit/tasks/load/test_measure_poisson.py",
        "tests/faults/test_signals.py",
        "tests/integration/test_fleet_outages.py",
    ]
    every = _collected(*files)
    lanes = {lane: _collected("-m", expression, *files) for lane, expression in _expressions().items()}
    assert sum(len(tests) for tests in lanes.values()) == len(every) and set().union(*lanes.values()) == every
    expected = {
        "UNIT": "tests/unit/tasks/load/test_measure_poisson.py::test_the_ks_check_rejects_what_is_not_exponential",
        "SERVERS": "tests/faults/test_signals.py::test_a_second_signal_ends_the_grace_period",
        "WAITS": "tests/integration/test_fleet_outages.py::",
        "QUIET": "tests/unit/tasks/load/test_measure_poisson.py::test_a_poisson_run_sends_at_exponential_gaps",
        "HOG": "tests/faults/test_signals.py::test_a_signal_under_load_ends_the",
    }
    for lane, prefix in expected.items():
        assert any(test.startswith(prefix) for test in lanes[lane]), f"{lane} lacks {prefix}: {sorted(lanes[lane])}"
