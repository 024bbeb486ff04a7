"""Prefect's ``flow``/``task`` decorators, or plain pass-through ones when Prefect is switched off.

``TCOBENCH_PREFECT=off`` (``tcobench run --no-prefect``) runs the very same wiring as plain function
calls: no Prefect import (6-7 s on 2 cores) and no in-process API server (20-30 s), for quick local
runs and for hosts where Prefect is not installed. Default: Prefect on.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar, cast

__all__ = ["flow", "prefect_enabled", "task"]

F = TypeVar("F", bound=Callable[..., Any])


def prefect_enabled() -> bool:
    return os.environ.get("TCOBENCH_PREFECT", "on").strip().lower() not in ("off", "0", "false", "no")


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

    return cast(Callable[[F], F], prefect_flow(name=name, validate_parameters=False))
