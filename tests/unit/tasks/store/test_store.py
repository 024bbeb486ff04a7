"""write_results on a real local store: one transaction per run, idempotent per run id, schemas from the records."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pydantic import Field

from tcobench.errors import StoreError
from tcobench.schemas import RunRecord, TelemetryRecord, TraceConfig
from tcobench.tasks.store import checksums, health
from tcobench.tasks.store import store as store_module
from tcobench.tasks.store.store import (
    cache_schema,
    check_store,
    open_store,
    table_columns_module,
    write_image_record,
    write_results,
    write_trace_stats,
)
from tcobench.tasks.store.table_columns import TABLE_COLUMNS
from tcobench.tasks.store.views import CACHED_VIEWS
from tcobench.tasks.workload import profile_trace
from tests.store_helpers import data_files, lake_rows, on_disk, write_folder_run
from tests.unit.factories import T0_NS, make_request, make_run


def _telemetry(run_id: str = "run0") -> TelemetryRecord:
    return TelemetryRecord(
        run_id=run_id,
        date="2023-11-14",
        host="testhost",
        ts_ns=T0_NS,
        phase="measure",
        source="rapl",
        device_index=0,
        device_uuid=None,
        power_mw=15_000,
        energy_mj=None,
        util_pct=None,
        mem_used_bytes=None,
        sm_clock_mhz=None,
        temperature_c=None,
        power_limit_mw=None,
    )


def _count(store: Path, table: str, where: str = "") -> int:
    return int(lake_rows(store, f"SELECT count(*) FROM lake.{table} {where}")[0][0])


def test_a_run_commits_every_table_in_one_snapshot(tmp_path: Path) -> None:
    snapshot = write_results(tmp_path, make_run(), [make_request(request_index=i) for i in range(3)], [_telemetry()])
    assert (_count(tmp_path, "runs"), _count(tmp_path, "requests"), _count(tmp_path, "telemetry")) == (1, 3, 1)
    assert lake_rows(tmp_path, "SELECT run_id, requests, telemetry, writer FROM lake.commits") == [
        ("run0", 3, 1, "run")
    ]
    ((last, message),) = lake_rows(
        tmp_path,
        "SELECT max(snapshot_id), any_value(commit_message) FILTER "
        "(WHERE snapshot_id = (SELECT max(snapshot_id) FROM lake.snapshots())) "
        "FROM lake.snapshots()",
    )
    assert (last, message) == (snapshot, "run run0")
    ((changes,),) = lake_rows(tmp_path, f"SELECT changes FROM lake.snapshots() WHERE snapshot_id = {snapshot}")
    inserted = dict(changes.items() if isinstance(changes, dict) else changes)["tables_inserted_into"]
    assert len(inserted) >= 4, "runs, requests, telemetry, commits (and the cached views) in the same snapshot"


def test_columns_come_from_the_records(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(), [make_request()], [_telemetry()])
    for table, model in (("runs", RunRecord), ("telemetry", TelemetryRecord)):
        names = [r[0] for r in lake_rows(tmp_path, f"DESCRIBE lake.{table}")]
        assert names == list(model.model_fields)


def test_writing_the_same_run_twice_does_not_duplicate(tmp_path: Path) -> None:
    requests = [make_request(request_index=i) for i in range(3)]
    write_results(tmp_path, make_run(), requests)
    write_results(tmp_path, make_run(), requests)
    assert (_count(tmp_path, "runs"), _count(tmp_path, "requests"), _count(tmp_path, "commits")) == (1, 3, 1)


def test_rewrite_replaces_the_rows_even_in_another_date(tmp_path: Path) -> None:
    write_results(
        tmp_path, make_run(date="2023-11-14"), [make_request(request_index=i) for i in range(3)], [_telemetry()]
    )
    write_results(tmp_path, make_run(date="2023-11-15"), [make_request(date="2023-11-15")])
    assert lake_rows(tmp_path, "SELECT date FROM lake.runs") == [("2023-11-15",)]
    assert (_count(tmp_path, "requests"), _count(tmp_path, "telemetry")) == (1, 0)
    assert lake_rows(tmp_path, "SELECT requests, telemetry FROM lake.commits") == [(1, 0)]


def test_a_row_under_another_date_than_its_run_is_refused(tmp_path: Path) -> None:
    """Readers and compaction find a run's rows by its date (the partition key): a row elsewhere would be missed."""
    write_results(tmp_path, make_run(run_id="a"), [make_request(run_id="a")])
    with pytest.raises(StoreError, match=r"requests of run b: date '2023-11-15' is not the run's date '2023-11-14'"):
        write_results(tmp_path, make_run(run_id="b"), [make_request(run_id="b", date="2023-11-15")])
    assert lake_rows(tmp_path, "SELECT run_id FROM lake.runs") == [("a",)]  # nothing of b was written


def test_other_runs_are_untouched(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(run_id="a"), [make_request(run_id="a")])
    write_results(tmp_path, make_run(run_id="b"), [make_request(run_id="b"), make_request(run_id="b")])
    write_results(tmp_path, make_run(run_id="a"), [make_request(run_id="a")])
    assert lake_rows(tmp_path, "SELECT run_id, count(*) FROM lake.requests GROUP BY 1 ORDER BY 1") == [
        ("a", 1),
        ("b", 2),
    ]


def test_a_failed_commit_leaves_no_row_and_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_results(tmp_path, make_run(run_id="kept"), [make_request(run_id="kept")])
    before = on_disk(tmp_path)
    real = store_module._insert

    def failing(con: Any, target: str, rows: Any) -> None:
        real(con, target, rows)
        if target.endswith(".commits"):  # after runs, requests and telemetry were written
            raise duckdb.IOException("simulated: the disk went away")

    monkeypatch.setattr(store_module, "_insert", failing)
    with pytest.raises(StoreError, match=r"^cannot write run lost to store .*simulated: the disk went away"):
        write_results(tmp_path, make_run(run_id="lost"), [make_request(run_id="lost")], [_telemetry("lost")])
    monkeypatch.undo()
    assert lake_rows(tmp_path, "SELECT run_id FROM lake.runs") == [("kept",)]
    assert _count(tmp_path, "requests", "WHERE run_id = 'lost'") == 0
    assert on_disk(tmp_path) == before, "the rolled-back transaction's files are gone"


def test_the_table_columns_are_generated_from_the_record_models() -> None:
    """tasks/store/table_columns.py: the names a reader checks a stored table's columns against."""
    generated = Path(store_module.__file__).with_name("table_columns.py")
    assert generated.read_text("utf-8") == table_columns_module(), (
        "tasks/store/table_columns.py: regenerate with `python -m tcobench.schemas.columns`"
    )
    assert list(TABLE_COLUMNS) == list(store_module.TABLES)
    assert TABLE_COLUMNS["runs"][0] == "run_id" and "gpu_vendor" in TABLE_COLUMNS["runs"]


def test_a_field_added_to_a_record_becomes_a_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_results(tmp_path, make_run(run_id="old"), [make_request(run_id="old")])

    class NewerRun(RunRecord):
        gpu_topology: str | None = Field(default=None, description="A field a later tcobench adds.")

    monkeypatch.setitem(store_module.TABLES, "runs", NewerRun)
    newer = NewerRun(**make_run(run_id="new").model_dump(), gpu_topology="NV18")
    store_module.open_store(tmp_path)._tables_ready = False  # a new process of the newer version
    write_results(tmp_path, newer, [make_request(run_id="new")])
    rows = lake_rows(tmp_path, "SELECT run_id, gpu_topology FROM lake.runs ORDER BY run_id")
    assert rows == [("new", "NV18"), ("old", None)]


def test_check_store_refuses_a_file_a_folder_store_and_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(StoreError, match=rf"^store {blocker}: {blocker} is a file, not a folder$"):
        check_store(blocker)
    old = tmp_path / "old"
    write_folder_run(old, make_run(), [make_request()])
    with pytest.raises(StoreError, match=rf"folder layout of tcobench < 0.2 .*tcobench store migrate {old}$"):
        check_store(old)
    monkeypatch.setenv("TCOBENCH_STORE_MIN_FREE_MB", str(10**12))
    with pytest.raises(StoreError, match=r"MiB free, below the floor of .* MiB \(TCOBENCH_STORE_MIN_FREE_MB\)$"):
        check_store(tmp_path / "fresh")
    monkeypatch.setenv("TCOBENCH_STORE_MIN_FREE_MB", "1")
    check_store(tmp_path / "fresh" / "new")
    assert not (tmp_path / "fresh").exists(), "a store is created by its first commit, not by the check"
    write_results(tmp_path / "fresh", make_run(), [make_request()])
    check_store(tmp_path / "fresh")
    assert (tmp_path / "fresh" / "catalog.ducklake").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_check_store_refuses_a_read_only_folder(tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o555)
    with pytest.raises(StoreError, match="not writable"):
        check_store(tmp_path / "ro")
    with pytest.raises(StoreError, match=rf"{tmp_path / 'ro'} is not writable"):
        check_store(tmp_path / "ro" / "new" / "store")  # not there yet: where it would be created


def test_requests_and_telemetry_are_partitioned_by_night(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(), [make_request()], [_telemetry()])
    for table in ("requests", "telemetry"):
        (path,) = data_files(tmp_path, table)
        assert f"/main/{table}/date=2023-11-14/" in path


def test_image_rows_replace_by_event_id(tmp_path: Path) -> None:
    from tcobench.images import BuildOutcome, image_record, load_catalog

    spec = next(s for s in load_catalog().images if s.name == "llama-cpp-cpu")
    outcome = BuildOutcome(
        spec,
        "tcobench/llama-cpp-cpu:11434.0.0",
        "sha256:" + "1" * 64,
        10,
        "f" * 64,
        "built",
        7,
        {"BASE_IMAGE": "b"},
        "b",
        None,
    )
    built = image_record(outcome, None, smoke_version="v")
    write_image_record(tmp_path, built)
    write_image_record(tmp_path, built)
    write_image_record(tmp_path, image_record(outcome, None, "pushed", "r/t@sha256:" + "2" * 64))
    assert lake_rows(tmp_path, "SELECT action, repo_digest FROM lake.images ORDER BY action") == [
        ("built", None),
        ("pushed", "r/t@sha256:" + "2" * 64),
    ]


def test_two_writers_creating_a_new_catalog_at_once_retry_instead_of_failing() -> None:
    """Seen with 8 writers on a fresh PostgreSQL catalog: the loser of the race gets "already exists" from its
    CREATE TABLE; the next attempt finds the catalog. Other failures to initialise stay fatal."""
    raced = (
        'Failed to initialize DuckLake:Failed to execute query "CREATE TABLE "public"."ducklake_metadata"(...)": '
        'ERROR: relation "ducklake_metadata" already exists'
    )
    assert store_module._transient(raced)
    assert store_module._transient("Failed to initialize DuckLake: duplicate key value violates unique constraint")
    assert not store_module._transient("Failed to initialize DuckLake: permission denied for schema public")
    assert not store_module._transient('relation "runs" already exists')


def test_the_commit_counts_engine_metrics_and_verify_checks_them(tmp_path: Path) -> None:
    from tcobench.schemas import EngineMetricRecord, EngineQuantity
    from tcobench.tasks.store.lake import attach_sql, new_instance, parse_store
    from tcobench.tasks.store.verify import verify_store

    samples = [
        EngineMetricRecord(
            run_id="run0",
            date="2023-11-14",
            host="testhost",
            ts_ns=T0_NS + k,
            source="t",
            metric="m",
            labels=None,
            quantity=EngineQuantity.requests_running,
            value=1.0,
        )
        for k in range(3)
    ]
    write_results(tmp_path, make_run(), [make_request()], [], samples)
    assert lake_rows(tmp_path, "SELECT engine_metrics FROM lake.commits") == [(3,)]
    assert verify_store(tmp_path).problems == []
    location = parse_store(tmp_path)
    con = new_instance(location)
    con.execute(attach_sql(location, read_only=False))
    con.execute("DELETE FROM lake.engine_metrics WHERE ts_ns = ?", [T0_NS])
    con.close()
    (problem,) = verify_store(tmp_path).problems
    assert (problem.kind, problem.subject) == ("incomplete run", "run0") and "engine_metrics: 2 rows" in problem.detail


def test_check_store_skips_its_probe_commit_right_after_a_commit_of_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commits: list[str] = []
    real = store_module.Store.commit

    def counted(self: Any, body: Any, what: str, checksums: bool = True) -> int:
        commits.append(what)
        return real(self, body, what, checksums)

    monkeypatch.setattr(store_module.Store, "commit", counted)
    check_store(tmp_path / "s")
    assert commits == [] and not (tmp_path / "s").exists()  # a new store: nothing to probe, nothing created
    write_results(tmp_path / "s", make_run(), [make_request()])
    commits.clear()
    check_store(tmp_path / "s")
    assert commits == []  # this process just committed there: that proved what the probe would
    monkeypatch.setattr(store_module, "CHECK_FRESH_S", 0.0)
    check_store(tmp_path / "s")
    assert commits == ["check"]  # not recent enough: probed again
    monkeypatch.setenv("TCOBENCH_STORE_MIN_FREE_MB", str(10**12))
    monkeypatch.setattr(store_module, "CHECK_FRESH_S", 3600.0)
    with pytest.raises(StoreError, match="below the floor"):
        check_store(tmp_path / "s")  # the other checks are made every time


def test_the_last_write_after_a_signal_uses_the_prepared_writer_and_leaves_its_checksums(tmp_path: Path) -> None:
    """After a signal the benchmark flow calls ``WriterPreparation.stopping`` and writes its run with ``exiting``:
    the store and its tables are made ahead, the cached views' rows (computed on the prepared connection) are those
    a plain commit stores and are kept for the progress line, and the new files' checksums are recorded by the next
    commit."""
    stopped, plain = tmp_path / "stopped", tmp_path / "plain"
    writer = store_module.WriterPreparation(stopped)
    writer.stopping()
    writer.close()
    prepared = open_store(stopped).prepared_views
    deadline = time.monotonic() + 120
    while prepared.empty() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not prepared.empty() and open_store(stopped).location.exists()
    for store, exiting in ((stopped, True), (plain, False)):
        run = make_run(run_id="run0")
        write_results(store, run, [make_request(request_index=i) for i in range(3)], [_telemetry()], exiting=exiting)
    assert prepared.empty(), "the commit used the prepared connection"
    for view in CACHED_VIEWS:
        rows = [sorted(lake_rows(s, f"SELECT * FROM lake.{cache_schema()}.{view}")) for s in (stopped, plain)]
        assert rows[0] == rows[1] and rows[0], view
    assert open_store(stopped).committed("run_summary", ["run0"]) == open_store(plain).committed(
        "run_summary", ["run0"]
    )

    def known(store: Path) -> dict[str, str]:
        return open_store(store).run(checksums.recorded, "check")

    assert known(stopped) == {} and known(plain)
    write_results(stopped, make_run(run_id="run1"), [make_request(run_id="run1")])
    root = open_store(stopped).location.data_path
    files = open_store(stopped).run(lambda con: [f.path.removeprefix(root) for f in health.data_files(con, root)], "ls")
    assert files and set(files) <= set(known(stopped)), "the next commit records the files the last one left"


def test_trace_stats_rows_replace_by_stats_id(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 5, "output_length": 1}\n')
    record = profile_trace(TraceConfig(path=trace))
    write_trace_stats(tmp_path / "store", record)
    write_trace_stats(tmp_path / "store", record.model_copy(update={"requests": 2}))
    assert lake_rows(tmp_path / "store", "SELECT requests, format, sha256 FROM lake.trace_stats") == [
        (2, "mooncake", record.sha256)
    ]
