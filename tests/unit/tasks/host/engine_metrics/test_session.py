"""The scraping session for real (its thread, its clock), against an engine answering through httpx.MockTransport."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from tcobench.schemas import EngineQuantity, TelemetryConfig
from tcobench.tasks.host.engine_metrics import session as session_module
from tcobench.tasks.host.engine_metrics import start_engine_metrics, stop_engine_metrics
from tcobench.tasks.load.record import RunContext
from tests.unit.tasks.host.engine_metrics.test_parsers import LLAMA_METRICS_TEXT, LLAMA_SLOTS


class Engine:
    """llama-server's /metrics and /slots; ``fail`` makes /metrics answer 500 from then on."""

    def __init__(self) -> None:
        self.scrapes = 0
        self.fail = threading.Event()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/slots":
            return httpx.Response(200, json=LLAMA_SLOTS)
        if request.url.path == "/metrics":
            self.scrapes += 1
            if self.fail.is_set():
                return httpx.Response(500, text="boom")
            return httpx.Response(200, text=LLAMA_METRICS_TEXT)
        return httpx.Response(404)


CTX = RunContext("r1", "2026-12-01", "h")


def test_session_scrapes_at_its_rate_and_brackets_the_run() -> None:
    engine = Engine()
    config = TelemetryConfig.model_validate({"engine_metrics_hz": 20.0})
    before = time.time_ns()
    session = start_engine_metrics(config, "http://127.0.0.1:1", CTX, transport=httpx.MockTransport(engine))
    time.sleep(0.3)
    rows = stop_engine_metrics(session)
    after = time.time_ns()
    instants = sorted({r.ts_ns for r in rows})
    assert before <= instants[0] and instants[-1] <= after
    assert len(instants) >= 3  # the opening scrape, at least one from the thread, the closing one
    assert {(r.run_id, r.date, r.host) for r in rows} == {("r1", "2026-12-01", "h")}
    per_instant = [r for r in rows if r.ts_ns == instants[0]]
    assert {r.quantity for r in per_instant} == {
        EngineQuantity.requests_running,
        EngineQuantity.requests_waiting,
        EngineQuantity.prompt_tokens_total,
        EngineQuantity.generation_tokens_total,
        EngineQuantity.kv_cache_tokens,
        EngineQuantity.kv_cache_capacity_tokens,
    }
    assert session.facts == {"engine_metrics_source": "llama.cpp /metrics", "engine_metrics_note": None}


def test_failed_scrapes_are_counted_not_raised() -> None:
    engine = Engine()
    config = TelemetryConfig.model_validate({"engine_metrics_hz": 20.0})
    session = start_engine_metrics(config, "http://127.0.0.1:1", CTX, transport=httpx.MockTransport(engine))
    engine.fail.set()
    time.sleep(0.15)
    rows = stop_engine_metrics(session)
    assert rows  # the opening scrape worked
    note = session.facts["engine_metrics_note"]
    assert note is not None and "scrape(s) failed, last: HTTPStatusError" in note and "500" in note


def test_no_endpoint_leaves_a_note_and_no_rows() -> None:
    config = TelemetryConfig()
    session = start_engine_metrics(
        config, "http://127.0.0.1:1", CTX, transport=httpx.MockTransport(lambda r: httpx.Response(404))
    )
    assert stop_engine_metrics(session) == []
    assert session.facts["engine_metrics_source"] is None
    assert session.facts["engine_metrics_note"].startswith("no engine metrics endpoint: llama.cpp: ")


def test_the_thread_gives_up_on_an_engine_that_is_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_module, "MAX_FAILURES_IN_A_ROW", 3)
    engine = Engine()
    config = TelemetryConfig.model_validate({"engine_metrics_hz": 20.0})
    session = start_engine_metrics(config, "http://127.0.0.1:1", CTX, transport=httpx.MockTransport(engine))
    engine.fail.set()
    assert session._thread is not None
    session._thread.join(timeout=10)  # ends by itself: nobody called stop()
    assert not session._thread.is_alive() and session.failures == session.in_a_row == 3
