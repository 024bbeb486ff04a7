"""The ``tcobench`` command: the Typer app, every command group registered on it, and the usage-error policy.

Each command group is a module of this package with a ``register(app)`` function; none of them imports another
command module's registration or this one, so each imports alone (tests/unit/cli/test_imports.py).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from rich.markup import escape
from typer.core import TyperGroup

from tcobench import __version__
from tcobench.cli import analytics, docs, fleet, images, models, nightly, presets, results, run, store
from tcobench.cli._common import print_error, show_warnings
from tcobench.cli._help import install, render_help
from tcobench.errors import ExitCode

try:  # typer >= 0.20 carries its own copy of click; older ones use the click package
    from typer._click import exceptions as cx
except ImportError:  # pragma: no cover - depends on the typer release installed
    from click import exceptions as cx  # type: ignore[no-redef]

__all__ = ["app", "main"]


class _OneLineErrors(TyperGroup):
    """Usage errors as one line naming the option, the value and the valid choices, exit 2 (no boxed panels)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        args = run.expand_synthetic(list(sys.argv[1:] if args is None else args))
        try:
            value = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except cx.UsageError as exc:
            where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
            print_error("UsageError", escape(_usage_message(exc) + where))
            return _finish(ExitCode.usage, standalone_mode)
        except cx.ClickException as exc:  # e.g. a file option that cannot be opened
            print_error("Error", escape(exc.format_message()))
            return _finish(exc.exit_code, standalone_mode)
        except (typer.Abort, KeyboardInterrupt):
            print_error("Interrupted", "stopped by Ctrl-C")
            return _finish(ExitCode.interrupted, standalone_mode)
        return _finish(value if isinstance(value, int) else 0, standalone_mode)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Help laid out for the terminal with nothing cut (_help), here and in every sub-command."""
        formatter.write(render_help(self, ctx))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        return install(command) if command is not None else None


def _usage_message(exc: Exception) -> str:
    """Click's message, plus the value given where click leaves it out (a value that failed to convert), or the
    commands there are where one is missing (`tcobench images` alone)."""
    message = str(exc.format_message()).replace("Value error, ", "")  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    if message.startswith("Missing command") and ctx is not None and hasattr(ctx.command, "list_commands"):
        return f"{message} Commands: {', '.join(ctx.command.list_commands(ctx))}."
    errors = getattr(exc.__cause__, "errors", None)  # typer converts with pydantic: the cause has the input
    given = errors()[0].get("input") if callable(errors) and errors() else None
    if given is not None and str(given) not in message:
        message += f" (got {given!r})"
    return message


def _finish(code: int, standalone_mode: bool) -> int:
    if standalone_mode:
        sys.exit(code)
    return code


app = typer.Typer(
    name="tcobench",
    cls=_OneLineErrors,
    help="Measure LLM inference engines on your own hosts and price the tokens (TCO per 1M tokens).",
    no_args_is_help=False,  # a missing command is a one-line usage error listing the commands (see main)
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _show_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"tcobench {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_show_version)
    ] = False,
) -> None:
    """Measure LLM inference engines on your own hosts and price the tokens (TCO per 1M tokens)."""
    show_warnings()


for _module in (run, presets, results, analytics, images, nightly, fleet, models, store, docs):
    _module.register(app)


def main(argv: Sequence[str] | None = None) -> None:
    app(args=list(argv) if argv is not None else None, prog_name="tcobench")
