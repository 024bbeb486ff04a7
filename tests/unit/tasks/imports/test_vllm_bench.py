"""The vllm-bench importer on a real `vllm bench serve --save-result --save-detailed` file of vLLM 0.32.0
(files/vllm-bench, recorded as files/README.md says)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas.imports import ImportFormat
from tcobench.tasks.imports import importer_for
from tcobench.tasks.imports.base import utc_ns

FILE = Path(__file__).parent / "files" / "vllm-bench" / "vllm-bench.json"
IMPORTER = importer_for(ImportFormat.vllm_bench)


def _parse(found: dict[str, object], tmp_path: Path) -> object:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(found), "utf-8")
    return IMPORTER.parse(path, path.read_bytes())


def test_each_request_of_the_detailed_lists_is_a_request_placed_on_the_epoch() -> None:
    found = json.loads(FILE.read_text("utf-8"))
    parsed = IMPORTER.parse(FILE, FILE.read_bytes())
    assert (parsed.tool, parsed.version, parsed.notes) == ("vllm-bench", None, [])
    [run] = parsed.runs
    assert (run.requests, run.failed, run.concurrency, run.load_mode, run.rate_rps) == (12, 0, 2, "closed", None)
    assert (run.model, run.api, run.workload, run.tokenizer) == (
        "zero",
        "openai-chat",
        "vllm-bench:unknown",
        "/tmp/imp-tok",
    )
    written = utc_ns(FILE, "date", found["date"], ("%Y%m%d-%H%M%S",))
    assert run.finished_ns == written and run.started_ns == written - round(found["duration"] * 1e9)
    zero = min(found["start_times"])
    for request, start, ttft, itl, latency, osl, isl in zip(
        run.per_request,
        found["start_times"],
        found["ttfts"],
        found["itls"],
        found["latencies"],
        found["output_lens"],
        found["input_lens"],
        strict=True,
    ):
        assert request.start_ns == run.started_ns + round((start - zero) * 1e9)
        assert request.ttft_ns == round(ttft * 1e9) and request.e2e_ns == round(latency * 1e9)
        assert request.itl_ns == [round(g * 1e9) for g in itl]
        assert (request.output_tokens, request.prompt_tokens, request.error) == (osl, isl, None)
    assert run.aggregates["mean_ttft_ms"] == pytest.approx(found["mean_ttft_ms"])


def test_a_failed_request_keeps_its_error_and_no_timings(tmp_path: Path) -> None:
    found = json.loads(FILE.read_text("utf-8"))
    found["errors"][3] = "HTTP 503: overloaded"
    parsed = _parse(found, tmp_path)
    run = parsed.runs[0]  # type: ignore[attr-defined]
    assert run.failed == 1 and run.per_request[3].error == "HTTP 503: overloaded"
    assert run.per_request[3].ttft_ns is None and run.per_request[3].output_tokens is None


def test_a_summary_only_file_carries_the_aggregates_and_says_so(tmp_path: Path) -> None:
    found = json.loads(FILE.read_text("utf-8"))
    for field in ("start_times", "ttfts", "itls", "input_lens", "output_lens", "errors", "latencies"):
        found.pop(field)
    parsed = _parse(found, tmp_path)
    run = parsed.runs[0]  # type: ignore[attr-defined]
    assert run.per_request == [] and run.requests == 12
    assert run.aggregates["output_throughput"] == pytest.approx(found["output_throughput"])
    assert parsed.notes == ["no detailed lists (--save-detailed): the run carries the summary only"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.pop("date"), "field date: missing: the file has no timestamp (valid: %Y%m%d-%H%M%S)"),
        (lambda d: d.update(date="yesterday"), "field date: 'yesterday' is not a timestamp (valid: %Y%m%d-%H%M%S)"),
        (lambda d: d.pop("start_times"), "field start_times: missing beside the other detailed lists"),
        (lambda d: d["ttfts"].pop(), "field start_times: the detailed lists differ in length ([11, 12])"),
        (lambda d: d.update(duration="long"), "field duration: 'long' is not a number (valid: a number or null)"),
        (lambda d: d.pop("completed"), "field duration, completed: missing: not a vllm bench serve result"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_the_field_and_the_valid_choices(
    tmp_path: Path, change: object, expected: str
) -> None:
    found = json.loads(FILE.read_text("utf-8"))
    change(found)  # type: ignore[operator]
    with pytest.raises(ConfigError) as caught:
        _parse(found, tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'result.json'}: {expected}"), str(caught.value)


def test_a_truncated_file_is_refused(tmp_path: Path) -> None:
    data = FILE.read_bytes()
    with pytest.raises(ConfigError, match=r"not complete JSON at byte \d+ of 3000 \(truncated\?\)"):
        IMPORTER.parse(tmp_path / "cut.json", data[:3000])
