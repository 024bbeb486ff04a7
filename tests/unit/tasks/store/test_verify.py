"""verify_store: damaged and orphan files named; --repair quarantines them (never deletes) and the store is whole."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import write_results
from tcobench.tasks.store.verify import verify_store
from tests.store_helpers import data_files, lake_rows
from tests.unit.factories import make_request, make_run, make_telemetry


def _store(root: Path, runs: tuple[str, ...] = ("a", "b", "c")) -> Path:
    for run_id in runs:
        write_results(
            root,
            make_run(run_id=run_id),
            [make_request(run_id=run_id, request_index=i) for i in range(4)],
            [make_telemetry(run_id=run_id)],
        )
    return root


def _file_of(store: Path, table: str, run_id: str) -> Path:
    (path,) = [p for p in data_files(store, table) if run_id in _run_ids(p)]
    return Path(path)


def _run_ids(path: str) -> list[str]:
    return list(pq.read_table(path, columns=["run_id"]).column(0).to_pylist())


def _kinds(result: object) -> list[tuple[str, str]]:
    return [(p.kind, p.subject) for p in result.problems]  # type: ignore[attr-defined]


def test_a_clean_store_has_no_problem(tmp_path: Path) -> None:
    result = verify_store(_store(tmp_path))
    assert (result.runs, result.problems) == (3, [])
    assert result.files >= 6


def test_a_zero_byte_file_is_named_and_repair_quarantines_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    bad = _file_of(store, "requests", "b")
    original = bad.read_bytes()
    bad.write_bytes(b"")
    result = verify_store(store)
    assert _kinds(result) == [("damaged file", str(bad)), ("incomplete run", "b")]
    assert "requests: 0 bytes, the catalog recorded" in result.problems[0].detail
    repaired = verify_store(store, repair=True)
    assert repaired.quarantine is not None and repaired.quarantine.parent == store / "quarantine"
    moved = repaired.quarantine / "files" / bad.relative_to(store / "data")
    assert moved.exists() and not bad.exists(), "moved, not deleted"
    manifest = json.loads((repaired.quarantine / "MANIFEST.json").read_text("utf-8"))
    assert [p["kind"] for p in manifest["problems"]] == ["damaged file", "incomplete run"]
    kept = pq.read_table(repaired.quarantine / "rows-runs.parquet").column("run_id").to_pylist()
    assert kept == ["b"], "the incomplete run's rows are exported before they leave the store"
    assert pq.read_table(repaired.quarantine / "rows-telemetry.parquet").num_rows == 1
    assert verify_store(store).problems == []
    assert lake_rows(store, "SELECT run_id FROM lake.runs ORDER BY 1") == [("a",), ("c",)]
    assert original  # the damaged copy in quarantine is what was there (empty), the rest is intact
    con = connect(store, load_prices(None), needs={"run_summary"})
    try:
        assert con.execute("SELECT run_id, n FROM run_summary ORDER BY 1").fetchall() == [("a", 4), ("c", 4)]
    finally:
        con.close()


def test_damage_that_keeps_the_size_is_found_by_decoding(tmp_path: Path) -> None:
    store = _store(tmp_path)
    bad = _file_of(store, "telemetry", "a")
    data = bytearray(bad.read_bytes())
    middle = len(data) // 2
    data[middle - 40 : middle + 40] = b"\xff" * 80
    bad.write_bytes(bytes(data))
    from tcobench.tasks.store.health import file_problem

    assert file_problem(str(bad), bad.stat().st_size) is None, "size and magic bytes still match"
    assert ("damaged file", str(bad)) in _kinds(verify_store(store))
    assert ("damaged file", str(bad)) in _kinds(verify_store(store, deep=False)), "a scan that fails decodes all"


def test_an_orphan_file_is_reported_and_moved(tmp_path: Path) -> None:
    store = _store(tmp_path, ("a",))
    source = _file_of(store, "requests", "a")
    orphan = source.with_name("ducklake-left-by-a-killed-writer.parquet")
    shutil.copy(source, orphan)
    assert verify_store(store).problems == [], "a fresh unreferenced file may be a commit in flight"
    result = verify_store(store, orphan_age_s=0)
    assert _kinds(result) == [("orphan file", str(orphan))]
    repaired = verify_store(store, repair=True, orphan_age_s=0)
    assert not orphan.exists() and repaired.quarantine is not None
    assert (repaired.quarantine / "files" / orphan.relative_to(store / "data")).exists()
    assert verify_store(store, orphan_age_s=0).problems == []


def test_a_damaged_runs_file_is_rebuilt_and_its_runs_rows_quarantined(tmp_path: Path) -> None:
    store = _store(tmp_path, ("a", "b"))
    bad = _file_of(store, "runs", "a")
    bad.write_bytes(b"garbage that is not parquet at all")
    result = verify_store(store)
    assert ("damaged file", str(bad)) in _kinds(result)
    assert ("orphan rows", "a") in _kinds(result), "requests and telemetry of a run with no runs row"
    verify_store(store, repair=True)
    assert verify_store(store).problems == []
    assert lake_rows(store, "SELECT run_id FROM lake.runs") == [("b",)]
    assert lake_rows(store, "SELECT DISTINCT run_id FROM lake.requests") == [("b",)]


@pytest.mark.parametrize("table", ["requests", "telemetry"])
def test_after_repair_writes_go_on_into_the_rebuilt_table(tmp_path: Path, table: str) -> None:
    store = _store(tmp_path, ("a", "b"))
    _file_of(store, table, "a").write_bytes(b"")
    verify_store(store, repair=True)
    _store(store, ("d",))
    assert lake_rows(store, "SELECT run_id FROM lake.runs ORDER BY 1") == [("b",), ("d",)]
    (path,) = [p for p in data_files(store, table) if "d" in _run_ids(p)]
    assert "/date=" in path, "the rebuilt table is partitioned by night again"
