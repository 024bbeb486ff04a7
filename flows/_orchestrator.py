"""Prefect's ``flow``/``task`` decorators, or plain pass-through ones when Prefect is switched off.

``TCOBENCH_PREFECT=off`` (``tcobench run --no-prefect``) runs the very same wiring as plain function
calls: no Prefect import (6-7 s on 2 cores) and no in-process API server (20-30 s), for quick local
runs and for hosts where Prefect is not installed. Default: Prefect on.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["flow", "prefect_enabled", "task"]

F = TypeVar("F", bound=Callable[..., Any])


def prefect_enabled() -> bool:
    return os.environ.get("TCOBENCH_PREFECT", "on").strip().lower() not in ("off", "0", "false", "no")


def task(fn: F, name: str) -> F:
    """A Prefect task (no caching: our inputs are live handles) or the function itself."""
    if not prefect_enabled():
        return fn
    from prefect import task as prefect_task
    from prefect.cache_policies import NONE

    return prefect_task(fn, name=name, cache_policy=NONE)  # type: ignore[return-value]


def flow(name: str) -> Callable[[F], F]:
    """A Prefect flow decorator or the identity."""
    if not prefect_enabled():
        return lambda fn: fn
    from prefect import flow as prefect_flow

    return prefect_flow(name=name, validate_parameters=False)  # type: ignore[return-value]
