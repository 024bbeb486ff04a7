"""health.data_files: the catalog's own listing, checked against DuckLake's ducklake_list_files on real stores."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from tcobench.tasks.store.compact import compact_store
from tcobench.tasks.store.health import DataFile, data_files
from tcobench.tasks.store.lake import LAKE, parse_store
from tcobench.tasks.store.store import write_results
from tests.store_helpers import lake
from tests.unit.factories import make_request, make_run


def _listed(con: duckdb.DuckDBPyConnection, snapshot: int) -> list[DataFile]:
    """What ducklake_list_files says, table by table, at ``snapshot``."""
    tables = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? ORDER BY ALL", [LAKE]
    ).fetchall()
    found = []
    for schema, table in tables:
        try:
            rows = con.execute(
                f"SELECT data_file, data_file_size_bytes, delete_file, delete_file_size_bytes FROM "
                f"ducklake_list_files('{LAKE}', ?, schema => ?, snapshot_version => {snapshot})",
                [table, schema],
            ).fetchall()
        except duckdb.Error:  # the table did not exist yet at that snapshot
            continue
        found += [DataFile(schema, table, str(r[0]), int(r[1]), r[2], r[3]) for r in rows]
    return sorted(found, key=lambda f: (f.schema, f.table, f.path))


def _write(store: Path, run_id: str, night: str) -> None:
    run = make_run(run_id=run_id, date=night, batch_id=night)
    write_results(store, run, [make_request(run_id=run_id, date=night, request_index=i) for i in range(3)])


def test_data_files_are_ducklake_list_files_at_every_snapshot(tmp_path: Path) -> None:
    """New runs, a merge by compact (one file holds two runs), then a re-written run (a delete file on the merged
    file) and a moved store folder: at every snapshot the catalog query lists what DuckLake lists."""
    store = tmp_path / "store"
    for run_id in ("a", "b"):
        _write(store, run_id, "2023-11-14")
    compact_store(store, keep_days=365)
    _write(store, "a", "2023-11-14")  # re-written: its rows in the merged file are deleted
    with lake(store) as con:
        snapshots = [int(r[0]) for r in con.execute(f"SELECT snapshot_id FROM {LAKE}.snapshots()").fetchall()]
        assert len(snapshots) > 3
        deletes = 0
        for snap in snapshots:
            ours = data_files(con, parse_store(store).data_path, snap)
            assert ours == _listed(con, snap), f"snapshot {snap}"
            deletes += sum(1 for f in ours if f.delete_path is not None)
        assert deletes, "no snapshot with a delete file: the store did not exercise them"
        newest = data_files(con, parse_store(store).data_path)
        assert newest == _listed(con, max(snapshots))
        assert all(Path(f.path).is_file() for f in newest)
    moved = tmp_path / "moved"
    shutil.move(store, moved)
    with lake(moved) as con:
        ours = data_files(con, parse_store(moved).data_path)
        assert ours == _listed(con, max(snapshots))
        assert ours and all(f.path.startswith(str(moved)) and Path(f.path).is_file() for f in ours)
