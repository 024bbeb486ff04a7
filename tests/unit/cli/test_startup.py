"""Light commands start light: `tcobench --help`, `query` and `compare` on a small store import only what they need.

Each command runs in a fresh interpreter (as the user's shell starts it), then the modules it imported are checked:
no Prefect, scipy, docker SDK or HTTP client for any of them, none of the report's modules for query and compare, nor
the views' column declarations (schemas/columns.py) nor the stored tables' record models (schemas/records.py and the
other records: store.TABLES defines them when a writer first reads one) for query, compare and history, and for
--help not even pydantic,
DuckDB or Arrow (the root's help lists the commands from ``main.COMMANDS`` without importing their modules). The
figures these imports cost: docs/dev/performance.md#small-store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcobench.cli.main import COMMANDS
from tests.unit.factories import write_fleet

NEVER = ("prefect", "scipy", "docker", "httpx", "tcobench.flows", "tcobench.tasks.engine", "tcobench.tasks.load")
_PROBE = """
import json, sys
from tcobench.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
sys.stderr.write("\\nMODULES " + json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""


def _imports(args: list[str], store: Path) -> set[str]:
    env = dict(os.environ, TCOBENCH_STORE=str(store), COLUMNS="120")
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    line = next((ln for ln in done.stderr.splitlines() if ln.startswith("MODULES ")), None)
    assert line is not None, done.stderr[-2000:]
    found = json.loads(line.removeprefix("MODULES "))
    assert found["code"] == 0, done.stderr[-2000:]
    return set(found["modules"])


def _heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("small") / "store"
    write_fleet(store, nights=2, concurrency=(1, 4), regression=None, requests=8)
    return store


def test_help_imports_no_command_module_nor_pydantic_duckdb_or_arrow(tmp_path: Path) -> None:
    modules = _imports(["--help"], tmp_path / "none")
    light = (*NEVER, "pydantic", "pydantic_settings", "duckdb", "pyarrow", "numpy", "rich.console", "tcobench.schemas")
    assert _heavy(modules, light) == []
    assert {m for m in modules if m.startswith("tcobench.cli.")} <= {"tcobench.cli.main", "tcobench.cli._help"}


# the views' column declarations (their pydantic models): a reader orders the views by tcobench.schemas.layers; nor
# the stored tables' record models (store.TABLES loads them on first read of a model, as a writer does): a reader
# finds the columns an older store lacks by name (tasks/store/table_columns.py), and a trace's models
READER_NEVER = (
    "tcobench.schemas.columns",
    "tcobench.schemas.records",
    "tcobench.schemas.engine_metrics",
    "tcobench.schemas.images",
    "tcobench.schemas.store",
    "tcobench.schemas.trace",
)


def test_query_imports_the_store_reader_only(small_store: Path) -> None:
    modules = _imports(["query", "select count(*) AS n from runs"], small_store)
    assert "tcobench.tasks.store.query" in modules  # the probe saw the command run
    heavy = (*NEVER, *READER_NEVER, "tcobench.tasks.analysis", "tcobench.tasks.report", "tcobench.tasks.workload")
    assert _heavy(modules, (*heavy, "tcobench.cli.run")) == []


@pytest.mark.parametrize("interactivity", [[], ["--interactivity", "42"]], ids=["levels", "interactivity"])
def test_compare_imports_no_scipy_no_report_and_no_arrow_compute(small_store: Path, interactivity: list[str]) -> None:
    """pyarrow.compute (and pyarrow.dataset, through which DuckDB scans a registered Arrow table) is a fixed cost of
    its own; compare reads and groups its rows without it. So is numpy.ma (through which DuckDB scans a registered
    numpy table, and which np.unique imports): compare binds its side figures as text and sorts sizes in Python. So
    is pytz (through which DuckDB hands over a TIMESTAMPTZ): the snapshot's time comes as text."""
    args = ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--resamples", "200", *interactivity]
    modules = _imports(args, small_store)
    assert "tcobench.tasks.analysis.compare.interactivity" in modules
    heavy = (*NEVER, "tcobench.tasks.report", "tcobench.cli.run", "pyarrow.compute", "pyarrow.dataset", "numpy.ma")
    assert _heavy(modules, (*heavy, "pytz", *READER_NEVER)) == []


def test_history_imports_no_scipy_no_report_and_no_arrow_compute(small_store: Path) -> None:
    """pyarrow.compute is a fixed cost of its own; history splits its samples without it."""
    modules = _imports(["history"], small_store)
    assert "tcobench.tasks.analysis.history" in modules
    heavy = (*NEVER, *READER_NEVER, "tcobench.tasks.report", "tcobench.cli.run", "pyarrow.compute")
    assert _heavy(modules, heavy) == []


def test_trace_stats_imports_no_tokenizer_no_engine_and_no_report(tmp_path: Path) -> None:
    trace = tmp_path / "m.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [0]}\n')
    modules = _imports(["trace", "stats", str(trace), "--format", "json"], tmp_path / "store")
    assert "tcobench.tasks.workload.profile_trace" in modules
    heavy = (*NEVER, "tcobench.tasks.report", "tcobench.cli.run", "tokenizers", "tcobench.tasks.workload.plan")
    assert _heavy(modules, heavy) == []


def test_the_roots_list_of_commands_is_each_commands_own_help() -> None:
    """main.COMMANDS (what --help lists without importing the commands) against the commands themselves."""
    import typer

    from tcobench.cli._help import _paragraphs, _plain
    from tcobench.cli.main import app

    root = typer.main.get_group(app)
    ctx = root.make_context("tcobench", [], resilient_parsing=True)
    for name, (_, listed) in COMMANDS.items():
        command = root.get_command(ctx, name)
        assert command is not None, name
        first = next(_paragraphs(_plain(command.help or "")))[1]
        assert listed == first, f"main.COMMANDS[{name!r}] differs from the command's help"
    registered: set[str] = set()
    for module in {m for m, _ in COMMANDS.values()}:
        sub = typer.Typer()
        __import__(f"tcobench.cli.{module}", fromlist=["register"]).register(sub)
        registered |= set(typer.main.get_group(sub).commands)
    assert registered == set(COMMANDS)
