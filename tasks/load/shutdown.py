"""Stop requests: a signal asks the work in progress to stop, and what is finished to be kept.

The command line sends SIGINT, SIGTERM and SIGHUP to ``on_signal`` (``tcobench/cli/_signals.py``):

Design notes: docs/dev/architecture/load.md#tasks-shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

from tcobench.errors import ExitCode, Interrupted, TcobenchError, causes

__all__ = [
    "Listener",
    "Stop",
    "StopRequest",
    "abort",
    "check_stop",
    "configure",
    "deferred",
    "grace_s",
    "handle",
    "handling_signals",
    "raised_by_a_signal",
    "listen",
    "listening",
    "on_signal",
    "reset",
    "stop_requested",
]

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_EXIT = {signal.SIGINT: ExitCode.interrupted, signal.SIGTERM: ExitCode.terminated, signal.SIGHUP: ExitCode.hangup}

Listener = Callable[[str, bool], None]  # (reason, hurry: end the grace period now)


@dataclass(frozen=True)
class StopRequest:
    """Which signal asked to stop."""

    signum: int

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def reason(self) -> str:
        return f"interrupted by {self.name}"

    @property
    def exit_code(self) -> ExitCode:
        return _EXIT.get(signal.Signals(self.signum), ExitCode.interrupted)

    def error(self, kept: str) -> Interrupted:
        """The Interrupted error for this signal, saying what was kept."""
        return Interrupted(f"{self.name}: {kept}", self.exit_code)


class Stop(BaseException):  # noqa: N818 - a control-flow signal like KeyboardInterrupt, not an error
    """A signal that must stop the work at once (see the module doc); ``error()`` is what the CLI reports."""

    def __init__(self, request: StopRequest) -> None:
        super().__init__(request.reason)
        self.request = request

    def error(self) -> Interrupted:
        return self.request.error("stopped at once; runs finished before it are stored")


class _State:
    request: StopRequest | None = None
    signals = 0
    listeners: tuple[Listener, ...] = ()
    deferring = 0
    lock = threading.Lock()  # for ``deferred`` only, never taken on the signal path
    grace_s = 5.0
    handling = False  # handling_signals() is active
    notice: Callable[[str], None] | None = None  # told what a graceful stop will do (handling_signals' caller)
    abort: TcobenchError | None = None  # a stop asked by tcobench itself (``abort``), raised at ``check_stop``


def configure(grace: float) -> None:
    """Seconds requests in flight may take to finish once a stop is requested (Settings.stop_grace_s)."""
    _State.grace_s = grace


def grace_s() -> float:
    return _State.grace_s


def on_signal(signum: int) -> None:
    """A signal arrived: ask to stop (see the module doc); raises Interrupted where nothing can stop gracefully."""
    _State.signals += 1
    if _State.request is None:
        _State.request = StopRequest(signum)
    request, hurry = _State.request, _State.signals > 1
    for listener in _State.listeners:
        listener(request.reason, hurry)
    if _State.signals >= 3 or not (_State.listeners or _State.deferring):
        raise Stop(request)
    if _State.notice is not None:
        _State.notice(_notice(signal.Signals(signum).name, _State.signals))


def _notice(name: str, count: int) -> str:
    """What a graceful stop does now, for the user who sent the signal."""
    if count == 1:
        wait = f"requests in flight get {_State.grace_s:g} s to finish"
        return (
            f"{name}: stopping; nothing more is sent, {wait}, then what finished is stored (signal again to "
            "stop waiting, a third time to stop at once)"
        )
    return f"{name}: no more waiting for requests in flight; what finished is stored (once more to stop at once)"


def handle(signum: int, frame: FrameType | None) -> None:
    """The signal handler: ``on_signal``."""
    on_signal(signum)


@contextlib.contextmanager
def handling_signals(notice: Callable[[str], None] | None = None) -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP go to ``handle`` (main thread only); the previous handlers come back after.

    ``notice`` is told, from the signal handler, what a graceful stop does (it must not take locks: write to a
    file descriptor, not to a buffered stream the main thread may be writing to)."""
    reset()
    previous = {sig: signal.signal(sig, handle) for sig in SIGNALS}
    _State.handling = True
    _State.notice = notice
    try:
        yield
    finally:
        _State.handling = False
        _State.notice = None
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _reclaim_sigterm() -> Any:
    """Put ``handle`` back on SIGTERM if someone (Prefect's flow engine) replaced it; the replaced handler."""
    if not _State.handling or threading.current_thread() is not threading.main_thread():
        return None
    current = signal.getsignal(signal.SIGTERM)
    return None if current is handle else signal.signal(signal.SIGTERM, handle)


def raised_by_a_signal(exc: BaseException) -> BaseException | None:
    """The exception a signal handler raised, where a library turned it into an error of its own; else None.

    A handler raises where the main thread is: inside a DuckDB query that exception becomes the query's
    ``RuntimeError("Query interrupted")``, with the handler's exception as its cause. Caught as an ``Exception``,
    the signal would be lost (a night's host recorded the cell as failed and went on to its next cell), so the
    handler's exception is what the catcher raises again. Only what a signal handler raises counts: a
    ``BaseException`` that is not an ``Exception`` (``Stop``, ``KeyboardInterrupt``, Prefect's
    ``TerminationSignal``), save asyncio's ``CancelledError`` and ``GeneratorExit``, which are the context of
    ordinary errors (a timeout raised while a task was cancelled).
    """
    return next((e for e in causes(exc) if not isinstance(e, (Exception, asyncio.CancelledError, GeneratorExit))), None)


def stop_requested() -> StopRequest | None:
    return _State.request


def listen(listener: Listener) -> Callable[[], None]:
    """Call ``listener(reason, hurry)`` on each stop request (at once if one is pending); returns the way to stop
    listening."""
    _State.listeners = (*_State.listeners, listener)
    if _State.request is not None:
        listener(_State.request.reason, _State.signals > 1)

    def unlisten() -> None:
        _State.listeners = tuple(x for x in _State.listeners if x is not listener)

    return unlisten


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """``listen`` for the ``with`` block. Inside ``deferred`` only: a listener makes a signal graceful (see
    ``on_signal``)."""
    unlisten = listen(listener)
    try:
        yield
    finally:
        unlisten()


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A section that honours a stop request at its next ``check_stop`` instead of being broken off."""
    replaced = _reclaim_sigterm()
    with _State.lock:
        _State.deferring += 1
    try:
        yield
    finally:
        with _State.lock:
            _State.deferring -= 1
        if replaced is not None:
            signal.signal(signal.SIGTERM, replaced)


def abort(error: TcobenchError) -> None:
    """Stop the measurement in progress as a second signal would (nothing more is sent, no grace for requests in
    flight), from any thread, and end the batch with ``error`` at the next ``check_stop`` (a run too long to start
    without ``--yes``)."""
    _State.abort = error
    for listener in _State.listeners:
        listener(str(error), True)


def check_stop(kept: str = "the run in progress is stored as interrupted") -> None:
    """Raise ``Interrupted`` if a signal asked to stop (the ``abort`` error if tcobench asked)."""
    if _State.abort is not None:
        raise _State.abort
    if _State.request is not None:
        raise _State.request.error(kept)


def reset() -> None:
    """Forget past stop requests (a new command in the same process; tests)."""
    _State.request = None
    _State.abort = None
    _State.signals = 0
    _State.listeners = ()
