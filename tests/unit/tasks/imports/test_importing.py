"""import_file: a real aiperf export into a store in a temporary folder (rows, NULLs, pricing, the same file twice)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tcobench.errors import ConfigError, PricingError
from tcobench.schemas import GpuVendor
from tcobench.schemas.imports import ImportFormat, ImportLabels
from tcobench.tasks.imports import import_file
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect, views_named

FILES = Path(__file__).parent / "files" / "aiperf"
LABELS = ImportLabels(host="far-h100", hardware="nvidia-h100-sxm", gpus=1, vendor=GpuVendor.nvidia, engine="vllm")


@pytest.fixture
def export(tmp_path: Path) -> Path:
    for name in ("profile_export_aiperf.json", "profile_export.jsonl"):
        shutil.copy(FILES / name, tmp_path / name)
    return tmp_path / "profile_export_aiperf.json"


def _one(store: Path, sql: str) -> tuple[object, ...]:
    con = connect(store, load_prices(None), needs=views_named(sql))  # the views the query reads
    try:
        row = con.execute(sql).fetchone()
    finally:
        con.close()
    assert row is not None
    return tuple(row)


def test_the_run_says_where_it_came_from_and_leaves_unknown_figures_null(tmp_path: Path, export: Path) -> None:
    store = tmp_path / "store"
    done = import_file(store, export, ImportFormat.aiperf, LABELS)
    [run] = done.runs
    assert done.requests[run.run_id] == 12
    sha = hashlib.sha256(export.read_bytes()).hexdigest()
    row = _one(
        store,
        "SELECT source, source_sha256, source_file, host, hardware_key, gpu_vendor, gpus_given, num_ctx, "
        "host_mem_bytes, telemetry_source, status FROM runs",
    )
    assert row == (
        "imported:aiperf 0.13.0",
        sha,
        str(export),
        "far-h100",
        "nvidia-h100-sxm",
        "nvidia",
        1,
        None,
        None,
        None,
        "ok",
    )
    summary = json.loads(str(_one(store, "SELECT source_summary FROM runs")[0]))
    assert summary["figures"]["request_count"] == 12.0 and summary["notes"] == []
    n, ttft_p50 = _one(store, "SELECT n, ttft_p50_ms FROM run_summary")
    assert n == 12 and isinstance(ttft_p50, float) and ttft_p50 > 0
    priced = _one(store, "SELECT usd_per_m_output_tokens FROM tco")
    assert isinstance(priced[0], float) and priced[0] > 0


def test_the_same_file_twice_is_refused_naming_the_earlier_import_and_replace_writes_over_it(
    tmp_path: Path, export: Path
) -> None:
    store = tmp_path / "store"
    first = import_file(store, export, ImportFormat.aiperf, LABELS)
    with pytest.raises(ConfigError) as caught:
        import_file(store, export, ImportFormat.aiperf, LABELS)
    message = str(caught.value)
    assert f"already imported as imported:aiperf 0.13.0 from {export}" in message
    assert first.runs[0].run_id in message and "--replace" in message
    again = import_file(store, export, ImportFormat.aiperf, LABELS.model_copy(update={"host": "other"}), replace=True)
    assert again.replaced == 1 and again.runs[0].run_id == first.runs[0].run_id
    assert _one(store, "SELECT count(*), min(host) FROM runs") == (1, "other")
    assert _one(store, "SELECT count(*) FROM requests") == (12,)


@pytest.mark.parametrize(
    ("missing", "named"),
    [({"host": None}, "give --host"), ({"gpus": None, "vendor": None}, "give --gpus --vendor")],
)
def test_labels_the_file_lacks_must_be_given_and_nothing_is_written(
    tmp_path: Path, export: Path, missing: dict[str, object], named: str
) -> None:
    store = tmp_path / "store"
    with pytest.raises(ConfigError, match=named):
        import_file(store, export, ImportFormat.aiperf, LABELS.model_copy(update=missing))
    assert not store.exists()


def test_a_hardware_key_without_a_price_is_refused_before_writing(tmp_path: Path, export: Path) -> None:
    store = tmp_path / "store"
    with pytest.raises(PricingError, match=r"--hardware: no row 'nvidia-h999' in \[hardware\]"):
        import_file(store, export, ImportFormat.aiperf, LABELS.model_copy(update={"hardware": "nvidia-h999"}))
    assert not store.exists()


def test_a_file_of_the_other_format_is_one_line_naming_the_fields(tmp_path: Path, export: Path) -> None:
    with pytest.raises(ConfigError, match=r"field duration, completed: missing: not a vllm bench serve result"):
        import_file(tmp_path / "store", export, ImportFormat.vllm_bench, LABELS)
