"""`run`'s progress without a terminal: time-stamped lines, warm-up apart from measurement, requests (or seconds)
done / total, errors and an ETA; the estimate after the first warm-up, and a stop when it is too long."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from tcobench.cli._run_display import RunDisplay
from tcobench.errors import ConfigError
from tcobench.schemas import Phase, RunStatus
from tcobench.tasks.config import load_config
from tcobench.tasks.load import shutdown
from tests.unit.factories import make_request, make_run

STAMP = re.compile(r"^\d\d:\d\d:\d\d ")


def _display(yes: bool = False, **workload: object) -> tuple[RunDisplay, io.StringIO]:
    text = io.StringIO()
    console = Console(file=text, force_terminal=False, width=200)
    w = load_config(None, {"workload": workload}).workload
    return RunDisplay(console, w, embedded=True, yes=yes, every_s=3600), text


def _lines(text: io.StringIO) -> list[str]:
    return text.getvalue().splitlines()


def test_plain_lines_show_warm_up_apart_then_requests_errors_and_eta() -> None:
    display, text = _display(requests=2, warmup_requests=1, concurrency=[1, 2])
    display.start_level(1)
    display.on_request(make_request(phase=Phase.warmup, prompt_tokens=100, output_tokens=10))
    display.on_request(make_request(error="HTTP 500"))
    display.on_run(make_run(concurrency=1, status=RunStatus.partial, error="1 of 2 failed"))
    lines = _lines(text)
    assert all(STAMP.match(line) for line in lines), lines
    bodies = [line[9:] for line in lines]
    assert bodies[0] == "c=1 (level 1/2) warm-up: 0/1 requests, 0 errors, ETA ? (estimate after the warm-up)"
    assert bodies[1].startswith("c=1 (level 1/2) warm-up done: 1 requests, 0 errors in ")
    assert bodies[2].startswith("estimate: up to about ")
    assert re.match(r"c=1 \(level 1/2\) measure: 0/2 requests, 0 errors, ETA \S+", bodies[3]), bodies
    assert bodies[-1] == "c=1 (level 1/2) partial: 1 measured requests, 1 errors: 1 of 2 failed"


def test_a_timed_run_counts_seconds() -> None:
    display, text = _display(duration_s=60, warmup_requests=0, concurrency=[4])
    display.start_level(4)
    assert re.match(r"c=4 \(level 1/1\) measure: 0/60 s, 0 requests, 0 errors, ETA \S+", _lines(text)[0][9:])


def test_a_run_estimated_over_30_minutes_stops_unless_yes() -> None:
    slow = make_request(
        phase=Phase.warmup, prompt_tokens=1000, output_tokens=1000, ttft_ns=10**11, decode_ns=10**12, e2e_ns=11 * 10**11
    )
    shutdown.reset()
    try:
        display, text = _display(requests=20, warmup_requests=1, concurrency=[1, 2])
        display.start_level(1)
        display.on_request(slow)
        with_stop = shutdown._State.abort
        assert isinstance(with_stop, ConfigError) and "add --yes" in str(with_stop) and "over 30 min" in str(with_stop)
        shutdown.reset()
        display, text = _display(yes=True, requests=20, warmup_requests=1, concurrency=[1, 2])
        display.start_level(1)
        display.on_request(slow)
        assert shutdown._State.abort is None and "estimate: up to about" in text.getvalue()
    finally:
        shutdown.reset()


def test_a_replays_estimate_is_its_span_times_the_time_scale(tmp_path: Path) -> None:
    # two requests 2 h apart in the trace, replayed twice as fast: 1 h, plus under a minute of requests
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0, "prompt": "a"}\n{"timestamp": 7200000, "prompt": "b"}\n', "utf-8")
    warm = make_request(
        phase=Phase.warmup, prompt_tokens=10, output_tokens=2, ttft_ns=10**8, decode_ns=10**8, e2e_ns=10**9
    )
    shutdown.reset()
    try:
        display, text = _display(yes=True, trace={"path": trace, "time_scale": 0.5}, warmup_requests=1, concurrency=[1])
        display.start_level(1)
        display.on_request(warm)
        assert "measure: 0/2 requests" in _lines(text)[-1]  # the trace's requests, not workload.requests
        (line,) = [line[9:] for line in _lines(text) if "estimate:" in line]
        # the engine keeps up (each request well under the 1 h gap): both ends are the span, an hour
        assert line.startswith(
            "estimate: about 1h00m if the engine keeps up with the trace, up to about 1h00m if it serves one request "
            "at a time, for 1 level(s)"
        ), line
    finally:
        shutdown.reset()
