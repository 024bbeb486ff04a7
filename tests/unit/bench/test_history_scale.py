"""bench/history_scale.py writes the folder layout `store migrate` reads; imported and compacted, the views work."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from history_scale import QUERIES, RUNS, WARMUP, _folder_schema, _host_year, to_lake

from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect


@pytest.mark.parametrize("layout", ["per-run", "per-night"])
def test_generated_store_has_the_real_layout(tmp_path: Path, layout: str) -> None:
    rows = _host_year((tmp_path, layout, 3, 2, 10, 4))
    assert rows == 2 * len(RUNS) * 10
    files = sorted(tmp_path.glob("requests/*/*/*.parquet"))
    assert {f.parent.parent.name for f in files} == {"date=2025-12-01", "date=2025-12-02"}
    assert {f.parent.name for f in files} == {"host=gpu-03"}
    assert len(files) == (2 * len(RUNS) if layout == "per-run" else 2)
    if layout == "per-run":
        assert all(f.name.startswith("run-") for f in files)
    for table in ("runs", "requests"):
        some = next(tmp_path.glob(f"{table}/*/*/*.parquet"))
        assert pq.read_schema(some).remove_metadata() == _folder_schema(table).remove_metadata()


def test_views_read_the_generated_store_once_imported(tmp_path: Path) -> None:
    _host_year((tmp_path / "folder", "per-run", 0, 1, 10, 4))
    to_lake(tmp_path / "folder", str(tmp_path / "lake"), batch=2)
    con = connect(tmp_path / "lake", load_prices(None))
    try:
        summary = con.sql("SELECT n, ok, output_tokens, itl_p50_ms FROM run_summary").fetchall()
        tco = con.sql("SELECT count(*), count(usd_per_m_output_tokens) FROM tco").fetchall()
        for sql in QUERIES.values():
            assert con.sql(sql).fetchall()
    finally:
        con.close()
    assert len(summary) == len(RUNS)
    assert {(n, ok, tokens) for n, ok, tokens, _ in summary} == {(10 - WARMUP, 10 - WARMUP, 4 * (10 - WARMUP))}
    assert all(itl > 0 for *_, itl in summary)
    assert tco == [(len(RUNS), len(RUNS))]
