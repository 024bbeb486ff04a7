"""How long a read-only query may run, and how a signal ends it: one line, the documented exit status.

``QueryBounds(timeout_s)`` wraps preparing the views and running the statement (`tcobench query`):

- the timeout counts from entering; when it passes, the connection given to ``watch`` is interrupted (DuckDB's
  ``interrupt``, from a timer thread) and the command ends with ``QueryError: ... over S s``; a connection
  watched after it passed is not queried at all. None or 0: no timeout.
- SIGINT, SIGTERM and SIGHUP raise ``Interrupted`` (exit 130, 143, 129). DuckDB checks for signals while it
  executes: the handler runs there, and DuckDB stops the query with its own error, which leaving the block turns
  into the same ``Interrupted``. The previous handlers come back on leaving.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

import duckdb

from tcobench.errors import ExitCode, Interrupted, QueryError

__all__ = ["QueryBounds"]

_SIGNALS = {signal.SIGINT: ExitCode.interrupted, signal.SIGTERM: ExitCode.terminated, signal.SIGHUP: ExitCode.hangup}


class QueryBounds:
    """A timeout and the stop signals for one query (see the module doc)."""

    def __init__(self, timeout_s: float | None) -> None:
        self.timeout_s = timeout_s or None
        self.expired = False
        self.signum: int | None = None
        self._con: duckdb.DuckDBPyConnection | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._previous: dict[int, Any] = {}

    def _interrupted(self) -> Interrupted:
        name = signal.Signals(self.signum or signal.SIGINT).name
        return Interrupted(f"query stopped by {name}", _SIGNALS[signal.Signals(self.signum or signal.SIGINT)])

    def _timed_out(self) -> QueryError:
        return QueryError(f"stopped: the query ran over {self.timeout_s:g} s (--timeout S; 0 for none)")

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.signum = signum
        con = self._con  # no lock: a handler runs between two bytecodes of a thread that may hold it
        if con is not None:
            con.interrupt()  # else DuckDB's query runs on, and closing the connection waits for it
        raise self._interrupted()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            if self._con is not None:
                self._con.interrupt()

    def watch(self, con: duckdb.DuckDBPyConnection) -> None:
        """The connection the timeout interrupts; QueryError at once when the timeout already passed, Interrupted
        when a signal came while the views were prepared (code that reads around a failing DuckDB call may have
        caught the error DuckDB raised for it)."""
        if self.signum is not None:
            raise self._interrupted()
        with self._lock:
            if self.expired:
                raise self._timed_out()
            self._con = con

    def __enter__(self) -> QueryBounds:
        if threading.current_thread() is threading.main_thread():
            for signum in _SIGNALS:
                self._previous[signum] = signal.signal(signum, self._on_signal)
        if self.timeout_s is not None:
            self._timer = threading.Timer(self.timeout_s, self._expire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        with self._lock:
            self._con = None
        if exc is None or isinstance(exc, Interrupted):
            return
        if self.signum is not None:  # DuckDB's own error for a query a signal stopped
            raise self._interrupted() from None
        if self.expired and isinstance(exc, duckdb.InterruptException | QueryError | RuntimeError):
            raise self._timed_out() from None
