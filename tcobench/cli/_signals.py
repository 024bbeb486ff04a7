"""Signals and children for the commands that measure (`run`, `nightly`): graceful stops, nothing left behind.

``measuring(settings)`` wraps such a command:

- SIGINT, SIGTERM and SIGHUP go to ``tasks.load.shutdown`` (the first stops the run in progress gracefully and keeps
  what finished; see that module), and the previous handlers come back afterwards; a ``Stop`` becomes the one
  ``Interrupted`` line;
- leftovers of crashed earlier runs are reclaimed, by proof (``tasks.host.procs``), and reported on stderr;
- the processes this command starts are guarded: they die with it, whatever kills it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from rich.markup import escape

from tcobench.cli._common import err
from tcobench.settings import Settings
from tcobench.tasks.host import procs
from tcobench.tasks.load import shutdown

__all__ = ["measuring"]


def _notice(text: str) -> None:
    """One line on stderr from the signal handler: a raw write (the main thread may be inside a buffered write to
    stderr, which a print from here would break with a reentrant-call error)."""
    with contextlib.suppress(OSError, ValueError):
        os.write(sys.stderr.fileno(), f"tcobench: {text}\n".encode(errors="replace"))


@contextlib.contextmanager
def measuring(settings: Settings) -> Iterator[procs.Guard]:
    """Graceful signals, reclaimed leftovers and a guard for this command's children (see the module doc)."""
    shutdown.configure(settings.stop_grace_s)
    with shutdown.handling_signals(_notice):
        guard, reclaimed = procs.open_guard(settings.state_dir)
        try:
            for line in reclaimed:
                err.print(f"[yellow]reclaimed a leftover of a crashed run:[/] {escape(line)}", highlight=False)
            if guard.warning:
                err.print(f"[yellow]warning:[/] {escape(guard.warning)}", highlight=False)
            yield guard
        except shutdown.Stop as stop:
            raise stop.error() from None
        finally:
            guard.close()
