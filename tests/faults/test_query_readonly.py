"""`tcobench query` cannot write, and ends cleanly: DuckLake's maintenance functions change no file and no catalog row
(issue 33, item 1), a query over --timeout or stopped by SIGINT/SIGTERM is one line with its exit status (item 4).

Two locks are tested apart: the file lock alone (a reading connection calls each function directly, past the name
check) and both together through `tcobench query` (each refused by name). The store is a real one (DuckLake on a
local DuckDB catalog) with an orphan data file in its data folder, as a writer's file looks before its commit.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.errors import QueryError
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect, read_only_query, views_named
from tcobench.tasks.store.readonly import REFUSED_FUNCTIONS
from tcobench.tasks.store.store import write_results
from tests.store_helpers import data_files, lake_rows
from tests.unit.factories import make_request, make_run

runner = CliRunner()
_ERROR = re.compile(r"^(?:[A-Z]\w*Error|Interrupted): ")

# Every DuckLake 1.4.4 function that writes, expires, merges, rewrites, deletes or sets an option, as a SELECT
# reaches it (duckdb_functions() WHERE function_name LIKE 'ducklake%'; the others list or read), with arguments
# that make it act: cleanup_all, an expiry of everything older than now, a file to add.
DUCKLAKE_CALLS = {
    "ducklake_add_data_files": "SELECT * FROM ducklake_add_data_files('lake', 'runs', '{orphan}')",
    "ducklake_cleanup_old_files": "SELECT * FROM ducklake_cleanup_old_files('lake', cleanup_all => true)",
    "ducklake_delete_orphaned_files": "SELECT * FROM ducklake_delete_orphaned_files('lake', cleanup_all => true)",
    "ducklake_expire_snapshots": "SELECT * FROM ducklake_expire_snapshots('lake', older_than => now())",
    "ducklake_flush_inlined_data": "SELECT * FROM ducklake_flush_inlined_data('lake')",
    "ducklake_merge_adjacent_files": "SELECT * FROM ducklake_merge_adjacent_files('lake')",
    "ducklake_rewrite_data_files": "SELECT * FROM ducklake_rewrite_data_files('lake')",
    "ducklake_set_commit_message": "SELECT * FROM ducklake_set_commit_message('lake', 'x', 'y')",
    "ducklake_set_option": "SELECT * FROM ducklake_set_option('lake', 'parquet_compression', 'zstd')",
    "lake.merge_adjacent_files": "SELECT * FROM lake.merge_adjacent_files()",
    "lake.expire_snapshots": "SELECT * FROM lake.expire_snapshots(older_than => now())",
    "lake.cleanup_old_files": "SELECT * FROM lake.cleanup_old_files(cleanup_all => true)",
    "lake.set_option": "SELECT * FROM lake.set_option('parquet_compression', 'zstd')",
}
# DuckDB's own side effects and SQL-in-a-string, and ways of hiding a name from a plain text match.
OTHER_CALLS = {
    "checkpoint": "SELECT * FROM checkpoint()",
    "force_checkpoint": "SELECT * FROM force_checkpoint()",
    "truncate_duckdb_logs": "SELECT * FROM truncate_duckdb_logs()",
    "query": "SELECT * FROM query('SELECT * FROM ducklake_' || 'delete_orphaned_files(''lake'')')",
    "ducklake_delete_orphaned_files": "SELECT * FROM \"DuckLake_Delete_Orphaned_Files\"/* hidden */('lake')",
    "ducklake_set_option": "WITH x AS (SELECT * FROM runs) SELECT (SELECT count(*) FROM ducklake_set_option("
    "'lake', 'a', 'b')) FROM x",
}


def _fingerprint(root: Path) -> dict[str, str]:
    """sha256 of every file under the store folder (catalog, lock, data)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store of three runs (three commits: files to merge, snapshots to expire) and an orphan file."""
    root = tmp_path_factory.mktemp("readonly") / "store"
    for i in range(3):
        write_results(root, make_run(run_id=f"r{i}"), [make_request(run_id=f"r{i}", request_index=j) for j in range(3)])
    orphan = Path(data_files(root, "requests")[0]).with_name("ducklake-orphan-of-a-writer-before-its-commit.parquet")
    shutil.copy(data_files(root, "requests")[0], orphan)
    return root, orphan


def _catalog(root: Path) -> list[tuple[object, ...]]:
    return lake_rows(root, "SELECT snapshot_id, changes FROM lake.snapshots() ORDER BY 1")


def test_a_reading_connection_cannot_write_even_past_the_name_check(store: tuple[Path, Path]) -> None:
    """The file lock alone: each function called on a reading connection changes no file and no catalog row."""
    root, orphan = store
    before, snapshots = _fingerprint(root), _catalog(root)
    con = connect(root, load_prices(None))
    try:
        for name, sql in DUCKLAKE_CALLS.items():
            # refused by DuckDB (a read-only catalog, a path outside the snapshot's files) or done to no effect
            with contextlib.suppress(duckdb.Error):
                con.execute(sql.format(orphan=orphan)).fetchall()
            assert _fingerprint(root) == before, name
    finally:
        con.close()
    assert orphan.exists() and _catalog(root) == snapshots


def test_tcobench_query_refuses_each_ducklake_function_by_name_and_changes_nothing(store: tuple[Path, Path]) -> None:
    root, orphan = store
    before, snapshots = _fingerprint(root), _catalog(root)
    for name, sql in DUCKLAKE_CALLS.items():
        done = runner.invoke(app, ["query", sql.format(orphan=orphan), "--store", str(root)])
        assert done.exit_code == 1, (name, done.output)
        lines = done.stderr.strip().splitlines()
        short = name.split(".")[-1]
        assert len(lines) == 1 and lines[0].startswith(f"QueryError: refused: the function {short} ("), lines
        assert _fingerprint(root) == before, name
    assert _catalog(root) == snapshots


@pytest.mark.parametrize(
    ("name", "sql"), list(OTHER_CALLS.items()), ids=[f"{n}-{i}" for i, n in enumerate(OTHER_CALLS)]
)
def test_side_effects_and_hidden_names_are_refused(store: tuple[Path, Path], name: str, sql: str) -> None:
    root, _ = store
    con = connect(root, load_prices(None), needs=views_named(sql))  # as `tcobench query` connects
    try:
        with pytest.raises(QueryError, match=rf"^refused: the function {name} \("):
            read_only_query(con, sql)
    finally:
        con.close()


def test_every_ducklake_function_that_changes_the_store_is_listed(store: tuple[Path, Path]) -> None:
    """Against the extension itself: every ducklake_* function not listed here only reads."""
    readers = {
        "ducklake_current_snapshot",
        "ducklake_last_committed_snapshot",
        "ducklake_list_files",
        "ducklake_options",
        "ducklake_snapshots",
        "ducklake_table_changes",
        "ducklake_table_deletions",
        "ducklake_table_info",
        "ducklake_table_insertions",
    }
    con = connect(store[0], load_prices(None), needs=())  # the extension's functions: no view read
    try:
        names = {
            r[0]
            for r in con.execute(
                "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_name LIKE 'ducklake%'"
            ).fetchall()
        }
    finally:
        con.close()
    writers = {n for n in DUCKLAKE_CALLS if n.startswith("ducklake_")}
    assert names == readers | writers
    assert writers <= set(REFUSED_FUNCTIONS)


def test_reads_still_work(store: tuple[Path, Path]) -> None:
    root, _ = store
    done = runner.invoke(app, ["query", "SELECT count(*) AS n FROM requests", "--store", str(root), "--format", "csv"])
    assert done.exit_code == 0 and done.stdout.split() == ["n", "9"], done.output


# --- item 4: a query ends cleanly ---------------------------------------------------------------------------------

LONG = "SELECT count(*) AS n FROM range(1000000000000) t(a) WHERE a % 7 = 3"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(TCOBENCH_STORE=str(tmp_path / "store"), COLUMNS="200")
    return env


def _exe() -> str:
    exe = Path(sys.executable).parent / "tcobench"
    return str(exe if exe.exists() else "tcobench")


def _one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if _ERROR.match(line)]
    assert len(lines) == 1, stderr
    return lines[0]


def test_a_query_over_its_timeout_ends_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()  # an empty store: a read command refuses a store path that does not exist
    started = time.monotonic()
    done = subprocess.run(
        [_exe(), "query", "--timeout", "2", LONG],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert _one_line(done.stderr) == "QueryError: stopped: the query ran over 2 s (--timeout S; 0 for none)"
    assert time.monotonic() - started < 120  # not the default's 300 s, nor the query's hours


def _loaded_ducklake(pid: int) -> bool:
    """Whether the process mapped DuckLake's extension: connect() opened the store, inside the query's bounds."""
    try:
        return "ducklake.duckdb_extension" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["INT", "TERM"])
def test_a_signal_stops_a_long_query_with_one_line(store: tuple[Path, Path], signum: signal.Signals, code: int) -> None:
    env = dict(_env(store[0]), TCOBENCH_STORE=str(store[0]))
    proc = subprocess.Popen([_exe(), "query", LONG], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not _loaded_ducklake(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.5)  # the views are prepared in well under a second of this; then the query runs
        assert proc.poll() is None
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert _one_line(err) == f"Interrupted: query stopped by {signum.name}"
    assert out == ""
