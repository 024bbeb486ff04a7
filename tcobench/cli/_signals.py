"""Signals and children for the commands that measure (`run`, `nightly`): graceful stops, nothing left behind.

``measuring(settings)`` wraps such a command:

- SIGINT, SIGTERM and SIGHUP go to ``tasks.load.shutdown`` (the first stops the run in progress gracefully and keeps
  what finished; see that module), and the previous handlers come back afterwards; a ``Stop`` becomes the one
  ``Interrupted`` line;
- leftovers of crashed earlier runs are reclaimed, by proof (``tasks.host.procs``), and reported on stderr;
- the processes this command starts are guarded: they die with it, whatever kills it.

``exit_interrupted`` ends such a command once a signal's stop is complete (what finished stored, the summary and the
one line printed): the process exits at once, without the interpreter's exit work.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import NoReturn

from rich.markup import escape

from tcobench.cli._common import err, print_error
from tcobench.errors import Interrupted
from tcobench.settings import Settings
from tcobench.tasks.host import procs
from tcobench.tasks.load import shutdown

__all__ = ["exit_interrupted", "measuring"]


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


def exit_interrupted(exc: Interrupted, server: int | None) -> NoReturn:
    """After a signal, once the kept runs are stored (and summarised) and the children are stopped (``measuring``
    has ended): the one line, then exit at once. The interpreter's exit work (modules, DuckDB's and Arrow's memory,
    thread joins; seconds on a loaded machine) and Prefect's (its in-process server takes seconds to stop:
    docs/dev/performance.md#prefect-server-stop; its flow run has already ended) would only delay the exit the user
    asked for (docs/run-behaviour.md#interrupts-ctrl-c-sigterm-sighup). ``server``: the pid of Prefect's in-process
    API server, told to stop now (it dies with this process in any case: a death signal). Not for a command that
    talks to a Prefect server of its own (PREFECT_API_URL): Prefect's exit work sends that server its last logs."""
    print_error(exc.kind, escape(str(exc)))
    if server is not None:
        with contextlib.suppress(OSError):
            os.kill(server, signal.SIGTERM)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(int(exc.exit_code))
