"""The aiperf importer on a real aiperf 0.13.0 export (files/aiperf, recorded as files/README.md says)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas.imports import ImportFormat
from tcobench.tasks.imports import importer_for

FILES = Path(__file__).parent / "files" / "aiperf"
SUMMARY = FILES / "profile_export_aiperf.json"


def _records() -> list[dict[str, object]]:
    return [json.loads(line) for line in (FILES / "profile_export.jsonl").read_text("utf-8").splitlines()]


def test_the_profiling_records_become_requests_and_the_warmup_ones_do_not() -> None:
    parsed = importer_for(ImportFormat.aiperf).parse(SUMMARY, SUMMARY.read_bytes())
    assert (parsed.tool, parsed.version) == ("aiperf", "0.13.0")
    [run] = parsed.runs
    profiling = [r for r in _records() if r["metadata"]["benchmark_phase"] == "profiling"]  # type: ignore[index]
    assert len(run.per_request) == len(profiling) == run.requests == 12
    assert (run.concurrency, run.load_mode, run.warmup_requests, run.model) == (2, "closed", 2, "zero")
    first, parsed_first = profiling[0], run.per_request[0]
    assert parsed_first.start_ns == first["metadata"]["request_start_ns"]  # type: ignore[index]
    assert parsed_first.ttft_ns == round(first["metrics"]["time_to_first_token"]["value"] * 1e6)  # type: ignore[index]
    assert parsed_first.e2e_ns == round(first["metrics"]["request_latency"]["value"] * 1e6)  # type: ignore[index]
    assert len(parsed_first.itl_ns) == len(first["metrics"]["inter_chunk_latency"]["value"])  # type: ignore[index]
    assert parsed_first.output_tokens == first["metrics"]["usage_completion_tokens"]["value"]  # type: ignore[index]
    assert run.failed == 0 and not parsed.notes


def test_without_the_records_file_the_run_has_the_summary_only(tmp_path: Path) -> None:
    alone = tmp_path / SUMMARY.name
    shutil.copy(SUMMARY, alone)
    parsed = importer_for(ImportFormat.aiperf).parse(alone, alone.read_bytes())
    [run] = parsed.runs
    assert run.per_request == [] and run.requests == 12
    assert run.aggregates["request_count"] == 12.0
    assert parsed.notes == ["no profile_export.jsonl beside the file: the run carries the summary only"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.update(schema_version="9.9"), "field schema_version: '9.9' is not known (valid: 1.4)"),
        (lambda d: d.pop("start_time"), "field start_time: missing: the file has no timestamps"),
        (lambda d: d.pop("aiperf_version"), "field aiperf_version: missing: not an aiperf summary"),
    ],
)
def test_a_bad_summary_is_one_line_naming_the_file_and_the_field(tmp_path: Path, change: object, expected: str) -> None:
    found = json.loads(SUMMARY.read_text("utf-8"))
    change(found)  # type: ignore[operator]
    bad = tmp_path / "summary.json"
    bad.write_text(json.dumps(found), "utf-8")
    with pytest.raises(ConfigError) as caught:
        importer_for(ImportFormat.aiperf).parse(bad, bad.read_bytes())
    assert str(caught.value).startswith(f"{bad}: {expected}")
    assert "\n" not in str(caught.value)


def test_a_truncated_records_file_names_its_line(tmp_path: Path) -> None:
    shutil.copy(SUMMARY, tmp_path / SUMMARY.name)
    text = (FILES / "profile_export.jsonl").read_text("utf-8")
    (tmp_path / "profile_export.jsonl").write_text(text[: len(text) // 2], "utf-8")
    with pytest.raises(ConfigError, match=r"profile_export.jsonl: field line \d+: not a complete JSON record"):
        importer_for(ImportFormat.aiperf).parse(tmp_path / SUMMARY.name, SUMMARY.read_bytes())


def test_a_truncated_summary_names_the_byte(tmp_path: Path) -> None:
    data = SUMMARY.read_bytes()[:1000]
    with pytest.raises(ConfigError, match=r"field \(whole file\): not complete JSON at byte \d+ of 1000 \(truncated"):
        importer_for(ImportFormat.aiperf).parse(tmp_path / "x.json", data)
