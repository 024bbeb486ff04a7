"""announce_night: the night's report, its flagged changes, the Prefect link artifact, and the webhook post, against a
real HTTP server on 127.0.0.1 started here. The store holds write_fleet's nights: one planted regression
(gpu-amd-1 at concurrency 4 decodes 15% slower on the last night, 2026-11-26)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tcobench.schemas import RunStatus
from tcobench.tasks.fleet.nightly import CellResult
from tcobench.tasks.prices import load_prices
from tcobench.tasks.report.alerts import REPORT_ARTIFACT_KEY, announce_night, post_webhook
from tests.hook_server import SECRET, Hook
from tests.unit.factories import write_fleet
from tests.unit.tasks.report.test_artifacts import _fake_prefect


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[CellResult]]:
    store = tmp_path_factory.mktemp("fleet")
    runs = write_fleet(store)
    last = [r for r in runs if r.date == "2026-11-26"]
    cells = [
        CellResult(f"{host}/ollama", host, RunStatus.ok, [r.run_id for r in last if r.host == host])
        for host in sorted({r.host for r in last})
    ]
    cells.append(CellResult("gpu-nv-1/vllm", "gpu-nv-1", RunStatus.failed, [], 2, "EngineError: no GPU"))
    return store, cells


@pytest.fixture
def links(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Inside a (stand-in) Prefect flow run: the link artifacts created, as test_artifacts checks the markdown one."""
    return _fake_prefect(monkeypatch, in_run=True)


def _grep(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_nightly_posts_summary_flags_and_report_link(
    fleet: tuple[Path, list[CellResult]], links: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, cells = fleet
    with Hook() as hook:
        monkeypatch.setenv("TCOBENCH_WEBHOOK_URL", hook.url)
        text = announce_night(store, load_prices(None), "batch-9", cells, "# tcobench nightly batch-9\n")
    ((path, payload),) = hook.posts
    assert path == f"/hooks/{SECRET}"
    assert payload["text"] == text.split("\nWebhook: ")[0]  # the markdown the artifact shows, before the post
    assert payload["batch_id"] == "batch-9" and payload["cells"] == 3
    assert payload["failed"] == [{"cell": "gpu-nv-1/vllm", "host": "gpu-nv-1", "error": "EngineError: no GPU"}]
    (flag,) = payload["flags"]
    assert (flag["host"], flag["concurrency"], flag["metric"], flag["better"]) == (
        "gpu-amd-1",
        4,
        "decode_tok_s",
        False,
    )
    assert flag["change_pct"] < -8 and flag["usd_per_m_output_tokens"] > 0
    assert "## 1 flagged change(s)" in payload["text"] and "| gpu-amd-1 |" in payload["text"]
    report = store / "reports" / "nightly-batch-9.html"
    assert payload["report"] == report.resolve().as_uri() and report.read_text("utf-8").startswith("<!DOCTYPE html>")
    assert f"Report: [nightly-batch-9.html]({report.resolve().as_uri()})" in text
    assert links == [
        {
            "link": report.resolve().as_uri(),
            "link_text": "tcobench report, nightly batch-9",
            "key": REPORT_ARTIFACT_KEY,
            "description": "tcobench report, nightly batch-9",
        }
    ]
    assert text.endswith("Webhook: delivered (HTTP 200).\n")
    assert SECRET not in text
    assert _grep(store, SECRET) == []  # not in any row, report or log
    assert _grep(store, "127.0.0.1:" + hook.url.split(":")[2].split("/")[0]) == []


def test_report_url_and_no_webhook(
    fleet: tuple[Path, list[CellResult]], links: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store, cells = fleet
    monkeypatch.delenv("TCOBENCH_WEBHOOK_URL", raising=False)
    monkeypatch.setenv("TCOBENCH_REPORT_DIR", str(tmp_path / "published"))
    monkeypatch.setenv("TCOBENCH_REPORT_URL", "https://reports.example.com/tcobench/")
    nvidia_only = [c for c in cells if c.host == "gpu-nv-1" and c.status is RunStatus.ok]
    text = announce_night(store, load_prices(None), "batch-10", nvidia_only, "# n\n")
    assert (tmp_path / "published" / "nightly-batch-10.html").is_file()
    link = "https://reports.example.com/tcobench/nightly-batch-10.html"
    assert f"Report: [nightly-batch-10.html]({link})" in text and links[0]["link"] == link
    assert "Webhook" not in text and "No flagged changes in this night's runs" in text  # gpu-amd-1's cell is not in


@pytest.mark.parametrize("status", [500, 404])
def test_a_refused_post_says_how_without_the_url(status: int) -> None:
    with Hook(status) as hook:
        outcome = post_webhook(hook.url, {"text": "x"})
    assert outcome == f"not delivered: HTTP {status}" and len(hook.posts) == 1


def test_an_unreachable_or_bad_url_says_how_without_the_url() -> None:
    with Hook() as hook:
        url = hook.url
    assert post_webhook(url, {"text": "x"}, timeout_s=2) == "not delivered: ConnectError"  # server gone
    assert post_webhook(f"ftp://example.invalid/{SECRET}", {"text": "x"}) == "not delivered: UnsupportedProtocol"


def test_announce_keeps_the_night_when_the_webhook_fails(
    fleet: tuple[Path, list[CellResult]], links: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, cells = fleet
    with Hook(503) as hook:
        monkeypatch.setenv("TCOBENCH_WEBHOOK_URL", hook.url)
        text = announce_night(store, load_prices(None), "batch-11", cells, "# n\n")
    assert text.endswith("Webhook: not delivered: HTTP 503.\n") and SECRET not in text


def test_the_night_writes_the_metrics_textfile_when_asked(
    fleet: tuple[Path, list[CellResult]], links: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store, cells = fleet
    monkeypatch.delenv("TCOBENCH_WEBHOOK_URL", raising=False)
    monkeypatch.setenv("TCOBENCH_REPORT_DIR", str(tmp_path / "published"))
    path = tmp_path / "textfile" / "tcobench.prom"
    monkeypatch.setenv("TCOBENCH_METRICS_TEXTFILE", str(path))
    text = announce_night(store, load_prices(None), "batch-12", cells, "# n\n")
    assert f"Metrics not written: --textfile {path}: cannot write the metrics file" in text  # no such folder
    path.parent.mkdir()
    text = announce_night(store, load_prices(None), "batch-13", cells, "# n\n")
    assert f"Metrics: {path}" in text
    families = {f.name for f in text_string_to_metric_families(path.read_text("utf-8"))}
    assert {"tcobench_cost_per_million_output_tokens_usd", "tcobench_trend_decode_change_ratio"} <= families
