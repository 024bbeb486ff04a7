"""tolerate_damage: a read command that fails on a data file DuckDB cannot decode leaves the file out and answers.

Damage that keeps a file's size is found before reading by the file's checksum (``tasks.store.checksums``). A file with
no checksum (a store of tcobench < 0.3) is found only when a query trips over it: then every such file is decoded,
those that fail are left out (with the damaged-file warning naming each and `tcobench store verify --repair`), and
the command runs once more. A DuckDB error that still escapes becomes one StoreError line, never a traceback; so
does a damaged catalog (``lake.check_catalog``: the line names the file and `tcobench store verify`).
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, TypeVar

import duckdb

from tcobench.cli._common import settings_for
from tcobench.errors import StoreError, causes

__all__ = ["tolerate_damage"]

F = TypeVar("F")
_NOT_DATA = (duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException, duckdb.InterruptException)


def _duckdb_cause(exc: BaseException) -> duckdb.Error | None:
    """The DuckDB error that caused ``exc`` (itself, its cause or its context), unless it is about the SQL."""
    for seen in itertools.islice(causes(exc), 4):
        if isinstance(seen, duckdb.Error):
            return None if isinstance(seen, _NOT_DATA) else seen
    return None


def tolerate_damage(fn: F) -> F:
    """Wrap a read command (module docstring); the command takes its store as the ``store`` option."""

    @functools.wraps(fn)  # type: ignore[arg-type]
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)  # type: ignore[operator]
        except Exception as exc:
            cause = _duckdb_cause(exc)
            if cause is None or isinstance(exc, StoreError):  # a StoreError is one line already (a damaged catalog)
                raise
            from tcobench.tasks.store.checksums import find_undecodable
            from tcobench.tasks.store.lake import check_catalog, one_line
            from tcobench.tasks.store.store import open_store

            location = open_store(settings_for(kwargs.get("store")).store).location
            check_catalog(location, cause)
            try:
                undecodable = find_undecodable(location)
            except duckdb.Error as again:
                check_catalog(location, again)
                raise StoreError(
                    f"cannot read store {location}: {one_line(again)[:300]} (`tcobench store verify` checks every file)"
                ) from exc
            if not undecodable:
                if isinstance(exc, duckdb.Error):
                    raise StoreError(
                        f"cannot read store {location}: {one_line(exc)[:300]} (`tcobench store "
                        "verify` checks every data file)"
                    ) from exc
                raise
        try:
            return fn(*args, **kwargs)  # type: ignore[operator]
        except duckdb.Error as exc:
            from tcobench.tasks.store.lake import one_line

            raise StoreError(
                f"cannot read the store: {one_line(exc)[:300]} (`tcobench store verify` checks every data file)"
            ) from exc

    return wrapper  # type: ignore[return-value]
