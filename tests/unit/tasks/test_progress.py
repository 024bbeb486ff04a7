from __future__ import annotations

from pathlib import Path

from tcobench.schemas import Phase
from tcobench.tasks.engine import EngineEvent
from tcobench.tasks.inventory import load_plan
from tcobench.tasks.prices import load_prices
from tcobench.tasks.progress import (
    HostState,
    LevelResult,
    NightProgress,
    PlainSink,
    duration_text,
    level_text,
    state_text,
)
from tests.unit.factories import make_request, make_run

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
PRICES = load_prices(None)


class Recorder:
    def __init__(self) -> None:
        self.states: list[HostState] = []
        self.levels: list[LevelResult] = []
        self.messages: list[str] = []

    def update(self, state: HostState) -> None:
        self.states.append(state)

    def level(self, result: LevelResult) -> None:
        self.levels.append(result)

    def message(self, host: str, text: str) -> None:
        self.messages.append(f"{host}: {text}")


PLAN = load_plan(EXAMPLES / "inventory.toml", [EXAMPLES / "matrix-nvidia.toml", EXAMPLES / "matrix-amd.toml"], PRICES)


def _night(tmp_path: Path, sink: Recorder) -> NightProgress:
    return NightProgress(PLAN.cells, sink, tmp_path / "store", PRICES)


def test_a_host_counts_its_cell_requests_errors_and_estimates_what_is_left(tmp_path: Path) -> None:
    sink = Recorder()
    night = _night(tmp_path, sink)
    host = night.of("gpu-nv-01")
    (cell,) = PLAN.cells_of("gpu-nv-01")
    host.start_cell(cell, 1)
    assert sink.states[-1].eta_s is None and sink.states[-1].done == 0  # nothing done: no estimate yet
    w = cell.config.workload
    total = (w.warmup_requests + w.requests) * len(w.concurrency)
    host.start_level(w.concurrency[0])
    host.on_request(make_request(phase=Phase.warmup))
    host.on_request(make_request(error="HTTP 500"))
    state = sink.states[-1]
    assert (state.host, state.cell, state.cell_index, state.cells) == ("gpu-nv-01", cell.label, 1, 1)
    assert (state.concurrency, state.done, state.total, state.errors) == (w.concurrency[0], 2, total, 1)
    assert state.eta_s is not None and state.eta_s >= 0
    host.end_cell("ok", None)
    assert sink.states[-1].finished and sink.states[-1].done == total  # a sweep's skipped levels count as done
    assert sink.messages == [f"gpu-nv-01: cell {cell.label} ok"]


def test_a_level_line_says_why_it_has_no_figures(tmp_path: Path) -> None:
    sink = Recorder()
    _night(tmp_path, sink).of("gpu-amd-01").on_run(make_run(run_id="absent", cell="c", concurrency=4))
    (level,) = sink.levels
    assert (level.concurrency, level.ok, level.note) == (4, None, "no measured request")
    assert level_text(level) == "gpu-amd-01: c c=4 ok (no measured request)"


def test_texts() -> None:
    assert [duration_text(s) for s in (None, 4.4, 185, 7380)] == ["?", "4s", "3m05s", "2h03m"]
    state = HostState("h", "h/e/m/w", 1, 3, 8, 40, 120, 2, 95.0)
    assert state_text(state) == "h: cell 1/3 h/e/m/w c=8: 40/120 requests, 2 errors, ETA 1m35s"
    level = LevelResult("h", "h/e/m/w", 8, "partial", 118, 2, 1234.56, 12.34, 567.8)
    assert level_text(level) == (
        "h: h/e/m/w c=8 partial: 118 ok, 2 errors, 1,234.6 output tok/s, TTFT p50 12.3 ms, e2e p50 568 ms"
    )


def test_plain_lines_come_at_most_every_interval_and_at_every_change() -> None:
    lines: list[str] = []
    sink = PlainSink(lines.append, every_s=3600)
    base = HostState("h", "h/e/m/w", 1, 1, 1, 0, 10, 0, None)
    sink.update(base)
    sink.update(HostState("h", "h/e/m/w", 1, 1, 1, 5, 10, 0, 3.0))  # same cell and level, too soon: nothing
    sink.update(HostState("h", "h/e/m/w", 1, 1, 2, 6, 10, 0, 2.0))  # a new level: a line
    sink.update(HostState("h", "h/e/m/w", 1, 1, 2, 10, 10, 0, 0.0, finished=True))
    assert lines == [
        "h: cell 1/1 h/e/m/w c=1: 0/10 requests, 0 errors, ETA ?",
        "h: cell 1/1 h/e/m/w c=2: 6/10 requests, 0 errors, ETA 2s",
        "h: cell 1/1 h/e/m/w c=2: 10/10 requests, 0 errors, ETA 0s (done)",
    ]


def test_a_model_pull_shows_a_line_per_tenth_and_warnings_as_they_come(tmp_path: Path) -> None:
    sink = Recorder()
    host = _night(tmp_path, sink).of("gpu-nv-01")
    for done in (0, 50, 99, 100, 250, 1000):
        host.on_event(EngineEvent("pulling sha256:ab: layer", completed=done, total=1000))
    host.on_event(EngineEvent("model only partly on the GPU", warning=True))
    assert sink.messages == [
        "gpu-nv-01: pulling sha256:ab: layer: 0/1,000 (0%)",
        "gpu-nv-01: pulling sha256:ab: layer: 100/1,000 (10%)",
        "gpu-nv-01: pulling sha256:ab: layer: 250/1,000 (20%)",
        "gpu-nv-01: pulling sha256:ab: layer: 1,000/1,000 (100%)",
        "gpu-nv-01: warning: model only partly on the GPU",
    ]


def test_a_failed_cell_never_reads_done_with_its_requests_counted(tmp_path: Path) -> None:
    """An engine that never started: nothing was sent, the cell failed; its line says so, not "0 errors (done)"."""
    sink = Recorder()
    host = _night(tmp_path, sink).of("gpu-nv-01")
    (cell,) = PLAN.cells_of("gpu-nv-01")
    host.start_cell(cell, 1)
    host.end_cell("failed", "engine did not start")
    last = sink.states[-1]
    assert last.finished and last.done == 0 and last.outcome == "failed"
    lines: list[str] = []
    PlainSink(lines.append).update(last)
    assert lines[-1].endswith("0/" + str(last.total) + " requests, 0 errors, ETA 0s (cell failed; host done)")
    assert not lines[-1].endswith("0 errors (done)")
