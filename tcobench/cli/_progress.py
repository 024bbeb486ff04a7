"""Progress displays of the command line: rich bars on a terminal, plain time-stamped log lines otherwise.

Imported by command modules at start-up: tcobench's tasks are imported only when a display is made."""

from __future__ import annotations

import datetime as dt
import threading
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from tcobench.tasks.progress import HostState, LevelResult, PlainSink

__all__ = ["NightDisplay", "log_line", "night_display"]


def log_line(console: Console) -> PlainLine:
    """A writer of plain log lines: 'HH:MM:SS text' (UTC), never wrapped or styled."""
    return PlainLine(console)


class PlainLine:
    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, text: str) -> None:
        stamp = dt.datetime.now(dt.UTC).strftime("%H:%M:%S")
        self.console.print(f"{stamp} {text}", markup=False, highlight=False, soft_wrap=True)


class RichSink:
    """One bar per host: the cell in progress, its requests done / total, errors and the host's ETA; level results
    and cell ends print above the bars."""

    def __init__(self, console: Console) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.progress: Progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[errors]} errors"),
            TextColumn("ETA {task.fields[eta]}"),
            console=console,
        )
        self._bars: dict[str, TaskID] = {}
        self._lock = threading.Lock()

    def update(self, state: HostState) -> None:
        from tcobench.tasks.progress import duration_text

        level = f" c={state.concurrency}" if state.concurrency is not None else ""
        what = f"{state.host} {state.cell_index}/{state.cells} {state.cell or ''}{level}"
        with self._lock:
            if state.host not in self._bars:
                self._bars[state.host] = self.progress.add_task(what, total=state.total, errors=0, eta="?")
            bar = self._bars[state.host]
        eta = ("done" if state.outcome == "ok" else state.outcome) if state.finished else duration_text(state.eta_s)
        self.progress.update(
            bar, description=what, completed=state.done, total=state.total, errors=state.errors, eta=eta
        )

    def level(self, result: LevelResult) -> None:
        from tcobench.tasks.progress import level_text

        self.progress.console.print(level_text(result), markup=False, highlight=False, soft_wrap=True)

    def message(self, host: str, text: str) -> None:
        self.progress.console.print(f"{host}: {text}", markup=False, highlight=False, soft_wrap=True)


class NightDisplay:
    """The nightly's progress display as a context: rich on a terminal, plain lines otherwise."""

    def __init__(self, console: Console, every_s: float = 10.0) -> None:
        from tcobench.tasks.progress import PlainSink

        self.rich = RichSink(console) if console.is_terminal else None
        self.sink: RichSink | PlainSink = self.rich or PlainSink(log_line(console), every_s)

    def __enter__(self) -> RichSink | PlainSink:
        if self.rich is not None:
            self.rich.progress.start()
        return self.sink

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.rich is not None:
            self.rich.progress.stop()


def night_display(console: Console, every_s: float = 10.0) -> NightDisplay:
    return NightDisplay(console, every_s)
