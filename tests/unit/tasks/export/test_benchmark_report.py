"""`tcobench export --format benchmark-report` (issue 46): one llm-d benchmark_report v0.2 document per run, valid
against the JSON Schema of upstream's own pydantic model (vendored: tests/vendor/llmd_benchmark_report), with the
store's figures in the schema's places and nothing the store lacks."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no stubs installed
import pytest

from tcobench.schemas.export import ExportFormat
from tcobench.tasks.export.export_runs import export_runs
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect, views_named
from tests.store_helpers import table_rows
from tests.vendor.llmd_benchmark_report.schema_v0_2 import BenchmarkReportV02


def _export(store: Path, out: Path, select: str | None = None) -> dict[str, dict[str, Any]]:
    done = export_runs(store, load_prices(None), ExportFormat.benchmark_report, out, select)
    docs = {p.stem: json.loads(p.read_text("utf-8")) for p in done.files}
    assert len(docs) == done.runs == len(list(out.iterdir()))
    return docs


_SCHEMA = BenchmarkReportV02.model_json_schema()
jsonschema.Draft202012Validator.check_schema(_SCHEMA)
_VALIDATOR = jsonschema.Draft202012Validator(_SCHEMA)


def _valid(doc: dict[str, Any]) -> None:
    """Valid against upstream's JSON Schema, and accepted by upstream's model itself (its unit validators too)."""
    _VALIDATOR.validate(doc)
    BenchmarkReportV02.model_validate(doc)


def _view(store: Path, sql: str) -> dict[str, dict[str, Any]]:
    con = connect(store, load_prices(None), needs=views_named(sql))  # the views the query reads
    try:
        return {r["run_id"]: r for r in con.sql(sql).to_arrow_table().to_pylist()}
    finally:
        con.close()


@pytest.fixture(scope="module")
def fleet_docs(fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return _export(fleet, tmp_path_factory.mktemp("br") / "out")


def test_one_valid_document_per_run(fleet: Path, fleet_docs: dict[str, dict[str, Any]]) -> None:
    runs = table_rows(fleet, "runs")
    assert sorted(fleet_docs) == sorted(r["run_id"] for r in runs)
    for run_id, doc in fleet_docs.items():
        _valid(doc)
        assert doc["version"] == "0.2" and doc["run"]["uid"] == run_id


def test_figures_are_run_summarys(fleet: Path, fleet_docs: dict[str, dict[str, Any]]) -> None:
    summary = _view(fleet, "SELECT * FROM run_summary")
    for run_id, doc in fleet_docs.items():
        s = summary[run_id]
        agg = doc["results"]["request_performance"]["aggregate"]
        assert agg["requests"]["total"] == s["n"] and agg["requests"]["failures"] == s["errors"]
        ttft = agg["latency"]["time_to_first_token"]
        assert (ttft["units"], ttft["p50"], ttft["p90"], ttft["p99"]) == (
            "ms",
            s["ttft_p50_ms"],
            s["ttft_p90_ms"],
            s["ttft_p99_ms"],
        )
        assert agg["latency"]["inter_token_latency"]["p50"] == s["itl_p50_ms"]
        assert agg["latency"]["time_per_output_token"]["units"] == "ms/token"
        assert agg["latency"]["request_latency"]["p99"] == s["e2e_p99_ms"]
        assert agg["throughput"]["output_token_rate"] == {"units": "tokens/s", "mean": s["output_tok_s"]}
        assert agg["throughput"]["total_token_rate"]["mean"] == s["total_tok_s"]
        assert agg["requests"]["output_length"]["mean"] == pytest.approx(s["osl_mean"], rel=1e-12)


def test_means_and_extremes_are_the_ok_requests(fleet: Path, fleet_docs: dict[str, dict[str, Any]]) -> None:
    ok = [r for r in table_rows(fleet, "requests") if r["phase"] == "measure" and r["error"] is None]
    for run_id, doc in list(fleet_docs.items())[:6]:
        mine = [r for r in ok if r["run_id"] == run_id]
        ttft_ms = [r["ttft_ns"] / 1e6 for r in mine]
        gaps_ms = [g / 1e6 for r in mine for g in r["itl_ns"]]
        latency = doc["results"]["request_performance"]["aggregate"]["latency"]
        assert latency["time_to_first_token"]["mean"] == pytest.approx(statistics.fmean(ttft_ms), rel=1e-9)
        assert latency["time_to_first_token"]["stddev"] == pytest.approx(statistics.stdev(ttft_ms), rel=1e-9)
        assert (latency["time_to_first_token"]["min"], latency["time_to_first_token"]["max"]) == (
            min(ttft_ms),
            max(ttft_ms),
        )
        assert latency["inter_token_latency"]["mean"] == pytest.approx(statistics.fmean(gaps_ms), rel=1e-9)


def test_provenance_of_the_run_row(fleet: Path, fleet_docs: dict[str, dict[str, Any]]) -> None:
    runs = {r["run_id"]: r for r in table_rows(fleet, "runs")}
    for run_id, doc in fleet_docs.items():
        run = runs[run_id]
        engine, host = doc["scenario"]["stack"]
        assert engine["standardized"]["kind"] == "inference_engine"
        assert engine["standardized"]["tool"] == "ollama" and engine["standardized"]["tool_version"] == "0.32.0"
        assert engine["standardized"]["accelerator"]["model"] == run["gpu_name"]
        assert engine["standardized"]["accelerator"]["count"] == 1
        assert engine["standardized"]["accelerator"]["parallelism"] == {}  # the fleet stores no parallel sizes
        assert engine["native"]["config"] == {"OLLAMA_NUM_PARALLEL": 16, "num_ctx": 4096}
        assert host["standardized"]["hardware_key"] == run["hardware_key"]
        assert host["standardized"]["driver_version"] == run["driver_version"]
        load = doc["scenario"]["load"]
        assert load["standardized"]["concurrency"] == run["concurrency"]
        assert load["standardized"]["output_seq_len"] == {"distribution": "fixed", "value": 64.0}
        stored = load["native"]["config"]["run"]
        assert stored["started_ns"] == run["started_ns"] and stored["config_hash"] == run["config_hash"]
        assert set(stored) == set(run)  # every column of the run row, raw units
        assert doc["run"]["eid"] == run["batch_id"]


def test_a_cpu_run_and_a_run_without_requests(odd_store: Path, tmp_path: Path) -> None:
    docs = _export(odd_store, tmp_path / "out")
    for doc in docs.values():
        _valid(doc)
    cpu = docs["cpu-ok"]
    engine = cpu["scenario"]["stack"][0]["standardized"]
    assert engine["kind"] == "generic" and "accelerator" not in engine  # no GPU: none named
    assert "gpu_name" not in cpu["scenario"]["stack"][1]["standardized"]
    assert "output_seq_len" not in cpu["scenario"]["load"]["standardized"]  # ignore_eos false: not enforced
    lengths = cpu["results"]["request_performance"]["aggregate"]["requests"]["input_length"]
    assert (lengths["mean"], lengths["min"], lengths["max"]) == (11.0, 10.0, 12.0)
    failed = docs["failed-early"]
    # no request sent: the counts are 0 (stored), no latency, rate or length is invented, and no workload shape
    assert failed["results"] == {
        "request_performance": {"aggregate": {"requests": {"total": 0, "failures": 0, "incomplete": 0}}}
    }
    assert "load" not in failed["scenario"]
    assert "engine did not start" in failed["run"]["description"]
    assert "status:failed" in failed["run"]["keywords"]


def test_selection_picks_runs(fleet: Path, tmp_path: Path) -> None:
    docs = _export(fleet, tmp_path / "out", "vendor=amd,concurrency=4")
    assert docs and all("-c4" in run_id and "amd" in run_id for run_id in docs)


def test_the_validation_catches_a_document_off_the_schema(fleet_docs: dict[str, dict[str, Any]]) -> None:
    doc = next(iter(fleet_docs.values()))
    without_results = {k: v for k, v in doc.items() if k != "results"}
    unknown_field = {**doc, "run": {**doc["run"], "host": "gpu-nv-1"}}
    wrong_units = json.loads(json.dumps(doc))
    wrong_units["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]["units"] = "tokens/s"
    for bad in (without_results, unknown_field):
        with pytest.raises(jsonschema.ValidationError):
            _VALIDATOR.validate(bad)
    with pytest.raises(ValueError, match="Invalid units"):  # upstream's own unit rules, beyond the JSON Schema
        BenchmarkReportV02.model_validate(wrong_units)
