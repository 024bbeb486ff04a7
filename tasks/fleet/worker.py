"""run_worker: ``tcobench worker --host NAME``, a thin supervisor of ``prefect worker start`` on one host's queue.

    work pool  (type process, default tcobench-fleet)
      queue NAME      <- tcobench worker --host NAME   (one per GPU host; its runs execute on that host)
      queue control   <- tcobench worker --control     (the nightly flow's own deployment)

Design notes: docs/dev/architecture/flows-and-fleet.md#tasks-fleet-worker.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType

from tcobench.errors import ConfigError, ExitCode
from tcobench.schemas import CONTROL_QUEUE
from tcobench.settings import child_environment, current, prefect_api_url
from tcobench.tasks.fleet.gather import worker_name

__all__ = [
    "WORKER_HOST_ENV",
    "WorkerSpec",
    "check_worker_host",
    "die_with_parent",
    "ensure_pool",
    "ensure_queues",
    "run_worker",
    "worker_command",
    "worker_environment",
]

WORKER_HOST_ENV = "TCOBENCH_WORKER_HOST"
_PR_SET_PDEATHSIG = 1
_RESTART_WINDOW_S = 600.0
_MAX_RESTARTS = 5  # within the window; then the worker gives up and exits 1


@dataclass(frozen=True)
class WorkerSpec:
    queue: str  # a host name, or CONTROL_QUEUE
    pool: str = "tcobench-fleet"
    limit: int = 1  # runs at a time: one host run (one engine per GPU) at a time
    heartbeat_s: int | None = None  # PREFECT_WORKER_HEARTBEAT_SECONDS (Prefect's default 30)
    poll_s: float | None = None  # PREFECT_WORKER_QUERY_SECONDS (Prefect's default 10)
    allow_root: bool = False

    @property
    def name(self) -> str:
        return worker_name(self.queue)


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Have the kernel send ``sig`` to this process when its parent dies (Linux; a no-op elsewhere).

    A host's run is a child process of Prefect's worker: if the worker dies (killed, host shutting down), the
    run must not go on measuring unsupervised. SIGTERM makes Prefect's engine mark the run crashed and run
    every ``finally`` (engines stopped, containers removed).
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
    if os.getppid() == 1:  # the parent died before the call
        os.kill(os.getpid(), sig)


def check_worker_host(host: str) -> None:
    """A host's run must execute on that host: refuse when this worker serves another one."""
    serving = current().worker_host
    if serving is not None and serving != host:
        raise ConfigError(
            f"this run is for host {host!r} but the worker that picked it up serves {serving!r}; "
            f"each host's worker must poll only its own work queue"
        )


def _client() -> object:
    from prefect.client.orchestration import get_client

    return get_client(sync_client=True)


def ensure_pool(pool: str) -> None:
    """The work pool exists (type process); created with Prefect's default process job template if not."""
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
    from prefect.workers.process import ProcessWorker

    with _client() as client:  # type: ignore[attr-defined]
        try:
            found = client.read_work_pool(pool)
        except ObjectNotFound:
            template = ProcessWorker.get_default_base_job_template()
            with contextlib.suppress(ObjectAlreadyExists):  # created meanwhile by another host's worker
                client.create_work_pool(WorkPoolCreate(name=pool, type="process", base_job_template=template))
            return
    if found.type != "process":
        raise ConfigError(f"work pool {pool!r} is of type {found.type!r}; tcobench's fleet needs a 'process' pool")


def ensure_queues(pool: str, queues: list[str]) -> None:
    """Each queue exists in the pool (a run sent to a missing queue would be refused)."""
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    with _client() as client:  # type: ignore[attr-defined]
        for queue in queues:
            try:
                client.read_work_queue_by_name(queue, work_pool_name=pool)
            except ObjectNotFound:
                with contextlib.suppress(ObjectAlreadyExists):
                    client.create_work_queue(name=queue, work_pool_name=pool)


def worker_command(spec: WorkerSpec) -> list[str]:
    return [
        sys.executable,
        "-m",
        "prefect",
        "worker",
        "start",
        "--pool",
        spec.pool,
        "--work-queue",
        spec.queue,
        "--name",
        spec.name,
        "--type",
        "process",
        "--limit",
        str(spec.limit),
    ]


def worker_environment(spec: WorkerSpec, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a worker process: this one's (or ``base``), with Prefect's client defaults where unset and
    the host it serves."""
    defaults = {
        "PREFECT_CLIENT_MAX_RETRIES": "8",  # about 4 min of backoff: survives a server restart
        # and a 500 is retried like a 503: Prefect's server answers 500 to every call while its database cannot be
        # reached (a refused connection is not among the errors it maps to 503), and a worker whose calls keep
        # failing exits, taking its run with it (docs/reliability.md, "Central services")
        "PREFECT_CLIENT_RETRY_EXTRA_CODES": "500",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }
    env = child_environment(base, defaults=defaults)
    if spec.queue != CONTROL_QUEUE:
        env[WORKER_HOST_ENV] = spec.queue
        env["TCOBENCH_HOST_NAME"] = spec.queue
    if spec.heartbeat_s is not None:
        env["PREFECT_WORKER_HEARTBEAT_SECONDS"] = str(spec.heartbeat_s)
    if spec.poll_s is not None:
        env["PREFECT_WORKER_QUERY_SECONDS"] = f"{spec.poll_s:g}"
    return env


def _preflight(spec: WorkerSpec) -> None:
    if os.geteuid() == 0 and not spec.allow_root:
        raise ConfigError(
            "tcobench worker is running as root; run it as an unprivileged user that may use Docker "
            "(the docker group; `tcobench docs fleet`), or pass --allow-root"
        )
    if not prefect_api_url():
        raise ConfigError(
            "tcobench worker needs the fleet's Prefect server: set PREFECT_API_URL (e.g. "
            "http://prefect.example.internal:4200/api) and PREFECT_API_AUTH_STRING"
        )
    try:
        ensure_pool(spec.pool)
        ensure_queues(spec.pool, [spec.queue])
    except ConfigError:
        raise
    except Exception as exc:  # unreachable server, refused credentials: one line, not a traceback
        raise ConfigError(
            f"cannot prepare work pool {spec.pool!r} on the Prefect server at "
            f"{prefect_api_url()}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        ) from exc


def _pdeathsig_preexec() -> None:  # runs in the child between fork and exec
    die_with_parent()


def run_worker(spec: WorkerSpec, say: Callable[[str], None] = lambda message: None) -> int:
    """Run Prefect's worker for ``spec`` until SIGTERM/SIGINT; the exit status (143 / 130, or 1 on give-up)."""
    _preflight(spec)
    stop: list[int] = []
    child: list[subprocess.Popen[bytes]] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.append(signum)
        if child and child[0].poll() is None:
            child[0].send_signal(signal.SIGTERM if signum != signal.SIGINT else signal.SIGINT)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    restarts: list[float] = []
    try:
        while True:
            say(f"worker {spec.name}: pool {spec.pool!r}, work queue {spec.queue!r}")
            child[:] = [
                subprocess.Popen(worker_command(spec), env=worker_environment(spec), preexec_fn=_pdeathsig_preexec)
            ]
            code = child[0].wait()
            if stop:
                return int(ExitCode.interrupted if stop[0] == signal.SIGINT else ExitCode.terminated)
            now = time.monotonic()
            restarts = [t for t in restarts if now - t < _RESTART_WINDOW_S] + [now]
            if len(restarts) > _MAX_RESTARTS:
                say(
                    f"Prefect's worker exited {len(restarts)} times in {_RESTART_WINDOW_S:g} s (last status {code}); "
                    "giving up"
                )
                return int(ExitCode.error)
            delay = min(60.0, 2.0 ** len(restarts))
            say(f"Prefect's worker exited with status {code}; restarting in {delay:g} s")
            time.sleep(delay)
            if stop:
                return int(ExitCode.interrupted if stop[0] == signal.SIGINT else ExitCode.terminated)
    finally:
        if child and child[0].poll() is None:
            child[0].terminate()
            try:
                child[0].wait(timeout=30)
            except subprocess.TimeoutExpired:
                child[0].kill()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
