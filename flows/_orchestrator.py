"""Prefect's ``flow``/``task`` decorators, or plain pass-through ones when Prefect is switched off.

Prefect off (``Settings.prefect``: ``TCOBENCH_PREFECT=off``, ``tcobench run --no-prefect``) runs the very same wiring
as plain function calls: no Prefect import and no in-process API server (both take seconds:
docs/dev/performance.md#prefect-import), for quick local runs and for hosts where Prefect is not installed. Default:
Prefect on.

The switch is decided once per process, before the first flow module is imported (the decorators apply then): a
command passes its ``Settings`` to ``use_settings``; a process that imports the flows without it (a Prefect worker's
flow run) reads this process's ``Settings()``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import subprocess
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar, cast

from tcobench.settings import Settings, current
from tcobench.tasks.host.procs import spawn_options
from tcobench.tasks.redact import redact, redact_text

__all__ = [
    "flow",
    "in_process_settings",
    "inline",
    "prefect_enabled",
    "run_log",
    "start_api_server",
    "task",
    "use_settings",
]

F = TypeVar("F", bound=Callable[..., Any])

_switch: dict[str, bool] = {}  # "prefect": this process's decision, once made


def use_settings(settings: Settings) -> None:
    """Decide Prefect on or off for this process from ``settings`` (a command's, its flags applied); call it before
    importing a flow module. Decorators already applied keep what they were decided with."""
    _switch["prefect"] = settings.prefect


def prefect_enabled() -> bool:
    """Whether the flows run with Prefect: as ``use_settings`` decided, else this process's ``Settings()``."""
    if "prefect" not in _switch:
        _switch["prefect"] = current().prefect
    return _switch["prefect"]


class _PlainTask:
    """Stand-in for a Prefect task with Prefect off: a call runs inline, ``submit`` runs in a thread."""

    _pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="tcobench-task")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def submit(self, *args: Any, **kwargs: Any) -> Future[Any]:
        return self._pool.submit(self.fn, *args, **kwargs)


def task(fn: F, name: str) -> F:
    """A Prefect task (no caching: our inputs are live handles) or a plain stand-in with ``submit``."""
    if not prefect_enabled():
        return _PlainTask(fn)  # type: ignore[return-value]
    from prefect import task as prefect_task
    from prefect.cache_policies import NONE

    return cast(F, prefect_task(name=name, cache_policy=NONE)(fn))


def flow(name: str) -> Callable[[F], F]:
    """A Prefect flow decorator or the identity."""
    if not prefect_enabled():
        return lambda fn: fn
    from prefect import flow as prefect_flow

    def decorate(fn: F) -> F:
        made = prefect_flow(name=name, validate_parameters=False)(fn)
        serialize = made.serialize_parameters
        # what Prefect stores of a flow run's parameters, secrets masked (tasks.redact); the call gets them whole
        made.serialize_parameters = lambda parameters: redact(serialize(parameters))  # type: ignore[method-assign]
        return cast(F, made)

    return decorate


def inline(fn: F) -> F:
    """A flow's own function, to run as part of the flow or task run that calls it, with no flow run of its own
    (its tasks are then task runs of the caller's run); the function itself when Prefect is off.

    A nightly runs the benchmark flow once per cell: as a subflow each cell cost its own flow run (Prefect server and
    caller CPU: docs/dev/performance.md#subflow-cost) and about a second of wall time (Prefect joins the run's heartbeat
    thread, which sleeps in one-second steps, as the run ends)."""
    return cast(F, getattr(fn, "fn", fn))


def run_log() -> Callable[[str], None]:
    """Write a line to the log of the Prefect flow or task run in progress (its logger's INFO); outside one (or with
    Prefect off), to the ``tcobench`` logger."""
    if prefect_enabled():
        from prefect import get_run_logger
        from prefect.exceptions import MissingContextError

        try:
            write: Callable[[str], None] = get_run_logger().info
        except MissingContextError:
            write = logging.getLogger("tcobench").info
    else:
        write = logging.getLogger("tcobench").info
    return lambda line: write(redact_text(line))  # a line may quote a command or URL: secrets masked


class _SubprocessWith:
    """The ``subprocess`` module as one module sees it while Prefect starts its server: ``Popen`` gets our options."""

    def __init__(self, options: dict[str, Any]) -> None:
        self._options = options

    def Popen(self, *args: Any, **kwargs: Any) -> subprocess.Popen[Any]:  # noqa: N802 - subprocess's own name
        return subprocess.Popen(*args, **{**self._options, **kwargs})

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)


def start_api_server() -> int | None:
    """Start Prefect's in-process (ephemeral) API server now and return its pid; None when Prefect is off or
    talks to a configured server (PREFECT_API_URL).

    Prefect starts this server by itself on first use (``SubprocessASGIServer``, a singleton its client looks up;
    a ``python -m uvicorn ... prefect.server.api.server:create_app`` child in tcobench's process group, stopped by
    ``atexit``). Started here instead, from the main thread, it gets the options of ``tasks.host.procs.spawn_options``:
    its own session (the terminal's Ctrl-C reaches tcobench, which still needs the server to store the
    interrupted run, not the server) and a death signal (it dies with tcobench, even on SIGKILL). Should a Prefect
    release move these internals, Prefect starts the server itself as before.
    """
    if not prefect_enabled():
        return None
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():
        return None
    from prefect.server.api import server as api_server

    server_class = getattr(api_server, "SubprocessASGIServer", None)
    if server_class is None or not hasattr(api_server, "subprocess"):  # pragma: no cover - another Prefect release
        return None
    server = server_class()  # the instance Prefect's client will find (no port given: the same singleton key)
    if not server.running:
        real = api_server.subprocess
        api_server.subprocess = _SubprocessWith(spawn_options())
        try:
            server.start()
        finally:
            api_server.subprocess = real
    process = getattr(server, "server_process", None)
    return int(process.pid) if process is not None else None


def in_process_settings(server: int | None) -> contextlib.AbstractContextManager[Any]:
    """Prefect's settings for the flow runs of a command whose API server is its own in-process one (``server``, the
    pid ``start_api_server`` returned; None: another server, or Prefect off, and nothing changes): no flow-run
    heartbeats. A heartbeat tells a server that watches for crashed runs that the run lives; the in-process server
    dies with tcobench, so nobody watches. Prefect's heartbeat thread sleeps in 1 s steps and is joined as each flow
    run ends: up to a second of every run's end, and of the exit after a signal
    (docs/run-behaviour.md#interrupts-ctrl-c-sigterm-sighup)."""
    if server is None:
        return contextlib.nullcontext()
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    return temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})
