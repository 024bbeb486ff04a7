"""Prometheus metrics (issue 46 item 4): the endpoint is started on 127.0.0.1 over a small store and scraped with
prometheus_client's own parser; every checked sample equals the figure of the view it names (read back here from
the view, not computed again), and the textfile is written atomically."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tcobench.errors import ConfigError, StoreError
from tcobench.schemas import FailureClass, RunStatus
from tcobench.tasks.prices import load_prices
from tcobench.tasks.report.exposition import metric_rows, render_metrics, serve_metrics, write_textfile
from tcobench.tasks.store.query import connect, views_named
from tcobench.tasks.store.store import write_results
from tests.unit.factories import make_run, write_fleet

TARGETS = (20.0, 50.0)
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def write_store(folder: Path) -> Path:
    """Two nights of two hosts at concurrency 1 and 4, and a later nightly cell of gpu-nv-1 that failed (platform)."""
    runs = write_fleet(folder, nights=2, concurrency=(1, 4), requests=12)
    last = max(r.finished_ns or r.started_ns for r in runs)
    failed = make_run(
        run_id="gpu-nv-1-n2-cell",
        batch_id="gpu-nv-1-n2",
        host="gpu-nv-1",
        date=dt.datetime.fromtimestamp(last / 1e9 + 86_400, dt.UTC).date().isoformat(),
        started_ns=last + 86_400 * 10**9,
        finished_ns=last + 86_400 * 10**9 + 5 * 10**9,
        hardware_key="nvidia-h200-sxm",
        status=RunStatus.failed,
        failure_class=FailureClass.platform,
        cell="llama3.2:3b/chat-short",
    )
    write_results(folder, failed, [])
    return folder


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("metrics"))


def _view(store: Path, sql: str) -> list[dict[str, Any]]:
    con = connect(store, load_prices(None), needs=views_named(sql))  # the views the query reads
    try:
        rows: list[dict[str, Any]] = con.execute(sql).fetch_arrow_table().to_pylist()
    finally:
        con.close()
    return rows


def _samples(text: str) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            key = (s.name, frozenset(s.labels.items()))
            assert key not in found, f"duplicate series {key}"
            found[key] = s.value
    return found


def _labels(**labels: object) -> frozenset[tuple[str, str]]:
    return frozenset((k, str(v)) for k, v in labels.items())


@pytest.fixture(scope="module")
def scraped(store: Path) -> Iterator[Samples]:
    """The endpoint on a free port of 127.0.0.1, scraped once over HTTP."""
    prices = load_prices(None)
    server, thread = serve_metrics("127.0.0.1", 0, lambda: metric_rows(store, prices, TARGETS))
    try:
        answer = httpx.get(f"http://127.0.0.1:{server.server_port}/metrics", timeout=60)
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
        yield _samples(answer.text)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _config_labels(r: dict[str, Any]) -> dict[str, object]:
    return {
        "platform": r["hardware_key"],
        "host": r["host"],
        "config": r["config_id"],
        "engine": r["engine_name"],
        "model": r["model_name"],
        "workload": r["workload"],
    }


def test_the_last_nights_latencies_throughput_and_energy_are_run_summarys_and_energys(
    store: Path, scraped: Samples
) -> None:
    rows = _view(
        store,
        "SELECT s.*, r.hardware_key, e.j_per_output_token FROM run_summary AS s JOIN runs AS r ON r.run_id = s.run_id "
        "LEFT JOIN energy AS e ON e.run_id = s.run_id AND e.valid WHERE s.batch_id LIKE '%-n1'",
    )
    assert len(rows) == 4  # the last night of each host's configuration: 2 hosts x 2 levels
    for r in rows:
        labels = {**_config_labels(r), "concurrency": r["concurrency"]}
        for q, column in (("0.5", "ttft_p50_ms"), ("0.9", "ttft_p90_ms")):
            assert scraped["tcobench_ttft_seconds", _labels(**labels, quantile=q)] == pytest.approx(r[column] / 1e3)
        for q, column in (("0.5", "tpot_p50_ms"), ("0.9", "tpot_p90_ms")):
            assert scraped["tcobench_tpot_seconds", _labels(**labels, quantile=q)] == pytest.approx(r[column] / 1e3)
        tok_s = scraped["tcobench_output_tokens_per_second_per_gpu", _labels(**labels)]
        assert tok_s == pytest.approx(r["output_tok_s_per_gpu"])
        assert r["j_per_output_token"] is not None  # the fleet's telemetry is valid
        energy = scraped["tcobench_energy_per_output_token_joules", _labels(**labels)]
        assert energy == pytest.approx(r["j_per_output_token"])


def test_cost_per_basis_and_trend_are_frontiers_and_nightly_trends(store: Path, scraped: Samples) -> None:
    costs = _view(store, "SELECT * FROM frontier WHERE batch_id LIKE '%-n1'")
    assert {c["basis"] for c in costs} >= {"owned"}
    for c in costs:
        labels = _labels(**_config_labels(c), concurrency=c["concurrency"], basis=c["basis"])
        assert scraped["tcobench_cost_per_million_output_tokens_usd", labels] == pytest.approx(
            c["usd_per_m_output_tokens"]
        )
    trend = _view(
        store,
        "SELECT t.*, s.config_id, s.engine_name FROM nightly_trend AS t JOIN run_summary AS s ON s.run_id = t.run_id "
        "WHERE t.batch_id LIKE '%-n1'",
    )
    for t in trend:
        labels = _labels(**_config_labels(t), concurrency=t["concurrency"])
        assert scraped["tcobench_trend_nights", labels] == t["night"] == 2
        assert scraped["tcobench_trend_decode_change_ratio", labels] == pytest.approx(t["decode_change_pct"] / 100)
        prior = scraped["tcobench_trend_prior_mean_decode_tokens_per_second", labels]
        assert prior == pytest.approx(t["prior_mean_decode_tok_s_p50"])


def test_at_each_interactivity_target_the_best_point_that_reaches_it(store: Path, scraped: Samples) -> None:
    points = _view(store, "SELECT * FROM frontier WHERE batch_id LIKE '%-n1' AND basis = 'owned'")
    reached = 0
    for target in TARGETS:
        for host in ("gpu-nv-1", "gpu-amd-1"):
            mine = [p for p in points if p["host"] == host and p["interactivity"] >= target]
            labels = _labels(**_config_labels(points[[p["host"] for p in points].index(host)]), target=target)
            tok_s = scraped.get(("tcobench_output_tokens_per_second_per_gpu_at_interactivity", labels))
            cost = scraped.get(
                ("tcobench_cost_per_million_output_tokens_at_interactivity_usd", labels | {("basis", "owned")})
            )
            if not mine:
                assert tok_s is None and cost is None  # no measured point reaches it: no sample, never 0
                continue
            reached += 1
            assert tok_s == pytest.approx(max(p["output_tok_s_per_gpu"] for p in mine))
            assert cost == pytest.approx(min(p["usd_per_m_output_tokens"] for p in mine))
    assert reached  # the targets are within the fleet's interactivity


def test_availability_and_failed_cells_are_availabilitys(store: Path, scraped: Samples) -> None:
    (host,) = _view(store, "SELECT * FROM availability WHERE scope = 'host'")
    (platform,) = _view(store, "SELECT * FROM availability WHERE scope = 'platform'")
    where = {"platform": "nvidia-h200-sxm", "host": "gpu-nv-1"}
    assert scraped["tcobench_cells_failed_total", _labels(scope="host", **where, **{"class": "platform"})] == 1
    assert host["cells_failed_platform"] == 1
    assert scraped["tcobench_cells_total", _labels(scope="host", **where)] == host["cells"]
    assert scraped["tcobench_availability_ratio", _labels(scope="host", **where)] == pytest.approx(host["availability"])
    night = scraped["tcobench_night_availability_ratio", _labels(scope="platform", platform="nvidia-h200-sxm")]
    assert night == pytest.approx(platform["night_availability"]) == 0.0
    assert scraped["tcobench_last_night_runs", _labels(**where, status="failed")] == 1
    assert ("tcobench_last_night_runs", _labels(**where, status="ok")) not in scraped  # its last night failed
    amd = {"platform": "amd-mi300x", "host": "gpu-amd-1"}
    assert scraped["tcobench_last_night_runs", _labels(**amd, status="ok")] == 2


def test_help_and_type_lines_and_counters_end_in_total(store: Path) -> None:
    text = render_metrics(lambda: metric_rows(store, load_prices(None), TARGETS))
    families = list(text_string_to_metric_families(text))
    assert families and all(f.name.startswith("tcobench_") and f.documentation for f in families)
    types = {f.name: f.type for f in families}
    assert types["tcobench_cells_failed"] == "counter" and types["tcobench_ttft_seconds"] == "gauge"
    assert "# TYPE tcobench_cells_failed_total counter" in text
    counted = [line.split("{")[0] for line in text.splitlines() if line.startswith("tcobench_cells")]
    assert counted and all(name.endswith("_total") for name in counted)


def test_the_textfile_is_replaced_whole_and_left_alone_when_writing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tcobench.prom"
    write_textfile(path, "old 1\n")
    assert write_textfile(path, "new 2\n") == path
    assert path.read_text("utf-8") == "new 2\n" and [p.name for p in tmp_path.iterdir()] == ["tcobench.prom"]

    def refuse(self: Path, target: Path) -> Path:
        raise OSError("disk full")

    monkeypatch.setattr(Path, "replace", refuse)
    with pytest.raises(StoreError, match=r"--textfile .*tcobench\.prom: cannot write the metrics file: disk full"):
        write_textfile(path, "half")
    assert path.read_text("utf-8") == "new 2\n" and [p.name for p in tmp_path.iterdir()] == ["tcobench.prom"]


def _queries(node: object) -> Iterator[str]:
    """Every PromQL text of a dashboard: panel targets' expr and template variables' query."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                yield value
            elif key == "query" and isinstance(value, dict) and isinstance(value.get("query"), str):
                yield value["query"]
            else:
                yield from _queries(value)
    elif isinstance(node, list):
        for item in node:
            yield from _queries(item)


def test_the_grafana_dashboard_reads_only_metrics_the_exporter_produces(scraped: Samples) -> None:
    dashboard = json.loads((Path(__file__).parents[4] / "examples" / "grafana-dashboard.json").read_text("utf-8"))
    assert dashboard["panels"] and all(p["targets"] for p in dashboard["panels"])
    produced = {name for name, _ in scraped}
    used = {name for q in _queries(dashboard) for name in re.findall(r"\btcobench_[a-z0-9_]+", q)}
    assert len(used) >= 12
    assert used <= produced, f"not produced: {sorted(used - produced)}"


def test_a_port_that_cannot_be_bound_is_one_config_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=rf"^--port {port}: cannot listen on 127\.0\.0\.1:{port}: "):
            serve_metrics("127.0.0.1", port, list)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_a_scrape_that_cannot_read_the_store_is_a_500_of_one_line_and_one_warning(
    store: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    prices = load_prices(None)
    lines = _Lines()
    logger = logging.getLogger("tcobench.tasks.report.exposition")
    logger.addHandler(lines)
    server, thread = serve_metrics("127.0.0.1", 0, lambda: metric_rows(copy, prices, TARGETS))
    try:
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        assert httpx.get(url, timeout=60).status_code == 200
        (copy / "catalog.ducklake").write_bytes(b"not a catalog")
        answer = httpx.get(url, timeout=60)
    finally:
        logger.removeHandler(lines)
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert answer.status_code == 500
    assert answer.text.startswith(f"cannot read the store: store {copy}: its catalog ") and answer.text.count("\n") == 1
    assert lines.lines == [f"metrics scrape: {answer.text.strip()}"]
    assert "Traceback" not in capfd.readouterr().err  # wsgiref's handler printed none
