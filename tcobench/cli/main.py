"""The ``tcobench`` command: the Typer app, every command group registered on it, and the usage-error policy.

Each command group is a module of this package with a ``register(app)`` function; none of them imports another
command module's registration or this one, so each imports alone (tests/unit/cli/test_imports.py). A command's
module is imported when the command is asked for (``COMMANDS``): `tcobench --help` lists the commands from
``COMMANDS`` alone, and `tcobench query` imports the query's module only, not Prefect's flows or the models behind
`run` (tests/unit/cli/test_startup.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from tcobench.cli._help import install, render_help
from tcobench.errors import ExitCode

try:  # typer >= 0.20 carries its own copy of click; older ones use the click package
    from typer._click import exceptions as cx
except ImportError:  # pragma: no cover - depends on the typer release installed
    from click import exceptions as cx  # type: ignore[no-redef]

__all__ = ["COMMANDS", "app", "main"]

# Every command, in the order `tcobench --help` lists them: the module of tcobench.cli whose ``register(app)`` adds
# it, and the first paragraph of its help (what --help shows beside it; tests/unit/cli/test_startup.py checks each
# against the command's own help).
COMMANDS: dict[str, tuple[str, str]] = {
    "run": (
        "run",
        "Start the engine (or use --endpoint), warm up, measure, store every request, print cost per 1M tokens.",
    ),
    "accuracy": (
        "run",
        "Ask the engine N bundled exact-answer questions (integer arithmetic, list lookups) at temperature 0, one at "
        "a time, and store the answers as a run of workload accuracy-N-seed42; `tcobench compare` scores each side "
        "and its claim-grade accuracy rule compares the scores (docs/claim-grade.md).",
    ),
    "presets": (
        "presets",
        "List the workload presets: lengths, concurrency sweep, duration, SLO and the public shape each follows.",
    ),
    "trace": ("trace", "Recorded traffic: `trace stats FILE` profiles a trace file."),
    "import": (
        "import_files",
        "Import another benchmark's result file as runs in the store: `vllm bench serve --save-result "
        "--save-detailed` JSON (vllm-bench), aiperf's profile_export_aiperf.json (with profile_export.jsonl beside "
        "it) or a `guidellm run --output kind=json` report (guidellm; one run per benchmark), priced and compared "
        "like measured ones (source = imported:vllm-bench 0.32.0, ...); or a `tcobench export --format parquet` "
        "folder back (parquet).",
    ),
    "summary": (
        "results",
        "One row per run: when, where, what, status, TTFT p50, output tok/s and cost per 1M output tokens.",
    ),
    "query": (
        "results",
        "Read-only SQL over the views (runs, requests, telemetry, run_summary, tco, hardware, site, ops).",
    ),
    "compare": (
        "analytics",
        "Cost efficiency of A vs B (tokens per USD, A / B) with a bootstrap CI, its cost drivers and a verdict, per "
        "concurrency level and at equal interactivity (tok/s per user, on each side's throughput frontier).",
    ),
    "best": (
        "best",
        "Rank each platform's serving configurations by cost per 1M output tokens at one interactivity, among those "
        "that meet the SLO (--slo-ttft-ms, --slo-tpot-ms: p90 at that interactivity), with the CI; says which to "
        "deploy.",
    ),
    "plan": (
        "plan",
        "How many GPUs (and whole hosts) of each platform serve a recorded trace's per-minute output token rate (p95, "
        "--at peak|mean) at one interactivity within the SLO, the headroom at its busiest minute, and what each fleet "
        "costs per month on every cost basis, with the frontier bootstrap's CI; the ratio of the monthly costs is the "
        "verdict for this traffic.",
    ),
    "history": (
        "analytics",
        "Trends per (host, model, workload, concurrency) over nightly runs; flags changes beyond run-to-run noise.",
    ),
    "report": (
        "analytics",
        "Write one self-contained HTML report: throughput, latency, cost with CIs, energy, trend, provenance.",
    ),
    "export": (
        "export",
        "Write the selected runs in another tool's format: llm-d's benchmark_report v0.2, or the flat tables as "
        "Parquet or CSV (raw units, every stored column), into a new folder; nothing is written when any part fails.",
    ),
    "metrics": (
        "metrics",
        "Expose the store's key figures as Prometheus metrics: printed, written to --textfile, or served on --port.",
    ),
    "doctor": (
        "images",
        "Preflight checks of a Docker host: daemon, NVIDIA runtime and driver, /dev/kfd, /dev/dri, groups, disk.",
    ),
    "nightly": ("nightly", "Measure every host of the inventory on the matrix now (hosts in parallel)."),
    "serve": (
        "nightly",
        "Serve the nightly flow as a deployment with a cron schedule (needs a Prefect server: PREFECT_API_URL).",
    ),
    "worker": (
        "fleet",
        "Run this host's Prefect worker: the nightly's cells for --host run here, next to this host's engines.",
    ),
    "images": ("images", "Build, list and push the pinned engine images (docker/, images/catalog.toml)."),
    "fleet": ("fleet", "Fleet mode: deployments on the Prefect server and the hosts' workers."),
    "models": ("models", "Synthetic models (random weights, real shapes) for hosts without downloads."),
    "store": ("store", "Look after the results store: info, snapshots, compact, verify, migrate."),
    "docs": (
        "docs",
        "Print a documentation page (markdown), or list the pages: the docs/ folder, shipped in the package.",
    ),
}


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
        args = list(sys.argv[1:] if args is None else args)
        if args[:1] == ["run"]:
            from tcobench.cli.run import expand_synthetic

            args = expand_synthetic(args)
        try:
            value = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except cx.UsageError as exc:
            from rich.markup import escape

            from tcobench.cli._common import print_error

            where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
            print_error("UsageError", escape(_usage_message(exc) + where))
            return _finish(ExitCode.usage, standalone_mode)
        except cx.ClickException as exc:  # e.g. a file option that cannot be opened
            from rich.markup import escape

            from tcobench.cli._common import print_error

            print_error("Error", escape(exc.format_message()))
            return _finish(exc.exit_code, standalone_mode)
        except (typer.Abort, KeyboardInterrupt):
            from tcobench.cli._common import print_error

            print_error("Interrupted", "stopped by Ctrl-C")
            return _finish(ExitCode.interrupted, standalone_mode)
        return _finish(value if isinstance(value, int) else 0, standalone_mode)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Help laid out for the terminal with nothing cut (_help), here and in every sub-command."""
        formatter.write(render_help(self, ctx))

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self._load(COMMANDS[cmd_name][0])
        command = super().get_command(ctx, cmd_name)
        return install(command) if command is not None else None

    def listed_help(self, ctx: Any, cmd_name: str) -> str | None:
        """What --help lists beside a command, without importing its module (``COMMANDS``)."""
        return COMMANDS[cmd_name][1] if cmd_name in COMMANDS else None

    def _load(self, module: str) -> None:
        """Import ``tcobench.cli.<module>`` and add the commands its ``register`` declares."""
        sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        importlib.import_module(f"tcobench.cli.{module}").register(sub)
        for name, command in typer.main.get_group(sub).commands.items():
            self.commands.setdefault(name, command)


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
        from tcobench import __version__

        sys.stdout.write(f"tcobench {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_show_version)
    ] = False,
) -> None:
    """Measure LLM inference engines on your own hosts and price the tokens (TCO per 1M tokens)."""
    from tcobench.cli._common import show_warnings

    show_warnings()


def main(argv: Sequence[str] | None = None) -> None:
    app(args=list(argv) if argv is not None else None, prog_name="tcobench")
