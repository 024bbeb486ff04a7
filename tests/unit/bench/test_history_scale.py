"""bench/history_scale.py writes the folder layout `store migrate` reads; imported and compacted, the views work."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from history_scale import QUERIES, RUNS, WARMUP, _folder_schema, _host_year, to_lake

from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect, views_named


@pytest.mark.parametrize("layout", ["per-run", "per-night"])
def test_generated_store_has_the_real_layout(tmp_path: Path, layout: str) -> None:
    rows = _host_year((tmp_path, layout, 3, 2, 10, 4, 0))
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
    _host_year((tmp_path / "folder", "per-run", 0, 1, 10, 4, 0))
    to_lake(tmp_path / "folder", str(tmp_path / "lake"), batch=2)
    con = connect(
        tmp_path / "lake", load_prices(None), needs={"run_summary", "tco", *views_named(" ".join(QUERIES.values()))}
    )
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


def test_with_configs_the_hosts_of_a_hardware_key_take_turns_and_count_the_gpus_they_were_given(
    tmp_path: Path,
) -> None:
    """--configs 4: host 0 and host 5 share a hardware key (5 keys) and serve on 1 and 2 GPUs of their 8."""
    for host in (0, 5):
        _host_year((tmp_path / "folder", "per-run", host, 1, 10, 4, 4))
    to_lake(tmp_path / "folder", str(tmp_path / "lake"), batch=20)
    con = connect(tmp_path / "lake", load_prices(None), needs={"run_summary"})
    try:
        rows = con.sql(
            "SELECT host, count(DISTINCT config_id), min(gpus_counted), max(gpus_counted), "
            "max(abs(output_tok_s_per_gpu * gpus_counted - output_tok_s)) FROM run_summary GROUP BY 1 ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    assert [r[:4] for r in rows] == [("gpu-00", 1, 1, 1), ("gpu-05", 1, 2, 2)]
    assert all(r[4] < 1e-6 for r in rows)
