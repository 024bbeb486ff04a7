"""Signals and children for the commands that measure (`run`, `nightly`): graceful stops, nothing left behind.

``measuring(settings)`` wraps such a command:

- SIGINT, SIGTERM and SIGHUP go to ``tasks.shutdown.on_signal`` (the first stops the run in progress gracefully
  and keeps what finished; see that module), and the previous handlers come back afterwards;
- leftovers of crashed earlier runs are reclaimed, by proof (``tasks.procs``), and reported on stderr;
- the processes this command starts are guarded: they die with it, whatever kills it.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

from rich.markup import escape

from tcobench.settings import Settings
from tcobench.tasks import procs, shutdown

from ._common import err

__all__ = ["SIGNALS", "measuring"]

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _handler(signum: int, frame: FrameType | None) -> None:
    shutdown.on_signal(signum)


@contextlib.contextmanager
def measuring(settings: Settings) -> Iterator[procs.Guard]:
    """Graceful signals, reclaimed leftovers and a guard for this command's children (see the module doc)."""
    shutdown.reset()
    shutdown.configure(settings.stop_grace_s)
    previous = {sig: signal.signal(sig, _handler) for sig in SIGNALS}
    guard: procs.Guard | None = None
    try:
        guard, reclaimed = procs.open_guard(settings.state_dir)
        for line in reclaimed:
            err.print(f"[yellow]reclaimed a leftover of a crashed run:[/] {escape(line)}", highlight=False)
        yield guard
    finally:
        if guard is not None:
            guard.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
