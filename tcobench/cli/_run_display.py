"""What `tcobench run` shows while it works, on stderr: each level's warm-up apart from its measurement, requests
done / total (seconds done / total for a timed run), errors and an ETA; the estimate of the whole run after the first
warm-up. A rich bar on a terminal; plain time-stamped lines otherwise (one at each change of level or phase, then at
most every ``every_s`` seconds, also while no request finishes), as `nightly` writes them."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from tcobench.cli._progress import log_line

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from tcobench.schemas import RequestRecord, RunRecord, TraceRequest, WorkloadConfig

__all__ = ["RunDisplay", "TOO_LONG_HINT"]

TOO_LONG_HINT = (
    "add --yes to measure anyway, or shorten it: fewer levels (--concurrency N), fewer requests "
    "(--requests N) or a shorter --duration, shorter answers (--max-tokens N)"
)


class RunDisplay:
    """`run`'s progress (module doc); a ``RunWatcher`` of the benchmark flow and its ``on_request``."""

    def __init__(self, console: Console, workload: WorkloadConfig, embedded: bool, yes: bool, every_s: float = 10.0):
        self.console, self.w, self.embedded, self.yes, self.every_s = console, workload, embedded, yes, every_s
        self.plain = None if console.is_terminal else log_line(console)
        self.progress: Progress | None = None
        self._bar: TaskID | None = None
        self._lock = threading.Lock()
        self._levels = len(workload.concurrency)
        self._level_no = 0
        self._level: int | None = None
        self._phase = "starting"
        self._done = self._errors = self._measure_done = 0
        self._warm: list[RequestRecord] = []
        self._phase_started = self._started = time.monotonic()
        self._last_line = float("-inf")
        self._estimate_s: float | None = None
        self._replayed: tuple[TraceRequest, ...] | None = None  # a replay's requests, read at the first need
        self._warm_done_line = ""
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # the display's life
    def __enter__(self) -> RunDisplay:
        self._ticker = threading.Thread(target=self._tick, name="tcobench-progress", daemon=True)
        self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        if self.progress is not None and self.progress.live.is_started:
            self.progress.stop()

    def _tick(self) -> None:
        while not self._stop.wait(min(1.0, self.every_s)):
            with self._lock:
                due = self._level is not None and time.monotonic() - self._last_line >= self.every_s
            if due or (self.plain is None and self._level is not None):
                self._show()

    # what the flow tells
    def start_level(self, concurrency: int) -> None:
        with self._lock:
            self._level_no += 1
            self._level, self._phase, self._done, self._errors = concurrency, "warm-up", 0, 0
            self._phase_started = time.monotonic()
            if self.w.warmup_requests == 0:
                self._phase = "measure"
        self._show(force=True)

    def on_request(self, record: RequestRecord) -> None:
        from tcobench.schemas import Phase

        with self._lock:
            self._errors += record.error is not None
            change = False
            if record.phase is Phase.warmup:
                self._done += 1
                if self._level_no == 1:
                    self._warm.append(record)
                if self._done >= self.w.warmup_requests:
                    self._warm_done_line = self._warmup_summary()
                    self._phase, self._done, self._errors = "measure", 0, 0
                    self._phase_started, change = time.monotonic(), True
            else:
                self._done += 1
                self._measure_done += 1
            first_warmup_over = change and self._level_no == 1
        if change:
            self._line(self._warm_done_line)
        if first_warmup_over:
            self._estimate()
        self._show(force=change)

    def on_run(self, run: RunRecord) -> None:
        with self._lock:
            text = (
                f"c={run.concurrency} (level {self._level_no}/{self._levels}) {run.status.value}: "
                f"{self._done} measured requests, {self._errors} errors"
            )
            if run.error:
                text += f": {run.error}"
            self._phase = "stored"
        self._line(text)

    # the estimate
    def _estimate(self) -> None:
        from tcobench.errors import ConfigError
        from tcobench.tasks.estimate import LONG_RUN_S, plan_seconds, replay_floor_seconds, warmup_speed
        from tcobench.tasks.load import shutdown
        from tcobench.tasks.progress import duration_text

        speed = warmup_speed(self._warm)
        if speed is None:
            self._line("estimate: none (no warm-up request succeeded)")
            return
        trace = self._trace()
        seconds = plan_seconds(self.w, speed, trace)
        self._estimate_s = seconds
        levels = f"{self._levels} level(s)" + (", fewer if the sweep stops itself" if self.w.sweep else "")
        if trace:
            floor = replay_floor_seconds(self.w, speed, trace)
            self._line(
                f"estimate: about {duration_text(floor)} if the engine keeps up with the trace, up to about "
                f"{duration_text(seconds)} if it serves one request at a time, for {levels} (engine speed in "
                f"warm-up: {speed.text()})"
            )
        else:
            self._line(
                f"estimate: up to about {duration_text(seconds)} for {levels} (engine speed in warm-up: {speed.text()})"
            )
        if self.embedded and seconds > LONG_RUN_S and not self.yes:
            shutdown.abort(
                ConfigError(
                    f"the run would take up to about {duration_text(seconds)} on the embedded CPU engine (over "
                    f"{LONG_RUN_S // 60} min; nothing was measured): {TOO_LONG_HINT}"
                )
            )

    def _trace(self) -> tuple[TraceRequest, ...]:
        """The replayed trace's requests (its window; read again, once: the flow read and checked it before the
        engine started); none without a trace, or when it cannot be read now."""
        from tcobench.errors import ConfigError
        from tcobench.tasks.workload.read_trace import open_trace

        if self.w.trace is None:
            return ()
        if self._replayed is None:
            try:
                self._replayed = tuple(open_trace(self.w.trace).requests())
            except ConfigError:
                self._replayed = ()
        return self._replayed

    def _measured(self) -> int:
        """Measured requests of a counted level: the replayed trace's (its window), else workload.requests."""
        return len(self._trace()) or self.w.requests

    # lines and the bar
    def _warmup_summary(self) -> str:
        took = time.monotonic() - self._phase_started
        return (
            f"c={self._level} (level {self._level_no}/{self._levels}) warm-up done: {self._done} requests, "
            f"{self._errors} errors in {took:.1f} s; measuring"
        )

    def _line(self, text: str) -> None:
        if self.plain is not None:
            self.plain(text)
        elif self.progress is not None:
            self.progress.console.print(escape(text), highlight=False, soft_wrap=True)
        else:
            self.console.print(escape(text), highlight=False, soft_wrap=True)
        with self._lock:
            self._last_line = time.monotonic()

    def _eta_s(self) -> float | None:
        elapsed = time.monotonic() - self._started
        if self.w.duration_s is not None:
            left_here = max(0.0, self.w.duration_s - (time.monotonic() - self._phase_started))
            if self._phase != "measure":
                left_here = self.w.duration_s
            per_level = elapsed / max(1, self._level_no)
            return left_here + per_level * (self._levels - self._level_no)
        per = self.w.warmup_requests + self._measured()
        whole = per * self._levels
        done = per * (self._level_no - 1) + (self._done if self._phase == "measure" else 0)
        if self._phase == "measure":
            done += self.w.warmup_requests
        if done <= 0:
            return self._estimate_s
        return elapsed * (whole - done) / done

    def _state(self) -> str:
        from tcobench.tasks.progress import duration_text

        head = f"c={self._level} (level {self._level_no}/{self._levels}) {self._phase}"
        if self._phase == "warm-up":
            eta = duration_text(self._eta_s()) if self._estimate_s is not None else "? (estimate after the warm-up)"
            return f"{head}: {self._done}/{self.w.warmup_requests} requests, {self._errors} errors, ETA {eta}"
        if self.w.duration_s is not None:
            spent = min(self.w.duration_s, time.monotonic() - self._phase_started)
            done = f"{spent:.0f}/{self.w.duration_s:g} s, {self._done} requests"
        else:
            done = f"{self._done}/{self._measured()} requests"
        return f"{head}: {done}, {self._errors} errors, ETA {duration_text(self._eta_s())}"

    def _show(self, force: bool = False) -> None:
        with self._lock:
            if self._level is None or self._phase == "stored":
                return
            text = self._state()
            due = force or time.monotonic() - self._last_line >= self.every_s
        if self.plain is not None:
            if due:
                self._line(text)
            return
        self._bar_update(text)

    def _bar_update(self, text: str) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        if self.progress is None:
            self.progress = Progress(
                TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=self.console, transient=True
            )
            self._bar = self.progress.add_task(escape(text), total=None)
            self.progress.start()
        assert self._bar is not None
        with self._lock:
            if self._phase == "warm-up":
                total, done = self.w.warmup_requests, self._done
            elif self.w.duration_s is not None:
                total, done = (
                    int(self.w.duration_s),
                    int(min(self.w.duration_s, time.monotonic() - self._phase_started)),
                )
            else:
                total, done = self._measured(), self._done
        self.progress.update(self._bar, description=escape(text), total=total, completed=done)
