"""tests/run_suite.sh runs every test exactly once: its five marker expressions (three lanes at once, then two alone)
are disjoint and cover every combination of the markers they split on, and real tests land where their folder and
markers say."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "run_suite.sh"
LANES = ("INTEGRATION", "REST", "WAITS", "QUIET", "HOG")
SPLIT_ON = ("integration", "waits", "quiet", "hog")
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


FILES = (  # a file or two per lane
    "tests/unit/tasks/load/test_measure_poisson.py",
    "tests/faults/test_signals.py",
    "tests/faults/test_query_readonly.py",
    "tests/integration/test_replay.py",
    "tests/integration/test_fleet_outages.py",
)
# Collects FILES in this subprocess's own pytest and prints each test's id and markers (tab-separated), or with -m
# given, each selected test's id only.
COLLECT = """
import sys, pytest
class Show:
    def pytest_collection_finish(self, session):
        for item in session.items:
            print("TEST", item.nodeid, *sorted({m.name for m in item.iter_markers()}), sep="\t")
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *sys.argv[1:]], plugins=[Show()]))
"""


def _collected(*args: str) -> dict[str, set[str]]:
    """Each collected test's id and its markers."""
    done = subprocess.run([sys.executable, "-c", COLLECT, *args], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 5), done.stdout[-2000:] + done.stderr[-2000:]
    rows = [line.split("\t")[1:] for line in done.stdout.splitlines() if line.startswith("TEST\t")]
    return {row[0]: set(row[1:]) for row in rows}


def test_real_tests_land_in_the_lane_their_folder_and_markers_say() -> None:
    """Collected for real: each test is in exactly one lane, the one its folder (the marker `integration` comes from
    the path) and its markers say; and pytest's own `-m` selects what this test's reading of an expression does."""
    expressions = _expressions()
    tests = _collected(*FILES)
    lanes = {
        lane: {t for t, markers in tests.items() if _selects(e, {n: n in markers for n in SPLIT_ON})}
        for lane, e in expressions.items()
    }
    assert sorted(t for selected in lanes.values() for t in selected) == sorted(tests)
    expected = {
        "INTEGRATION": [
            "tests/integration/test_replay.py::",
            "tests/faults/test_signals.py::test_a_second_signal_ends_the_grace_period",
        ],
        "REST": [
            "tests/unit/tasks/load/test_measure_poisson.py::test_the_ks_check_rejects_what_is_not_exponential",
            "tests/faults/test_query_readonly.py::",  # conftest.BESIDE_UNIT
        ],
        "WAITS": ["tests/integration/test_fleet_outages.py::"],
        "QUIET": ["tests/unit/tasks/load/test_measure_poisson.py::test_a_poisson_run_sends_at_exponential_gaps"],
        "HOG": ["tests/faults/test_signals.py::test_a_signal_under_load_ends_the"],
    }
    for lane, prefixes in expected.items():
        for prefix in prefixes:
            assert any(t.startswith(prefix) for t in lanes[lane]), f"{lane} lacks {prefix}: {sorted(lanes[lane])}"
    assert set(_collected("-m", expressions["REST"], *FILES)) == lanes["REST"]
