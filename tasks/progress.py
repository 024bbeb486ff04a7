"""Live progress of a nightly: per host, the cell in progress, its requests done / total, errors and an ETA; a
result line as each concurrency level finishes (from view run_summary, as stored); engine start-up events (model
pulls, a line per 10%).

``NightProgress`` keeps the state of every host and hands each host's ``run_cells`` a ``HostProgress`` (thread-safe:
requests finish on the measuring thread); what to show goes to a ``ProgressSink`` (the CLI's: rich bars on a
terminal, plain log lines otherwise). The ETA of a host: its elapsed time x (requests left / requests done), over
all its cells; unknown (None) while nothing is done or when a cell is timed (duration_s: no request count).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import duckdb

from tcobench.errors import TcobenchError
from tcobench.schemas import PriceTable, RequestRecord, RunRecord
from tcobench.tasks.analysis.summarise import run_summaries
from tcobench.tasks.engine import EngineEvent
from tcobench.tasks.inventory import Cell
from tcobench.tasks.store.store import StoreRef

__all__ = [
    "HostProgress",
    "HostState",
    "LevelResult",
    "NightProgress",
    "PlainSink",
    "ProgressSink",
    "RunWatcher",
    "cell_requests",
    "duration_text",
    "end_text",
    "level_text",
    "state_text",
]


@dataclass(frozen=True)
class HostState:
    """A host's progress now."""

    host: str
    cell: str | None  # the cell in progress (None before the first and after the last)
    cell_index: int  # 1-based index of that cell among the host's
    cells: int
    concurrency: int | None  # the level in progress
    done: int  # requests finished in the cell (warm-up and measured)
    total: int | None  # requests of the cell (None: a timed workload)
    errors: int  # failed requests in the cell
    eta_s: float | None  # seconds until the host's last cell ends, estimated
    finished: bool = False
    outcome: str = "ok"  # the status of the cell that ended last (a failed one never reads "done")


@dataclass(frozen=True)
class LevelResult:
    """A concurrency level that has just been stored, with its figures from view run_summary."""

    host: str
    cell: str
    concurrency: int
    status: str
    ok: int | None = None
    errors: int | None = None
    output_tok_s: float | None = None
    ttft_p50_ms: float | None = None
    e2e_p50_ms: float | None = None
    note: str | None = None  # why the figures are missing


@runtime_checkable  # a flow parameter: Prefect builds a schema of it (isinstance must work)
class ProgressSink(Protocol):
    def update(self, state: HostState) -> None: ...

    def level(self, result: LevelResult) -> None: ...

    def message(self, host: str, text: str) -> None: ...


@runtime_checkable  # a flow parameter: Prefect builds a schema of it (isinstance must work)
class RunWatcher(Protocol):
    """What the benchmark flow tells about its levels (besides each request: ``on_request``)."""

    def start_level(self, concurrency: int) -> None: ...

    def on_run(self, run: RunRecord) -> None: ...


def cell_requests(cell: Cell) -> int | None:
    """Requests a cell sends over all its levels (warm-up included); None for a timed workload."""
    w = cell.config.workload
    return None if w.duration_s is not None else (w.warmup_requests + w.requests) * len(w.concurrency)


class HostProgress:
    """One host's progress; its methods are the callbacks ``run_cells`` and the benchmark flow call."""

    def __init__(self, host: str, cells: Sequence[Cell], sink: ProgressSink, store: StoreRef, prices: PriceTable):
        self.host, self.sink, self.store, self.prices = host, sink, store, prices
        self._totals = [cell_requests(c) for c in cells]
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._finished_requests = 0  # requests of the cells already over (their full count)
        self._index = 0
        self._cell: str | None = None
        self._level: int | None = None
        self._done = self._errors = 0
        self._pulls: dict[str, int] = {}  # model-pull step -> tenths shown

    def _state(self, finished: bool = False, outcome: str = "ok") -> HostState:
        total = self._totals[self._index - 1] if self._index else None
        return HostState(
            self.host,
            self._cell,
            self._index,
            len(self._totals),
            self._level,
            self._done,
            total,
            self._errors,
            self._eta(),
            finished,
            outcome,
        )

    def _eta(self) -> float | None:
        if any(t is None for t in self._totals):
            return None
        whole = sum(t or 0 for t in self._totals)
        done = self._finished_requests + self._done
        if done <= 0:
            return None
        return max(0.0, (time.monotonic() - self._started) * (whole - done) / done)

    def start_cell(self, cell: Cell, index: int) -> None:
        with self._lock:
            self._index, self._cell, self._level, self._done, self._errors = index, cell.label, None, 0, 0
            state = self._state()
        self.sink.update(state)

    def on_request(self, record: RequestRecord) -> None:
        with self._lock:
            self._done += 1
            self._errors += record.error is not None
            state = self._state()
        self.sink.update(state)

    def on_event(self, event: EngineEvent) -> None:
        """An engine start-up event (a model pull: a line per 10% of each step; a warning or step: a line)."""
        if event.total:
            key = event.message.split(":", 1)[0]
            tenth = 10 * (event.completed or 0) // event.total
            with self._lock:
                if self._pulls.get(key) == tenth:
                    return
                self._pulls[key] = tenth
            self.sink.message(
                self.host, f"{event.message[:100]}: {event.completed or 0:,}/{event.total:,} ({tenth * 10}%)"
            )
            return
        self.sink.message(self.host, ("warning: " if event.warning else "") + event.message)

    def start_level(self, concurrency: int) -> None:
        with self._lock:
            self._level = concurrency
            state = self._state()
        self.sink.update(state)

    def on_run(self, run: RunRecord) -> None:
        """A level is stored: its result line (figures from view run_summary)."""
        self.sink.level(self._level_result(run))

    def _level_result(self, run: RunRecord) -> LevelResult:
        base = LevelResult(self.host, run.cell or "", run.concurrency, run.status.value)
        try:
            rows = run_summaries(self.store, self.prices, [run.run_id]).to_pylist()
        except (TcobenchError, duckdb.Error, OSError) as exc:  # a progress line never stops the night
            return LevelResult(**{**base.__dict__, "note": f"figures not read: {exc}"})
        if not rows:
            return LevelResult(**{**base.__dict__, "note": "no measured request"})
        r: dict[str, Any] = rows[0]
        return LevelResult(
            base.host,
            base.cell,
            base.concurrency,
            base.status,
            r["ok"],
            r["errors"],
            r["output_tok_s"],
            r["ttft_p50_ms"],
            r["e2e_p50_ms"],
        )

    def end_cell(self, status: str, error: str | None) -> None:
        with self._lock:
            total = self._totals[self._index - 1] if self._index else None
            self._finished_requests += total if total is not None else self._done  # a sweep's skipped levels too
            if status == "ok":  # a failed cell keeps its real count: its requests were not done
                self._done = total if total is not None else self._done
            last = self._index == len(self._totals)
            state = self._state(finished=last, outcome=status)
            label = self._cell
        self.sink.message(self.host, f"cell {label} {status}" + (f": {error}" if error else ""))
        self.sink.update(state)


class NightProgress:
    """The night's progress: one ``HostProgress`` per host of the plan."""

    def __init__(self, cells: Sequence[Cell], sink: ProgressSink, store: StoreRef, prices: PriceTable):
        hosts: dict[str, list[Cell]] = {}
        for cell in cells:
            hosts.setdefault(cell.host.name, []).append(cell)
        self.hosts = {name: HostProgress(name, own, sink, store, prices) for name, own in hosts.items()}

    def of(self, host: str) -> HostProgress:
        return self.hosts[host]


def duration_text(seconds: float | None) -> str:
    """45s, 3m05s, 2h03m; '?' when unknown."""
    if seconds is None:
        return "?"
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def state_text(state: HostState) -> str:
    """One host's progress as one line."""
    if state.cell is None:
        return f"{state.host}: waiting"
    level = f" c={state.concurrency}" if state.concurrency is not None else ""
    total = "?" if state.total is None else str(state.total)
    return (
        f"{state.host}: cell {state.cell_index}/{state.cells} {state.cell}{level}: {state.done}/{total} "
        f"requests, {state.errors} errors, ETA {duration_text(state.eta_s)}"
    )


def end_text(state: HostState) -> str:
    """What ends a host's last line: `` (done)``, or the last cell's status when it did not end ok."""
    if not state.finished:
        return ""
    return " (done)" if state.outcome == "ok" else f" (cell {state.outcome}; host done)"


def _figure(value: float | None, unit: str, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}{unit}"


def level_text(r: LevelResult) -> str:
    """A finished level as one line: requests ok / failed, output tok/s, TTFT and end-to-end medians."""
    head = f"{r.host}: {r.cell} c={r.concurrency} {r.status}"
    if r.note is not None:
        return f"{head} ({r.note})"
    return (
        f"{head}: {r.ok} ok, {r.errors} errors, {_figure(r.output_tok_s, ' output tok/s')}, "
        f"TTFT p50 {_figure(r.ttft_p50_ms, ' ms')}, e2e p50 {_figure(r.e2e_p50_ms, ' ms', 0)}"
    )


class PlainSink:
    """Progress as plain log lines (no terminal): a host's state at most every ``every_s`` seconds and whenever its
    cell or level changes; every level result and cell end."""

    def __init__(self, write: Callable[[str], None], every_s: float = 10.0) -> None:
        self.write, self.every_s = write, every_s
        self._lock = threading.Lock()
        self._last: dict[str, tuple[float, str | None, int | None]] = {}

    def update(self, state: HostState) -> None:
        now = time.monotonic()
        with self._lock:
            when, cell, level = self._last.get(state.host, (float("-inf"), None, None))
            if (cell, level) == (state.cell, state.concurrency) and now - when < self.every_s and not state.finished:
                return
            self._last[state.host] = (now, state.cell, state.concurrency)
        self.write(state_text(state) + end_text(state))

    def level(self, result: LevelResult) -> None:
        self.write(level_text(result))

    def message(self, host: str, text: str) -> None:
        self.write(f"{host}: {text}")
