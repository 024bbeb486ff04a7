"""`tcobench import FILE --format vllm-bench|aiperf|guidellm|parquet`: another benchmark's result file, or a
`tcobench export --format parquet` folder, as runs in the store."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from tcobench.cli._common import PricesOpt, StoreOpt, err, guard, out, settings_for
from tcobench.schemas.base import GpuVendor
from tcobench.schemas.imports import ImportFormat

__all__ = ["register"]


def _import(
    path: Annotated[Path, typer.Argument(help="The result file (parquet: the export folder).", show_default=False)],
    fmt: Annotated[
        ImportFormat, typer.Option("--format", help="vllm-bench, aiperf, guidellm or parquet.", show_default=False)
    ],
    host: Annotated[str | None, typer.Option("--host", help="Name of the host the file was measured on.")] = None,
    hardware: Annotated[
        str | None, typer.Option("--hardware", help="Price-table hardware key of that host (tcobench prices).")
    ] = None,
    gpus: Annotated[int | None, typer.Option("--gpus", min=0, help="GPUs the engine was given (0: CPU).")] = None,
    vendor: Annotated[GpuVendor | None, typer.Option("--vendor", help="cpu, nvidia or amd.")] = None,
    gpu_model: Annotated[str | None, typer.Option("--gpu-model", help="Accelerator model, e.g. H100.")] = None,
    engine: Annotated[str | None, typer.Option("--engine", help="Engine product, e.g. vllm, sglang.")] = None,
    engine_version: Annotated[str | None, typer.Option("--engine-version", help="Engine version.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model name, where the file has none.")] = None,
    tool_version: Annotated[
        str | None,
        typer.Option("--tool-version", help="Version of the tool that wrote the file, where the file has none."),
    ] = None,
    site: Annotated[str, typer.Option("--site", help="Price-table site key (electricity, PUE).")] = "default",
    ops: Annotated[str, typer.Option("--ops", help="Price-table ops key (labour).")] = "default",
    utilisation: Annotated[
        float, typer.Option("--utilisation", min=0.0, max=1.0, help="Assumed utilisation, 0-1.")
    ] = 0.5,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace", help="Import a file already imported (parquet: runs already stored) again, over those runs."
        ),
    ] = False,
    prices: PricesOpt = None,
    store: StoreOpt = None,
) -> None:
    """Import another benchmark's result file as runs in the store: `vllm bench serve --save-result
    --save-detailed` JSON (vllm-bench), aiperf's profile_export_aiperf.json (with profile_export.jsonl beside
    it) or a `guidellm run --output kind=json` report (guidellm; one run per benchmark), priced and compared
    like measured ones (source = imported:vllm-bench 0.32.0, ...); or a `tcobench export --format parquet`
    folder back (parquet).

    --host, --hardware, --gpus and --vendor are required (no file says them). The whole file is one transaction;
    importing the same file twice (same sha256) is refused unless --replace.

    --format parquet takes back a `tcobench export --format parquet` folder: its runs keep their run ids, source and
    every value (no label option applies); runs already in the store are refused unless --replace.
    """
    from pydantic import ValidationError

    from tcobench.schemas.imports import ImportLabels
    from tcobench.tasks.imports import import_file

    given = dict(  # noqa: C408 - the option names, as ImportLabels names them
        host=host,
        hardware=hardware,
        gpus=gpus,
        vendor=vendor,
        gpu_model=gpu_model,
        engine=engine,
        engine_version=engine_version,
        model=model,
        tool_version=tool_version,
        site=site,
        ops=ops,
        utilisation=utilisation,
    )
    if fmt is ImportFormat.parquet:
        _import_tables(path, given, replace, store)
        return
    try:
        labels = ImportLabels.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]).replace("_", "-")
        raise typer.BadParameter(f"{first['input']!r}: {first['msg']}", param_hint=f"--{name}") from None
    settings = settings_for(store)
    done = import_file(settings.store, path, fmt, labels, replace, prices)
    for run in done.runs:
        out.print(
            f"imported run {run.run_id[:8]} ({escape(run.source or '')}): {run.status.value}, "
            f"{run.measured_requests} requests ({done.requests[run.run_id]} request rows), concurrency "
            f"{run.concurrency}, model {escape(run.model_name)}, host {escape(run.host)}",
            highlight=False,
            soft_wrap=True,
        )
    for note in done.notes:
        err.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    again = f"; replaced {done.replaced} earlier run(s)" if done.replaced else ""
    err.print(f"[dim]stored in {escape(str(settings.store))} (snapshot {done.snapshot}){again}[/]", highlight=False)


def _import_tables(folder: Path, given: Mapping[str, object], replace: bool, store: str | None) -> None:
    """--format parquet: the export folder's runs as they were; a label option is refused (the runs carry theirs)."""
    from tcobench.tasks.imports.tables import import_tables

    defaults = {"site": "default", "ops": "default", "utilisation": 0.5}
    extra = [k for k, v in given.items() if v is not None and v != defaults.get(k)]
    if extra:
        name = extra[0].replace("_", "-")
        raise typer.BadParameter(
            f"{given[extra[0]]!r}: a parquet export's runs carry their own labels; drop it", param_hint=f"--{name}"
        )
    settings = settings_for(store)
    done = import_tables(settings.store, folder, replace)
    for run in done.runs:
        out.print(
            f"imported run {escape(run.run_id)} ({escape(run.source or 'measured')}): {run.status.value}, "
            f"concurrency {run.concurrency}, model {escape(run.model_name)}, host {escape(run.host)}",
            highlight=False,
            soft_wrap=True,
        )
    rows = ", ".join(f"{n} {t}" for t, n in done.rows.items())
    again = f"; replaced {len(done.replaced)} stored run(s)" if done.replaced else ""
    err.print(
        f"[dim]{rows} rows stored in {escape(str(settings.store))} (snapshot {done.snapshot}){again}[/]",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("import")(guard(_import))
