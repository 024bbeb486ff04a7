"""The stop-request policy behind SIGINT/SIGTERM/SIGHUP (tasks.load.shutdown), called as the signal handler calls it;
tests/faults/test_signals.py sends real signals to a real `tcobench run`."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Iterator

import duckdb
import pytest

from tcobench.errors import ExitCode, Interrupted
from tcobench.tasks.load import shutdown


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    shutdown.reset()
    yield
    shutdown.reset()


def test_outside_a_measurement_a_signal_stops_at_once() -> None:
    with pytest.raises(shutdown.Stop) as info:
        shutdown.on_signal(signal.SIGTERM)
    assert not isinstance(info.value, Exception)  # passes through libraries' `except Exception`
    error = info.value.error()
    assert isinstance(error, Interrupted) and error.exit_code is ExitCode.terminated
    assert str(error).startswith("SIGTERM: stopped at once")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_exit_status_is_128_plus_the_signal(signum: int, code: int) -> None:
    with shutdown.deferred():
        shutdown.on_signal(signum)
    request = shutdown.stop_requested()
    assert request is not None and request.exit_code == code == 128 + signum
    with pytest.raises(Interrupted) as info:
        shutdown.check_stop()
    assert info.value.exit_code == code


def test_listeners_hear_the_first_signal_then_hurry_and_the_third_stops_at_once() -> None:
    heard: list[tuple[str, bool]] = []
    unlisten = shutdown.listen(lambda reason, hurry: heard.append((reason, hurry)))
    shutdown.on_signal(signal.SIGINT)
    shutdown.on_signal(signal.SIGTERM)  # the first signal names the stop
    assert heard == [("interrupted by SIGINT", False), ("interrupted by SIGINT", True)]
    with pytest.raises(shutdown.Stop):
        shutdown.on_signal(signal.SIGINT)
    unlisten()
    shutdown.reset()
    with pytest.raises(shutdown.Stop):  # nobody listens any more
        shutdown.on_signal(signal.SIGINT)


def test_a_late_listener_hears_a_pending_stop() -> None:
    with shutdown.deferred():
        shutdown.on_signal(signal.SIGHUP)
    heard: list[str] = []
    shutdown.listen(lambda reason, hurry: heard.append(reason))
    assert heard == ["interrupted by SIGHUP"]


def test_deferred_sections_take_sigterm_back_from_whoever_replaced_it() -> None:
    def foreign(signum: int, frame: object) -> None:  # as Prefect's flow engine installs during a flow run
        raise AssertionError("not ours")

    with shutdown.handling_signals():
        assert signal.getsignal(signal.SIGTERM) is shutdown.handle
        signal.signal(signal.SIGTERM, foreign)
        with shutdown.deferred():
            assert signal.getsignal(signal.SIGTERM) is shutdown.handle
        assert signal.getsignal(signal.SIGTERM) is foreign
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_the_user_is_told_what_a_graceful_stop_does_and_nothing_when_it_stops_at_once() -> None:
    told: list[str] = []
    shutdown.configure(5.0)
    with shutdown.handling_signals(told.append):
        unlisten = shutdown.listen(lambda reason, hurry: None)
        shutdown.on_signal(signal.SIGINT)
        shutdown.on_signal(signal.SIGINT)
        with pytest.raises(shutdown.Stop):
            shutdown.on_signal(signal.SIGINT)
        unlisten()
    assert told == [
        "SIGINT: stopping; nothing more is sent, requests in flight get 5 s to finish, then what finished is "
        "stored (signal again to stop waiting, a third time to stop at once)",
        "SIGINT: no more waiting for requests in flight; what finished is stored (once more to stop at once)",
    ]
    shutdown.reset()
    with shutdown.handling_signals(told.append), pytest.raises(shutdown.Stop):
        shutdown.on_signal(signal.SIGTERM)  # nothing to wait for: stopped at once, the Interrupted line says so
    assert len(told) == 2


class Termination(BaseException):
    """What Prefect's SIGTERM handler raises in a worker's flow run (``TerminationSignal``), as a stand-in."""


def _raise_termination(signum: int, frame: object) -> None:
    raise Termination(signum)


def interrupted_query() -> RuntimeError:
    """A real DuckDB query broken off by a real SIGTERM whose handler raises: the error DuckDB raises."""
    previous = signal.signal(signal.SIGTERM, _raise_termination)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
    con = duckdb.connect()
    try:
        timer.start()
        with pytest.raises(RuntimeError) as info:
            con.sql("select count(*) from range(10000000000000)").fetchall()  # hours: only the signal ends it
        return info.value
    finally:
        timer.cancel()
        signal.signal(signal.SIGTERM, previous)
        con.close()


def test_a_query_a_signal_broke_off_gives_back_the_handlers_exception() -> None:
    error = interrupted_query()
    assert "interrupted" in str(error).lower()
    assert isinstance(shutdown.raised_by_a_signal(error), Termination)
    try:
        raise ValueError("store failed") from error  # wrapped once more by the caller
    except ValueError as outer:
        assert isinstance(shutdown.raised_by_a_signal(outer), Termination)


def test_ordinary_errors_are_not_taken_for_a_signal() -> None:
    assert shutdown.raised_by_a_signal(RuntimeError("boom")) is None
    try:
        try:
            raise asyncio.CancelledError()
        except asyncio.CancelledError:
            raise TimeoutError("read timed out")  # noqa: B904 - the implicit context is what is tested
    except TimeoutError as timeout:
        assert isinstance(timeout.__context__, asyncio.CancelledError)
        assert shutdown.raised_by_a_signal(timeout) is None
    looped = RuntimeError("a")
    looped.__context__ = RuntimeError("b")
    looped.__context__.__context__ = looped
    assert shutdown.raised_by_a_signal(looped) is None
