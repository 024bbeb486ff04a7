"""The guidellm importer on a real `guidellm run --output kind=json` report of guidellm 0.8.1 (files/guidellm,
recorded as files/README.md says: two benchmarks, concurrent@1 and concurrent@2, 8 requests each)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import GpuVendor
from tcobench.schemas.imports import ImportFormat, ImportLabels
from tcobench.tasks.imports import import_file, importer_for
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect

FILE = Path(__file__).parent / "files" / "guidellm" / "guidellm.json"
IMPORTER = importer_for(ImportFormat.guidellm)
LABELS = ImportLabels(host="far-h100", hardware="nvidia-h100-sxm", gpus=1, vendor=GpuVendor.nvidia, engine="vllm")


def _report() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(FILE.read_text("utf-8"))
    return found


def _parse(found: dict[str, Any], tmp_path: Path) -> Any:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(found), "utf-8")
    return IMPORTER.parse(path, path.read_bytes())


def test_each_benchmark_is_a_run_and_each_stored_request_a_request() -> None:
    report = _report()
    parsed = IMPORTER.parse(FILE, FILE.read_bytes())
    assert (parsed.tool, parsed.version) == ("guidellm", "0.8.1")
    assert [(r.concurrency, r.load_mode, r.requests, r.failed) for r in parsed.runs] == [
        (1, "closed", 8, 0),
        (2, "closed", 8, 0),
    ]
    for run, benchmark in zip(parsed.runs, report["benchmarks"], strict=True):
        assert (run.model, run.api, run.url, run.workload) == (
            "zero",
            "/v1/chat/completions",
            "http://127.0.0.1:18461",
            "guidellm:synthetic_text",
        )
        assert (run.input_tokens_spec, run.output_tokens_spec, run.max_tokens, run.seed) == ("64", "16", 16, 42)
        assert (run.tokenizer, run.ignore_eos) == ("/tmp/imp-tok", True)
        assert run.started_ns == round(benchmark["start_time"] * 1e9)
        assert run.finished_ns == round(benchmark["end_time"] * 1e9)
        stored = sorted(benchmark["requests"]["successful"], key=lambda r: r["request_start_time"])
        for request, found in zip(run.per_request, stored, strict=True):
            assert request.start_ns == round(found["request_start_time"] * 1e9)
            assert request.ttft_ns == round(found["time_to_first_token_ms"] * 1e6)
            assert request.e2e_ns == round(found["request_latency"] * 1e9)
            assert (request.prompt_tokens, request.output_tokens) == (found["prompt_tokens"], found["output_tokens"])
            assert request.itl_ns == [] and request.error is None


def test_the_requests_agree_with_the_reports_own_summary_within_rounding() -> None:
    parsed = IMPORTER.parse(FILE, FILE.read_bytes())
    for run, benchmark in zip(parsed.runs, _report()["benchmarks"], strict=True):
        summary = benchmark["metrics"]
        ttft_ms = [r.ttft_ns / 1e6 for r in run.per_request if r.ttft_ns is not None]
        e2e_s = [r.e2e_ns / 1e9 for r in run.per_request if r.e2e_ns is not None]
        assert statistics.fmean(ttft_ms) == pytest.approx(summary["time_to_first_token_ms"]["successful"]["mean"])
        assert statistics.fmean(e2e_s) == pytest.approx(summary["request_latency"]["successful"]["mean"])
        assert (
            sum(r.output_tokens or 0 for r in run.per_request)
            == summary["output_token_count"]["successful"]["total_sum"]
        )
        assert (
            sum(r.prompt_tokens or 0 for r in run.per_request)
            == summary["prompt_token_count"]["successful"]["total_sum"]
        )
        assert run.aggregates["time_to_first_token_ms.mean"] == pytest.approx(statistics.fmean(ttft_ms))
        assert run.aggregates["request_totals.total"] == len(run.per_request)


def test_an_errored_request_keeps_its_error_and_no_ttft_or_output(tmp_path: Path) -> None:
    report = _report()
    requests = report["benchmarks"][1]["requests"]
    moved = requests["successful"].pop(3)
    moved["info"]["error"] = "HTTP 503: overloaded"
    requests["errored"].append(moved)
    run = _parse(report, tmp_path).runs[1]
    [failed] = [r for r in run.per_request if r.error is not None]
    assert (run.requests, run.failed, failed.error) == (8, 1, "HTTP 503: overloaded")
    assert failed.ttft_ns is None and failed.output_tokens is None
    assert failed.start_ns == round(moved["request_start_time"] * 1e9)


def test_a_rate_strategy_is_an_open_loop_run_with_its_rate(tmp_path: Path) -> None:
    report = _report()
    report["benchmarks"][0]["config"]["strategy"] = {"type_": "poisson", "rate": 5.0, "max_concurrency": None}
    report["benchmarks"][1]["config"]["strategy"] = {"type_": "constant", "rate": 2.5, "max_concurrency": 4}
    runs = _parse(report, tmp_path).runs
    assert [(r.load_mode, r.rate_rps, r.concurrency) for r in runs] == [("poisson", 5.0, 1), ("constant", 2.5, 4)]


def test_a_report_that_stores_a_sample_of_its_requests_says_so(tmp_path: Path) -> None:
    report = _report()
    del report["benchmarks"][0]["requests"]["successful"][5:]
    parsed = _parse(report, tmp_path)
    assert parsed.runs[0].requests == 5
    assert parsed.notes[0] == "benchmarks[0] (concurrent): the report stores 5 of its 8 requests (a sample)"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["metadata"].update(version=3), "field metadata.version: '3' is not known (valid: 2)"),
        (lambda d: d["metadata"].pop("guidellm_version"), "field metadata.guidellm_version: missing: not a guidellm"),
        (lambda d: d.update(benchmarks=[]), "field benchmarks: missing or empty: the report has no benchmark"),
        (
            lambda d: d["benchmarks"][1].pop("start_time"),
            "field benchmarks[1].start_time: missing: the benchmark has no timestamps (valid: s since the epoch)",
        ),
        (
            lambda d: d["benchmarks"][0]["config"]["strategy"].update(type_="burst"),
            "field benchmarks[0].config.strategy.type_: 'burst' is not known (valid: synchronous, concurrent, "
            "throughput, poisson, constant, async)",
        ),
        (
            lambda d: d["benchmarks"][0]["requests"]["successful"][2].pop("request_start_time"),
            "field benchmarks[0].requests.successful[2].request_start_time: missing: the request has no timestamp",
        ),
        (
            lambda d: d["benchmarks"][0]["requests"]["successful"][0].update(request_latency="slow"),
            "field benchmarks[0].requests.successful[0].request_latency: 'slow' is not a number",
        ),
        (
            lambda d: d["benchmarks"][0].update(type_="embeddings_benchmark"),
            "field benchmarks[0].type_: 'embeddings_benchmark' is not read (valid: generative_benchmark)",
        ),
    ],
)
def test_a_bad_report_is_one_line_naming_the_file_the_field_and_the_valid_choices(
    tmp_path: Path, change: Any, expected: str
) -> None:
    report = _report()
    change(report)
    with pytest.raises(ConfigError) as caught:
        _parse(report, tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'report.json'}: {expected}"), str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_truncated_report_is_refused() -> None:
    data = FILE.read_bytes()[:5000]
    with pytest.raises(ConfigError, match=r"not complete JSON at byte \d+ of 5000 \(truncated\?\)"):
        IMPORTER.parse(FILE, data)


def test_the_report_goes_into_a_store_as_two_runs_and_a_bad_one_writes_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    done = import_file(store, FILE, ImportFormat.guidellm, LABELS)
    assert [done.requests[r.run_id] for r in done.runs] == [8, 8]
    con = connect(store, load_prices(None), needs={"runs", "requests"})
    try:
        rows = con.execute("SELECT source, concurrency, measured_requests FROM runs ORDER BY concurrency").fetchall()
        requests = con.execute("SELECT count(*), count(itl_ns) FILTER (WHERE len(itl_ns) > 0) FROM requests").fetchone()
    finally:
        con.close()
    assert rows == [("imported:guidellm 0.8.1", 1, 8), ("imported:guidellm 0.8.1", 2, 8)]
    assert requests == (16, 0)
    other = tmp_path / "other-store"
    cut = tmp_path / "cut.json"
    cut.write_bytes(FILE.read_bytes()[:5000])
    with pytest.raises(ConfigError, match="truncated"):
        import_file(other, cut, ImportFormat.guidellm, LABELS)
    assert not other.exists()
