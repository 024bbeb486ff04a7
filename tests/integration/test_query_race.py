"""A reader calling DuckLake's maintenance functions while a nightly writes (issue 33, item 1): on each kind of store
(a folder, a shared SQLite catalog, PostgreSQL + S3) the nightly commits every run and `tcobench store verify` finds
nothing missing, orphaned or damaged.

The reader loops each function that writes, expires, merges, rewrites or deletes on a fresh reading connection
(``tasks.store.query.connect``), past the name check, so what is tested is the file lock: before the fix,
``ducklake_delete_orphaned_files`` deleted the files a writer had written but not yet committed. A `tcobench query` of
it runs too (refused by name). Real processes: `tcobench nightly --no-prefect` against the zero-cost endpoint
(bench/zero_endpoint.py), PostgreSQL and SeaweedFS from the ``pg_url`` / ``s3`` fixtures. Cost per store kind, most of
it the nightly's start: docs/dev/performance.md#test-query-race.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.verify import verify_store
from tests.conftest import S3Endpoint
from tests.services import create_database, free_ports, new_bucket_name

ROOT = Path(__file__).resolve().parents[2]
WRITERS = (
    "SELECT * FROM ducklake_delete_orphaned_files('lake', cleanup_all => true)",
    "SELECT * FROM ducklake_cleanup_old_files('lake', cleanup_all => true)",
    "SELECT * FROM ducklake_expire_snapshots('lake', older_than => now())",
    "SELECT * FROM ducklake_merge_adjacent_files('lake')",
    "SELECT * FROM ducklake_rewrite_data_files('lake')",
    "SELECT * FROM ducklake_flush_inlined_data('lake')",
    "SELECT * FROM ducklake_set_option('lake', 'parquet_compression', 'zstd')",
)
CONCURRENCY = (1, 2, 3)


def _exe() -> str:
    exe = Path(sys.executable).parent / "tcobench"
    return str(exe if exe.exists() else "tcobench")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    (port,) = free_ports(1)
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "zero_endpoint.py"), "--port", str(port), "--tokens", "8"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and "http://" in proc.stdout.readline()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(params=["folder", "sqlite", "postgres-s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "folder":
        return str(tmp_path / "store")
    if request.param == "sqlite":
        return f"sqlite://{tmp_path / 'store'}"
    pg_url: str = request.getfixturevalue("pg_url")
    s3: S3Endpoint = request.getfixturevalue("s3")
    from pyarrow import fs

    bucket = new_bucket_name()
    fs.S3FileSystem(
        endpoint_override=s3.endpoint,
        scheme="http",
        access_key=s3.key_id,
        secret_key=s3.secret,
        region="us-east-1",
        allow_bucket_creation=True,
    ).create_dir(bucket)
    for key, value in (
        ("AWS_ACCESS_KEY_ID", s3.key_id),
        ("AWS_SECRET_ACCESS_KEY", s3.secret),
        ("AWS_ENDPOINT_URL", f"http://{s3.endpoint}"),
        ("AWS_REGION", "us-east-1"),
    ):
        monkeypatch.setenv(key, value)
    return f"{create_database(pg_url)}?data=s3://{bucket}/lake"


def _reader(store: str, stop: threading.Event, calls: list[int]) -> None:
    """Call every maintenance function on reading connections until told to stop."""
    prices = load_prices(None)
    while not stop.is_set():
        try:
            con = connect(store, prices)
        except Exception:  # noqa: BLE001 - the store may not exist yet, or be mid-commit: try again
            stop.wait(0.1)
            continue
        try:
            for sql in WRITERS:
                with contextlib.suppress(duckdb.Error):
                    con.execute(sql).fetchall()
                calls[0] += 1
        finally:
            con.close()
        stop.wait(0.3)  # leave the two cores to the nightly most of the time


def test_maintenance_calls_during_a_nightly_lose_nothing(store: str, endpoint: str, tmp_path: Path) -> None:
    inventory, matrix = tmp_path / "inventory.toml", tmp_path / "matrix.toml"
    inventory.write_text('[[hosts]]\nname = "h1"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n')
    matrix.write_text(
        f'[[engines]]\nname = "e"\nendpoint = "{endpoint}"\n[[models]]\nname = "zero"\n'
        f'[[workloads]]\nname = "w"\nrequests = 8\nwarmup_requests = 0\nmax_tokens = 8\n'
        f"concurrency = {list(CONCURRENCY)}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(TCOBENCH_STORE=store, TCOBENCH_STATE_DIR=str(tmp_path / "state"), COLUMNS="200")
    stop, calls = threading.Event(), [0]
    reader = threading.Thread(target=_reader, args=(store, stop, calls), daemon=True)
    reader.start()
    try:
        nightly = subprocess.run(
            [_exe(), "nightly", "-i", str(inventory), "-m", str(matrix), "--no-prefect"],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        refused = subprocess.run(
            [_exe(), "query", "select * from ducklake_delete_orphaned_files('lake', cleanup_all => true)"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        stop.set()
        reader.join(120)
    assert nightly.returncode == 0, nightly.stderr[-3000:]
    assert calls[0] > 0, "the reader never got a connection"
    assert (
        refused.returncode == 1 and "QueryError: refused: the function ducklake_delete_orphaned_files" in refused.stderr
    )
    result = verify_store(store, orphan_age_s=0.0)  # `tcobench store verify`, counting even fresh orphans
    assert result.problems == [], result.problems
    con = connect(store, load_prices(None), needs={"run_summary"})
    try:
        counted = con.execute("SELECT count(*), sum(n) FROM run_summary").fetchone()
    finally:
        con.close()
    assert counted == (len(CONCURRENCY), 8 * len(CONCURRENCY))
