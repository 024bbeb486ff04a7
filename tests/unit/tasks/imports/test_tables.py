"""import_tables: a `tcobench export --format parquet` folder of the fleet store taken back into a fresh store gives
the same figures (run_summary, tco, request_metrics equal row by row), and a bad folder writes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tcobench.errors import ConfigError
from tcobench.schemas.export import ExportFormat
from tcobench.tasks.export.export_runs import export_runs
from tcobench.tasks.imports.tables import import_tables
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect


def _rows(store: Path, view: str) -> list[dict[str, Any]]:
    con = connect(store, load_prices(None), needs=(view,))  # that view and what it builds on
    try:
        rows: list[dict[str, Any]] = con.sql(f"SELECT * FROM {view}").to_arrow_table().to_pylist()
    finally:
        con.close()
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.fixture(scope="module")
def exported(fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "out"
    export_runs(fleet, load_prices(None), ExportFormat.parquet, out, None)
    return out


@pytest.fixture(scope="module")
def imported(exported: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("again") / "store"
    done = import_tables(store, exported)
    assert done.rows["runs"] == 30 and done.rows["requests"] > 0 and done.replaced == []
    return store


@pytest.mark.parametrize("view", ["runs", "requests", "telemetry", "run_summary", "tco", "request_metrics"])
def test_the_imported_store_gives_the_same_rows_and_figures(fleet: Path, imported: Path, view: str) -> None:
    original = _rows(fleet, view)
    assert original, f"the fleet store has no {view} rows: the comparison would prove nothing"
    assert _rows(imported, view) == original


def test_runs_keep_their_ids_and_source(fleet: Path, imported: Path) -> None:
    keep = ("run_id", "source", "source_sha256", "host", "date")
    assert [{k: r[k] for k in keep} for r in _rows(imported, "runs")] == [
        {k: r[k] for k in keep} for r in _rows(fleet, "runs")
    ]


def test_stored_runs_are_refused_unless_replace(exported: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    import_tables(store, exported)
    with pytest.raises(ConfigError, match=r"30 run\(s\) already in the store: gpu-amd-1-n0-c1, .*--replace"):
        import_tables(store, exported)
    again = import_tables(store, exported, replace=True)
    assert len(again.replaced) == 30
    assert len(_rows(store, "runs")) == 30


def _copy(exported: Path, tmp_path: Path) -> Path:
    bad = tmp_path / "bad"
    shutil.copytree(exported, bad)
    return bad


def _rewrite(path: Path, table: pa.Table) -> None:
    pq.write_table(table, path)


def _nothing_written(store: Path) -> None:
    assert not store.exists() or _rows(store, "runs") == []


def test_a_missing_table_is_named(exported: Path, tmp_path: Path) -> None:
    bad = _copy(exported, tmp_path)
    (bad / "telemetry.parquet").unlink()
    with pytest.raises(ConfigError, match=r"telemetry\.parquet: missing"):
        import_tables(tmp_path / "store", bad)
    _nothing_written(tmp_path / "store")


def test_a_missing_column_is_named(exported: Path, tmp_path: Path) -> None:
    bad = _copy(exported, tmp_path)
    requests = pq.read_table(bad / "requests.parquet")
    _rewrite(bad / "requests.parquet", requests.drop_columns(["ttft_ns"]))
    with pytest.raises(ConfigError, match=r"requests\.parquet: column ttft_ns missing"):
        import_tables(tmp_path / "store", bad)
    _nothing_written(tmp_path / "store")


def test_a_row_that_fails_validation_names_file_row_column_and_value(exported: Path, tmp_path: Path) -> None:
    bad = _copy(exported, tmp_path)
    runs = pq.read_table(bad / "runs.parquet")
    i = runs.schema.get_field_index("status")
    values = runs.column(i).to_pylist()
    values[3] = "half-done"
    _rewrite(
        bad / "runs.parquet", runs.set_column(i, runs.schema.field(i), pa.array(values, runs.schema.field(i).type))
    )
    run_id = runs.column("run_id")[3].as_py()
    with pytest.raises(
        ConfigError, match=rf"runs\.parquet: row 3 \(run_id {run_id}\) column status: 'half-done': Input should be "
    ):
        import_tables(tmp_path / "store", bad)
    _nothing_written(tmp_path / "store")


def test_a_request_of_no_exported_run_is_refused(exported: Path, tmp_path: Path) -> None:
    bad = _copy(exported, tmp_path)
    requests = pq.read_table(bad / "requests.parquet")
    i = requests.schema.get_field_index("run_id")
    ids = requests.column(i).to_pylist()
    ids[0] = "nowhere-run"
    _rewrite(bad / "requests.parquet", requests.set_column(i, requests.schema.field(i), pa.array(ids, pa.string())))
    with pytest.raises(ConfigError, match=r"requests\.parquet: row 0 column run_id: 'nowhere-run' is not a run"):
        import_tables(tmp_path / "store", bad)
    _nothing_written(tmp_path / "store")


def test_a_file_that_is_not_a_folder_is_refused(exported: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a folder"):
        import_tables(tmp_path / "store", exported / "runs.parquet")


def test_engine_metrics_come_back_too(tmp_path: Path) -> None:
    """The fleet store has no engine-metric rows; a run with some, exported and imported, keeps each one."""
    from tcobench.schemas import EngineMetricRecord, EngineQuantity
    from tcobench.tasks.store.store import write_results
    from tests.unit.factories import T0_NS, make_request, make_run

    run = make_run()
    samples = [
        EngineMetricRecord(
            run_id=run.run_id,
            date=run.date,
            host=run.host,
            ts_ns=T0_NS + k,
            source="vllm",
            metric="vllm:num_requests_running",
            labels='{"model": "zero"}' if k else None,
            quantity=EngineQuantity.requests_running,
            value=float(k),
        )
        for k in range(3)
    ]
    write_results(tmp_path / "first", run, [make_request()], [], samples)
    export_runs(tmp_path / "first", load_prices(None), ExportFormat.parquet, tmp_path / "out", None)
    done = import_tables(tmp_path / "second", tmp_path / "out")
    assert done.rows == {"runs": 1, "requests": 1, "telemetry": 0, "engine_metrics": 3}
    for view in ("engine_metrics", "runs", "requests"):
        assert _rows(tmp_path / "second", view) == _rows(tmp_path / "first", view)
