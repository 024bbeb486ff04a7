"""migrate_folder: a folder store of tcobench < 0.2 imported losslessly; every view the same before and after."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tcobench.errors import StoreError
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.migrate import LEGACY_FOLDER, compare_views, migrate_folder
from tcobench.tasks.store.query import connect, sql_views
from tcobench.tasks.store.store import check_store
from tests.store_helpers import lake_rows, write_folder_run
from tests.unit.factories import make_request, make_run, write_fleet


@pytest.fixture(scope="module")
def thousand(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """A folder store with 1,002 runs (2 hosts x 167 nights x 3 levels), imported into a new store in place."""
    folder = tmp_path_factory.mktemp("folder-store")
    runs = write_fleet(folder, nights=167, requests=6, folder_layout=True)
    originals = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.parquet"))
    result = migrate_folder(folder, folder, load_prices(None), batch=250)
    assert (result.runs, result.skipped, result.orphans) == (len(runs), [], [])
    assert result.differences == [], result.differences
    assert result.checked_views == 3 + len([n for n, text in sql_views() if "CREATE OR REPLACE VIEW" in text])
    return folder, folder / LEGACY_FOLDER, originals


def test_a_thousand_runs_migrate_and_every_view_is_the_same(thousand: tuple[Path, Path, list[str]]) -> None:
    store, legacy, originals = thousand
    assert lake_rows(store, "SELECT count(*) FROM lake.runs") == [(1002,)]
    assert lake_rows(store, "SELECT count(*), sum(requests) FROM lake.commits WHERE writer = 'migrate'") == [
        (1002, 1002 * 7)
    ]


def test_nothing_is_deleted_and_the_old_folders_move_aside(thousand: tuple[Path, Path, list[str]]) -> None:
    store, legacy, originals = thousand
    assert sorted(str(p.relative_to(legacy)) for p in legacy.rglob("*.parquet")) == originals
    assert not (store / "runs").exists(), "the old folders moved, so the store opens"
    check_store(store)


def test_every_value_of_every_column_is_kept(thousand: tuple[Path, Path, list[str]]) -> None:
    store, legacy, _ = thousand
    (one,) = [p for p in (legacy / "requests").rglob("*.parquet")][:1]
    old = pq.read_table(one).to_pylist()
    run_id = old[0]["run_id"]
    con = connect(store, load_prices(None), needs={"requests"})
    try:
        new = (
            con.execute(
                "SELECT * EXCLUDE (date, host) FROM requests WHERE run_id = ? ORDER BY phase DESC, request_index",
                [run_id],
            )
            .fetch_arrow_table()
            .to_pylist()
        )
    finally:
        con.close()
    assert new == sorted(old, key=lambda r: (r["phase"] != "warmup", r["request_index"]))


def test_unreadable_and_orphan_files_are_listed_and_left(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    write_folder_run(folder, make_run(run_id="good"), [make_request(run_id="good")])
    write_folder_run(folder, make_run(run_id="bad"), [make_request(run_id="bad")])
    write_folder_run(folder, make_run(run_id="gone"), [make_request(run_id="gone")])
    (bad,) = folder.glob("runs/*/*/run-bad.parquet")
    bad.write_bytes(b"PAR1 truncated")
    (gone,) = folder.glob("runs/*/*/run-gone.parquet")
    gone.unlink()  # its requests file has no runs file: an orphan
    result = migrate_folder(folder, tmp_path / "new", load_prices(None))
    assert result.runs == 1 and result.differences == []
    assert [(Path(p).name, why.split(":")[0]) for p, why in result.skipped] == [("run-bad.parquet", "unreadable")]
    assert [Path(p).name for p in result.orphans] == ["run-gone.parquet"]
    assert bad.exists() and (folder / "requests").exists(), "a migration into another store leaves the source"
    assert lake_rows(tmp_path / "new", "SELECT run_id FROM lake.runs") == [("good",)]


def test_the_view_check_finds_a_value_that_changed(tmp_path: Path) -> None:
    """What the thousand-run migration's `differences == []` rests on: compare_views reports a run whose stored
    figure differs from its folder file's (the output length of a request, changed after the import)."""
    folder = tmp_path / "old"
    write_folder_run(folder, make_run(), [make_request(), make_request(request_index=1)])
    result = migrate_folder(folder, folder, load_prices(None))
    assert result.differences == []
    legacy = folder / LEGACY_FOLDER
    files = {t: sorted(str(p) for p in (legacy / t).rglob("*.parquet")) for t in ("runs", "requests", "telemetry")}
    (requests_file,) = files["requests"]
    table = pq.read_table(requests_file)
    column = table.schema.get_field_index("output_tokens")
    pq.write_table(table.set_column(column, "output_tokens", pc.add(table["output_tokens"], 1)), requests_file)
    differences, _ = compare_views(files, folder, load_prices(None))
    assert differences and differences[0].startswith("requests: row"), differences


def test_migrating_again_replaces_and_does_not_duplicate(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    write_folder_run(folder, make_run(), [make_request(), make_request(request_index=1)])
    for _ in range(2):
        migrate_folder(folder, tmp_path / "new")
    assert lake_rows(tmp_path / "new", "SELECT count(*) FROM lake.requests") == [(2,)]


def test_a_folder_without_a_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"holds no folder store"):
        migrate_folder(tmp_path, tmp_path / "new")
