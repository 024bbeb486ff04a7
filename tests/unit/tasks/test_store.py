"""write_results: atomic, idempotent per run id, one file per run and table, on a real store."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tcobench.errors import StoreError
from tcobench.schemas import TelemetryRecord
from tcobench.tasks.store import PARTITION_COLUMNS, file_schema, write_results

from ..factories import T0_NS, make_request, make_run


def _files(store: Path) -> list[str]:
    return sorted(str(p.relative_to(store)) for p in store.rglob("*") if p.is_file())


def _telemetry(run_id: str = "run0") -> TelemetryRecord:
    return TelemetryRecord(
        run_id=run_id, date="2023-11-14", host="testhost", ts_ns=T0_NS, phase="measure", source="rapl",
        device_index=0, device_uuid=None, power_mw=15_000, energy_mj=None, util_pct=None, mem_used_bytes=None,
        sm_clock_mhz=None, temperature_c=None, power_limit_mw=None,
    )  # fmt: skip


def _rows(path: Path) -> int:
    return int(pq.read_table(path).num_rows)


def test_layout_and_file_schema(tmp_path: Path) -> None:
    written = write_results(tmp_path, make_run(), [make_request(), make_request(request_index=1)], [_telemetry()])
    partition = "date=2023-11-14/host=testhost/run-run0.parquet"
    assert _files(tmp_path) == [f"requests/{partition}", f"runs/{partition}", f"telemetry/{partition}"]
    # runs (the commit marker) is written last
    assert [p.parts[-4] for p in written] == ["telemetry", "requests", "runs"]
    for table in ("runs", "requests", "telemetry"):
        schema = pq.read_schema(tmp_path / table / partition)
        assert schema.names == file_schema(table).names
        assert not set(PARTITION_COLUMNS) & set(schema.names)
    assert _rows(tmp_path / "requests" / partition) == 2


def test_writing_the_same_run_twice_leaves_one_file_and_no_duplicates(tmp_path: Path) -> None:
    requests = [make_request(request_index=i) for i in range(3)]
    write_results(tmp_path, make_run(), requests)
    first = _files(tmp_path)
    write_results(tmp_path, make_run(), requests)
    assert _files(tmp_path) == first
    (requests_file,) = (tmp_path / "requests").rglob("*.parquet")
    assert _rows(requests_file) == 3
    (runs_file,) = (tmp_path / "runs").rglob("*.parquet")
    assert _rows(runs_file) == 1


def test_rewrite_replaces_the_rows(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(), [make_request(request_index=i) for i in range(3)])
    write_results(tmp_path, make_run(), [make_request()])
    (requests_file,) = (tmp_path / "requests").rglob("*.parquet")
    assert _rows(requests_file) == 1


def test_rewrite_in_another_date_partition_removes_the_old_file(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(date="2023-11-14"), [make_request()], [_telemetry()])
    write_results(tmp_path, make_run(date="2023-11-15"), [make_request()], [_telemetry()])
    files = _files(tmp_path)
    assert len(files) == 3
    assert all("date=2023-11-15" in f for f in files), files


def test_rewrite_without_telemetry_removes_the_old_telemetry(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(), [make_request()], [_telemetry()])
    write_results(tmp_path, make_run(), [make_request()])
    assert not list((tmp_path / "telemetry").rglob("*.parquet"))


def test_other_runs_are_untouched(tmp_path: Path) -> None:
    write_results(tmp_path, make_run(run_id="a"), [make_request(run_id="a")])
    write_results(tmp_path, make_run(run_id="b"), [make_request(run_id="b")])
    write_results(tmp_path, make_run(run_id="a"), [make_request(run_id="a")])
    assert len(list((tmp_path / "requests").rglob("*.parquet"))) == 2


def test_no_temporary_files_are_left(tmp_path: Path) -> None:
    for _ in range(2):
        write_results(tmp_path, make_run(), [make_request()], [_telemetry()])
    leftovers = [p for p in tmp_path.rglob("*") if p.is_file() and (p.name.startswith(".") or p.suffix == ".tmp")]
    assert leftovers == []


def test_unwritable_store_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "store"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(StoreError, match=r"^cannot write run run0 to store "):
        write_results(blocker, make_run(), [make_request()])
