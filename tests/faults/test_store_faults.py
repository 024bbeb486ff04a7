"""Store faults, end to end through the `tcobench` command: a damaged data file, a full disk, a store that fails its
check before anything starts, and SQL that tries to leave the store.

Each test asserts the exit code, the one error line, what the store holds afterwards, and that no orphan file is
left. Real processes: `tcobench` as a subprocess, the zero-cost streaming endpoint (bench/zero_endpoint.py) as the
server, a tmpfs of a few MiB (mounted here; root needed) as the full disk.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcobench.errors import StoreError
from tcobench.tasks.store.verify import verify_store
from tests.services import free_ports, require
from tests.store_helpers import data_files, lake_rows
from tests.unit.factories import write_fleet

ROOT = Path(__file__).resolve().parents[2]
_ERROR = re.compile(r"^[A-Z]\w*Error: ")


def _tcobench(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "tcobench"
    return subprocess.run(
        [str(exe if exe.exists() else "tcobench"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _env(store: Path | str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(TCOBENCH_STORE=str(store), TCOBENCH_PREFECT="off", COLUMNS="200", **extra)
    return env


def _error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if _ERROR.match(line)]
    assert len(lines) == 1, stderr
    return lines[0]


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


# --- one damaged file ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A two-host fleet store with one requests data file truncated to zero bytes."""
    store = tmp_path_factory.mktemp("damaged") / "store"
    write_fleet(store, nights=3)
    target = sorted(data_files(store, "requests"))[0]
    Path(target).write_bytes(b"")
    return store, target


@pytest.mark.parametrize(
    "args",
    [
        ("query", "select 1 as one"),
        ("query", "select count(*) as n from run_summary"),
        ("summary",),
        ("compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--resamples", "200"),
        ("history",),
    ],
    ids=["query-select-1", "query-runs", "summary", "compare", "history"],
)
def test_one_zero_byte_file_does_not_take_the_store_down(damaged: tuple[Path, str], args: tuple[str, ...]) -> None:
    store, bad = damaged
    done = _tcobench(*args, env=_env(store))
    assert done.returncode == 0, done.stderr
    warned = _warnings(done.stderr)
    assert any(bad in w and "is damaged (0 bytes" in w for w in warned), done.stderr
    assert any("with rows in damaged files are left out" in w for w in warned), done.stderr


def test_report_over_a_damaged_store_is_written(damaged: tuple[Path, str], tmp_path: Path) -> None:
    store, bad = damaged
    done = _tcobench("report", "--out", str(tmp_path / "r.html"), "--resamples", "100", env=_env(store))
    assert done.returncode == 0, done.stderr
    assert "at snapshot" in (tmp_path / "r.html").read_text("utf-8"), "the report states which snapshot it read"
    assert any(bad in w for w in _warnings(done.stderr))


def test_verify_names_the_file_and_repair_quarantines_it(damaged: tuple[Path, str], tmp_path: Path) -> None:
    store, bad = damaged
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    bad = bad.replace(str(store), str(copy))
    found = _tcobench("store", "verify", env=_env(copy))
    assert found.returncode == 1
    assert f"damaged file: {bad}: requests: 0 bytes, the catalog recorded" in found.stdout.replace("\n", "")
    assert _error_line(found.stderr).startswith("StoreError: ") and "verify --repair" in found.stderr
    repaired = _tcobench("store", "verify", "--repair", env=_env(copy))
    assert repaired.returncode == 0, repaired.stderr
    assert not Path(bad).exists() and list((copy / "quarantine").rglob(Path(bad).name)), "moved, never deleted"
    clean = _tcobench("store", "verify", env=_env(copy))
    assert clean.returncode == 0 and "no problem found" in clean.stdout
    after = _tcobench("query", "select count(*) as n from runs", env=_env(copy))
    assert after.returncode == 0 and _warnings(after.stderr) == [], after.stderr


# --- a full disk --------------------------------------------------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of 24 MiB (room for an empty DuckDB catalog: docs/dev/performance.md#test-empty-catalog) mounted for this
    test: the full disk."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        require(f"cannot mount a tmpfs for the full-disk test (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def endpoint() -> Iterator[str]:
    """The zero-cost streaming endpoint, 64 tokens per request, 1 ms apart (a run takes a few seconds)."""
    (port,) = free_ports(1)
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "bench" / "zero_endpoint.py"),
            "--port",
            str(port),
            "--itl-ms",
            "1",
            "--tokens",
            "64",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and "http://" in proc.stdout.readline()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


_RUN = ("--model", "zero", "--requests", "60", "--warmup", "0", "--max-tokens", "64")


def _fill(mount: Path, leave: int) -> None:
    """Fill the disk until ``leave`` bytes are free."""
    free = shutil.disk_usage(mount).free
    with (mount / "filler").open("wb") as out:
        out.write(b"\0" * max(0, free - leave))


def test_a_full_disk_keeps_what_was_stored_prints_it_and_leaves_no_orphan(tiny_disk: Path, endpoint: str) -> None:
    env = _env(tiny_disk / "calibration", TCOBENCH_STORE_MIN_FREE_MB="0.25")
    before = shutil.disk_usage(tiny_disk).used
    calibration = _tcobench("run", "--endpoint", endpoint, *_RUN, "--concurrency", "1", env=env)
    assert calibration.returncode == 0, calibration.stderr
    one_run = shutil.disk_usage(tiny_disk).used - before  # a new store holding one such run
    shutil.rmtree(tiny_disk / "calibration")
    _fill(tiny_disk, one_run + 512 * 1024)  # room for the first run and half a MiB: the second does not fit
    store = tiny_disk / "store"
    done = _tcobench(
        "run",
        "--endpoint",
        endpoint,
        *_RUN,
        "--concurrency",
        "1",
        "--concurrency",
        "2",
        "--concurrency",
        "4",
        env=_env(store, TCOBENCH_STORE_MIN_FREE_MB="0.25"),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    line = _error_line(done.stderr)
    assert re.match(
        rf"^StoreError: store {store} has 0\.\d MiB free; this write needs about 0\.\d MiB "
        r"\(no space left on device\)$",
        line,
    ), line
    assert "stored 1 run(s)" in done.stdout, "the summary of what was stored is still printed"
    assert "cost per 1M output tokens" in done.stdout
    (tiny_disk / "filler").unlink()  # room for the checks below
    assert lake_rows(store, "SELECT count(*), sum(requests) FROM lake.commits") == [(1, 60)]
    assert verify_store(store, orphan_age_s=0).problems == [], "no file without a snapshot, no partial run"


def test_a_write_that_runs_out_of_space_midway_removes_its_files(tiny_disk: Path) -> None:
    """Without the room check (a disk filling from elsewhere): DuckDB's failed write is rolled back and the file it
    was writing removed."""
    from tcobench.tasks.store import store as store_module
    from tests.unit.factories import make_request, make_run

    store = tiny_disk / "store"
    saved = store_module._check_room
    store_module._check_room = lambda location, need: None
    try:
        stored = 0
        with pytest.raises(StoreError, match="No space left on device|no space left"):
            for i in range(400):
                run_id = f"r{i}"
                # inter-token gaps that do not compress (an arithmetic run does): each run's requests file takes a
                # few MiB, so the disk fills after a few runs rather than after dozens of commits
                store_module.write_results(
                    store,
                    make_run(run_id=run_id),
                    [
                        make_request(
                            run_id=run_id,
                            request_index=k,
                            itl_ns=[(k * 7_919 + j * 104_729) % 1_000_003 for j in range(20_000)],
                        )
                        for k in range(40)
                    ],
                )
                stored += 1
    finally:
        store_module._check_room = saved
    assert stored > 0
    problems = verify_store(store, orphan_age_s=0).problems
    assert problems == [], problems
    assert lake_rows(store, "SELECT count(*) FROM lake.runs") == [(stored,)]


def test_a_store_below_the_free_space_floor_fails_before_anything_starts(tiny_disk: Path, endpoint: str) -> None:
    store = tiny_disk / "store"
    started = time.monotonic()
    done = _tcobench("run", "--endpoint", endpoint, "--model", "zero", "--requests", "5", env=_env(store))
    assert done.returncode == 1
    line = _error_line(done.stderr)
    assert re.match(
        rf"^StoreError: store {store}: only \d+ MiB free, below the floor of 100 MiB "
        r"\(TCOBENCH_STORE_MIN_FREE_MB\)$",
        line,
    ), line
    assert "requests" not in done.stderr and time.monotonic() - started < 120


def test_a_store_that_is_a_file_fails_before_anything_starts(tmp_path: Path, endpoint: str) -> None:
    blocker = tmp_path / "store"
    blocker.write_text("x", encoding="utf-8")
    done = _tcobench("run", "--endpoint", endpoint, "--model", "zero", "--requests", "5", env=_env(blocker))
    assert done.returncode == 1
    assert _error_line(done.stderr) == f"StoreError: store {blocker}: {blocker} is a file, not a folder"
    assert blocker.read_text("utf-8") == "x"


# --- SQL that tries to leave the store ----------------------------------------------------------------------------


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        _Recorder.seen.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"a,b\n1,2\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("escape") / "store"
    write_fleet(store, nights=1, concurrency=(1,))
    return store


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        (
            "select * from read_text('/etc/passwd')",
            'Cannot access file "/etc/passwd" - file system operations are disabled by configuration',
        ),
        (
            "select * from read_csv('http://127.0.0.1:{port}/x.csv')",
            'Cannot access file "http://127.0.0.1:{port}/x.csv"',
        ),
        ("select * from read_blob('{home}/.bash_history')", "Cannot access file"),
        ("select * from glob('/root/*')", "Cannot access"),
        ("select * from duckdb_secrets(redact := false)", "Displaying unredacted secrets is disabled"),
        ("install httpfs", "refused: LOAD statements are not allowed"),  # DuckDB types INSTALL as LOAD
        ("set enable_external_access = true", "refused: SET statements are not allowed"),
        ("attach '/tmp/x.duckdb' as x", "refused: ATTACH statements are not allowed"),
    ],
    ids=["read_text", "read_csv-http", "read_blob", "glob", "secrets", "install", "set", "attach"],
)
def test_query_cannot_leave_the_store(small_store: Path, sql: str, why: str) -> None:
    (port,) = free_ports(1)
    server = http.server.HTTPServer(("127.0.0.1", port), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Recorder.seen.clear()
    try:
        done = _tcobench("query", sql.format(port=port, home=Path.home()), env=_env(small_store))
    finally:
        server.shutdown()
    assert done.returncode == 1
    line = _error_line(done.stderr)
    assert line.startswith("QueryError: ") and why.format(port=port) in line, line
    assert done.stdout == "" and _Recorder.seen == [], "nothing was read, nothing was fetched"
