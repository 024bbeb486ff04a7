"""What every command module shares: the consoles, the error guard, settings, shared options, number formats.

Error policy (one place): a ``TcobenchError`` prints ``Kind: message`` on one line to stderr and exits with the
error's ``exit_code`` (``tcobench.errors.ExitCode``); usage errors (see ``main``) print ``UsageError: ...`` and
exit 2. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from tcobench.errors import ExitCode, TcobenchError
from tcobench.schemas.prices import PRICES_FLAG

if TYPE_CHECKING:
    from tcobench.settings import Settings

__all__ = [
    "store_parameter",
    "PartialThresholdOpt",
    "PricesOpt",
    "SnapshotOpt",
    "StoreOpt",
    "err",
    "fmt",
    "guard",
    "json_object",
    "num",
    "out",
    "prefect_defaults",
    "print_error",
    "print_json",
    "read_settings",
    "settings_for",
    "show_warnings",
    "usd",
]

out = Console()
err = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])

StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help=r"Results store: a folder, sqlite://FOLDER or postgresql://HOST/DB?data=s3://BUCKET/PREFIX "
        r"\[env TCOBENCH_STORE; default ~/.local/share/tcobench/store].",
    ),
]
SnapshotOpt = Annotated[
    int | None,
    typer.Option("--snapshot", help="Read the store as it was at this snapshot (`tcobench store snapshots`)."),
]
# --prices is declared on the field it sets (PricingConfig.table: PRICES_FLAG); every command that reads prices takes it
PricesOpt = Annotated[Path | None, typer.Option(*PRICES_FLAG.decls, help=PRICES_FLAG.help)]
PartialThresholdOpt = Annotated[
    float,
    typer.Option(
        min=0.0, max=1.0, help="Exit 4 when more than this share of a run's measured requests failed (0-1) [0.05]."
    ),
]


def print_error(kind: str, message: str) -> None:
    """``Kind: message`` on one line of stderr (newlines in the message folded)."""
    err.print(f"[bold red]{kind}[/]: " + " ".join(message.split()), highlight=False, soft_wrap=True, markup=True)


class _WarningLine(logging.Handler):
    """A warning of ours (``tcobench.*`` loggers, e.g. a damaged store file left out) as one line on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        from rich.markup import escape

        err.print(
            f"[yellow]warning[/]: {escape(' '.join(record.getMessage().split()))}", highlight=False, soft_wrap=True
        )


def show_warnings() -> None:
    """Print our loggers' warnings as single lines (once per process)."""
    logger = logging.getLogger("tcobench")
    if not any(isinstance(h, _WarningLine) for h in logger.handlers):
        handler = _WarningLine(logging.WARNING)
        logger.addHandler(handler)
        logger.propagate = False
        if logger.level == logging.NOTSET:  # ours print whatever the root's level (prefect_defaults raises it)
            logger.setLevel(logging.WARNING)


def guard(fn: F) -> F:
    """Our own errors become one line on stderr and the error's exit status; Ctrl-C (a KeyboardInterrupt out of the
    command) the one ``Interrupted`` line and exit 130; anything else is a bug. Caught here, not only in main: typer
    turns a KeyboardInterrupt out of a command into a silent exit 130 before main could see it."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TcobenchError as exc:
            from rich.markup import escape

            print_error(exc.kind, escape(str(exc)))
            raise typer.Exit(int(exc.exit_code)) from None
        except KeyboardInterrupt:
            print_error("Interrupted", "stopped by Ctrl-C")
            raise typer.Exit(int(ExitCode.interrupted)) from None

    return wrapper  # type: ignore[return-value]


def settings_for(store: str | None, no_prefect: bool = False) -> Settings:
    """Settings from the environment, with ``--store`` taking precedence and ``--no-prefect`` switching Prefect off."""
    from tcobench.settings import current

    update: dict[str, Any] = {"store": store} if store is not None else {}
    if no_prefect:
        update["prefect"] = False
    settings = current()
    return settings.model_copy(update=update) if update else settings


def read_settings(store: str | None) -> Settings:
    """``settings_for`` a command that reads the store: StoreError (exit 1) when the store's folder does not exist,
    naming where its path came from."""
    from tcobench.tasks.store.store import check_exists

    settings = settings_for(store)
    if store is not None:
        source = "given by --store"
    else:
        source = "from TCOBENCH_STORE" if "store" in settings.model_fields_set else "the default store"
    check_exists(settings.store, source)
    return settings


def prefect_defaults() -> None:
    """Quiet, patient defaults for Prefect's in-process (ephemeral) API server; the user's env wins."""
    from tcobench.settings import apply_prefect_defaults

    apply_prefect_defaults(
        {
            # Our errors reach the CLI as exceptions and print as one line; Prefect would log each with a traceback.
            "PREFECT_LOGGING_LEVEL": "CRITICAL",
            # Prefect's queue services (EventsWorker, APILogWorker) log on loggers named after their class, outside
            # the `prefect` tree, so they answer to the root logger's level (WARNING in Prefect's logging.yml): a
            # service still draining when the command fails printed "Still processing items" as a second line.
            # Our own warnings are not affected: the `tcobench` logger has its own handler (show_warnings).
            "PREFECT_LOGGING_ROOT_LEVEL": "CRITICAL",
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
            # The in-process API server's services log on `prefect.server`, whose level is this one: a command that
            # fails fast stops the server while task_run_recorder flushes, and its "Error flushing 1 events" (an
            # ERROR with a traceback) followed run's one-line EngineError in a CI preview.
            "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",  # no network here; avoids an error line
        }
    )


def print_json(document: Any, default: Callable[[Any], Any] | None = None) -> None:
    """``document`` on stdout as JSON, as every ``--format json`` prints it: indent 1, non-ASCII kept, last newline."""
    sys.stdout.write(json.dumps(document, default=default, ensure_ascii=False, indent=1) + "\n")


def json_object(text: str, option: str) -> dict[str, Any]:
    """A JSON object given on the command line; a usage error naming the option and the value otherwise."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(
            f"not JSON ({exc.msg} at character {exc.pos}): {text[:80]!r}", param_hint=option
        ) from exc
    if not isinstance(value, dict):
        raise typer.BadParameter(f"must be a JSON object, got {type(value).__name__}: {text[:80]!r}", param_hint=option)
    return value


def fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def num(value: Any) -> str:
    return "-" if value is None else f"{value:g}"


def usd(value: Any) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "$0"
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:,.4f}"


def store_parameter(store: Path | str | None) -> str | None:
    """The store as a flow parameter: a local path made absolute, anything with a scheme (a URI) kept as given."""
    if store is None:
        return None
    text = str(store)
    return text if ":" in text else str(Path(text).resolve())
