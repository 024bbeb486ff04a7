"""`tcobench run`: start the engine (or use an endpoint), warm up, measure, store, print cost per 1M tokens."""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from tcobench.cli._claim import warn_claim_shortfalls
from tcobench.cli._common import (
    PartialThresholdOpt,
    StoreOpt,
    err,
    guard,
    json_object,
    out,
    prefect_defaults,
    settings_for,
)
from tcobench.cli._flags import declared, in_panel, overrides, parameter, with_parameters
from tcobench.cli._run_display import RunDisplay
from tcobench.cli._runs_table import print_assumptions, print_runs
from tcobench.cli._signals import exit_interrupted, measuring
from tcobench.cli._workload_table import print_workload
from tcobench.cli.images import container_overrides, engine_event_printer
from tcobench.errors import Interrupted, StoreError
from tcobench.schemas import BenchmarkConfig
from tcobench.settings import Settings

__all__ = ["FLAG_NAMES", "PANELS", "RUN_FLAGS", "RunOptions", "expand_synthetic", "overrides_of", "register"]


# The options of `tcobench run` that set configuration fields, declared on those fields (schemas/config.py, Flag).
RUN_FLAGS = declared(BenchmarkConfig)

# The panels `tcobench run --help` lists its options in, in this order. A declared flag is in its Flag's panel, else
# in its field's section's (the longest path prefix in _SECTION_PANELS); the run's own options in _OWN_PANELS'.
# Within a panel, the options keep the order they are declared in (the configuration's fields, then _own_options).
PANELS = ("Run", "Engine", "Workload", "Load", "SLO", "Telemetry", "Pricing", "Store and exit")
_SECTION_PANELS = {
    "engine": "Engine",
    "model": "Engine",
    "workload": "Workload",
    "workload.sweep": "Load",
    "workload.slo": "SLO",
    "telemetry": "Telemetry",
    "pricing": "Pricing",
}
_OWN_PANELS = {
    "config_file": "Run",
    "no_prefect": "Run",
    "yes": "Run",
    "api_key": "Engine",
    "shape_tolerance": "Store and exit",
    "partial_threshold": "Store and exit",
    "store": "Store and exit",
}


def _panel(path: tuple[str, ...], flag_panel: str) -> str:
    """The panel of a declared flag: its own, else its section's."""
    if flag_panel:
        return flag_panel
    prefixes = [".".join(path[:k]) for k in range(len(path) - 1, 0, -1)]
    return next(_SECTION_PANELS[p] for p in prefixes if p in _SECTION_PANELS)


def _spelling(name: str) -> str:
    """How the command line spells a declared flag (its first option name)."""
    flag = RUN_FLAGS[name][1]
    return flag.decls[0].split("/")[0] if flag.decls else "--" + name.replace("_", "-")


def _workload_flag_names() -> dict[str, str]:
    """Each workload field a flag sets, as the command line spells it (messages and the summary's "from" column): a
    table's flags by their common stem (``slo``: ``--slo-*``), or by the first one where they share none (``trace``:
    ``--trace``), and ``mode`` by ``--rate``, which sets it."""
    spelled: dict[str, list[str]] = {}
    for name, (path, _, _) in RUN_FLAGS.items():
        if path[0] == "workload":
            spelled.setdefault(path[1], []).append(_spelling(name))
    names = {}
    for field, flags in spelled.items():
        stem = os.path.commonprefix(flags)
        if len(flags) == 1 or stem in flags:
            names[field] = stem
        else:
            names[field] = stem + "*" if stem != "--" else flags[0]
    return names | {"mode": names["rate"]}


# How the command line spells each workload field it sets (messages and the summary's "from" column).
FLAG_NAMES = _workload_flag_names()


def expand_synthetic(args: list[str]) -> list[str]:
    """`run --synthetic SHAPE` is `run --synthetic --shape SHAPE` (a bare --synthetic only marks the model)."""
    if not args or args[0] != "run":
        return args
    out: list[str] = []
    for i, arg in enumerate(args):
        out.append(arg)
        following = args[i + 1] if i + 1 < len(args) else "-"
        if arg == "--synthetic" and not following.startswith("-"):
            out.append("--shape")
    return out


def overrides_of(values: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration the run's options set: each declared flag's value at its field, then the fields the run
    derives from several options (the engine's kind, the model's name, the load's mode, the container, ...)."""
    v = values
    if v["endpoint"] is not None and v["model"] is None:
        raise typer.BadParameter(
            "--model is required with --endpoint (the name the server serves)", param_hint="--model"
        )
    given = overrides(RUN_FLAGS, v)
    derived = {
        "engine": {
            "kind": v["engine"].value if v["engine"] is not None else _kind(v),
            "container": container_overrides(v["image"], v["docker_host"], v["gpu_vendor"], v["gpus"]),
        },
        "model": {
            "name": v["model"] or (f"synthetic-{v['shape']}" if v["shape"] else None),
            "synthetic": v["synthetic"] or bool(v["shape"]) or None,
        },
        "workload": {
            "mode": "poisson" if v["rate"] else None,
            "extra_body": json_object(v["extra_body"], "--extra-body") if v["extra_body"] else None,
            "dataset": {"format": v["dataset_format"]} if v["dataset"] else None,  # --dataset-format: with --dataset
        },
    }
    return _merged(given, derived)


def _merged(base: dict[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``more``'s values that are not None (tables merged; a table left empty is left out)."""
    out = dict(base)
    for key, value in more.items():
        if isinstance(value, Mapping):
            table = _merged(dict(out.get(key) or {}), value)
            if table:
                out[key] = table
        elif value is not None:
            out[key] = value
    return out


def _kind(values: Mapping[str, Any]) -> str | None:
    return "endpoint" if values["endpoint"] else ("container" if values["image"] else None)


def _own_options(
    config_file: Annotated[Path | None, typer.Option("--config", "-c", help="Benchmark config (TOML).")] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            help="API key sent as `Authorization: Bearer` to --endpoint; prefer the environment: TCOBENCH_API_KEY.",
            show_default=False,
        ),
    ] = None,
    no_prefect: Annotated[
        bool, typer.Option("--no-prefect", help="Run the same steps without Prefect (faster start).")
    ] = False,
    shape_tolerance: Annotated[
        float | None,
        typer.Option(
            help="Flag a run whose mean input or output tokens (server-counted) differ from the asked by more than "
            "this fraction, and exit 4 [0.10]; also TCOBENCH_SHAPE_TOLERANCE.",
            min=0,
            max=10,
        ),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option("--yes", help="Measure even when the estimate is over 30 min on the embedded CPU engine."),
    ] = False,
    partial_threshold: PartialThresholdOpt = 0.05,
    store: StoreOpt = None,
) -> None:
    """The options of `tcobench run` that set no configuration field (their signature only)."""


def _run(**values: Any) -> None:
    """Start the engine (or use --endpoint), warm up, measure, store every request, print cost per 1M tokens.

    Exit status: 0 ok; 1 an error before measuring (also: the estimate after warm-up is over 30 min on the embedded
    CPU engine and --yes was not given); 3 a run failed (every measured request failed, or the engine
    died); 4 a run lost more than --partial-threshold of its requests, hit --deadline, or was served input or
    output lengths further from the asked than --shape-tolerance; 130/143/129 stopped by SIGINT/SIGTERM/SIGHUP
    (finished requests are kept as an interrupted run).
    """
    from pydantic import SecretStr

    from tcobench.tasks.config import load_config_sourced
    from tcobench.tasks.load.limits import check_load
    from tcobench.tasks.prices import check_keys, load_prices
    from tcobench.tasks.store.store import check_store

    config_file = values["config_file"]
    settings = settings_for(values["store"], values["no_prefect"])
    update: dict[str, Any] = {}
    if values["shape_tolerance"] is not None:
        update["shape_tolerance"] = values["shape_tolerance"]  # view run_shape reads it (query.connect)
    if values["api_key"]:
        update["api_key"] = SecretStr(values["api_key"])  # sent to the endpoint; never stored
    settings = settings.model_copy(update=update)
    overrides = overrides_of(values)
    config, sources = load_config_sourced(config_file, overrides, FLAG_NAMES)
    warn_claim_shortfalls([config.workload])
    prices = load_prices(config.pricing.table)
    flags = {"hardware": "--hardware", "site": "--site"}
    named = {k: flag for k, flag in flags.items() if overrides.get("pricing", {}).get(k) is not None}
    check_keys(prices, config.pricing, str(config_file) if config_file else "default", named)
    check_load(config.workload)  # a level this process cannot open is refused; one the plan cannot reach, warned
    check_store(settings.store)  # before Prefect and the engine start: a bad store fails in a second, not later
    options = RunOptions(sources, values["yes"])
    try:
        with measuring(settings) as children:
            _run_flow(config, prices, settings, values["partial_threshold"], children, options)
    except Interrupted as exc:
        if options.prefect_server is not None or not settings.prefect:
            exit_interrupted(exc, options.prefect_server)
        raise  # Prefect's exit work sends the user's own Prefect server its last logs


@dataclass
class RunOptions:
    sources: dict[str, str]  # each workload field's source: flag, config, preset, default
    yes: bool = False  # measure even when the estimate is long
    prefect_server: int | None = None  # pid of the Prefect API server this run started


def _kept(settings: Settings, prices: Any, batch_id: str, sources: dict[str, str], workload: Any) -> str:
    """One line: which runs of this batch are stored, with their measured requests; their summary on stdout first,
    as at the end of a run (one connection: after a signal, the exit must not wait for several)."""
    import duckdb

    from tcobench.errors import TcobenchError
    from tcobench.tasks.analysis.shape import shapes_of
    from tcobench.tasks.analysis.summarise import SUMMARY_NEEDS, summary_of
    from tcobench.tasks.store.query import connect

    try:
        store = settings.store
        con = connect(
            store, prices, needs=(*SUMMARY_NEEDS, "run_shapes", "batch_runs"), shape_tolerance=settings.shape_tolerance
        )
        try:
            rows = con.execute("SELECT * FROM batch_runs($b)", {"b": batch_id}).fetchall()
            ids = [r[0] for r in rows]
            if ids:
                summary = summary_of(con, ids)
                print_runs(summary.runs, summary.tco, summary.goodput, shapes_of(con, ids))
                print_assumptions(summary.tco, summary.sources)
                print_workload(workload, sources)
        finally:
            con.close()
    except (TcobenchError, duckdb.Error) as exc:  # the line must still come out
        return f"what finished is stored in {store} as batch {batch_id} (cannot list it: {exc})"
    if not rows:
        return f"nothing was measured yet, so nothing was stored (store {store})"
    runs = "; ".join(f"run {r[0][:8]} (concurrency {r[1]}) {r[2]}: {r[4]} of {r[3]} measured requests ok" for r in rows)
    return f"kept {len(rows)} run(s) of batch {batch_id[:8]} in {store}: {runs}"


def _run_flow(
    config: Any, prices: Any, settings: Settings, partial_threshold: float, children: Any, options: RunOptions
) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    prefect_defaults()  # before importing tcobench.flows: it imports (and configures) Prefect when enabled
    from tcobench.flows import in_process_settings, prefect_enabled, start_api_server, use_settings

    use_settings(settings)  # before importing a flow: Prefect on or off for this process (--no-prefect)

    if prefect_enabled():
        err.print("[dim]starting Prefect (in-process API server) and the engine...[/]")
        server = start_api_server()
        if server is not None:
            children.add("prefect-server", server, borrowed=True)
            options.prefect_server = server
    else:
        err.print("[dim]starting the engine (Prefect off)...[/]")
    from tcobench.flows import benchmark
    from tcobench.schemas import EngineKind
    from tcobench.tasks.runs import check_runs, check_shapes, new_id

    # model pulls while an engine starts
    pulls = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err
    )
    embedded = config.engine.kind is EngineKind.embedded
    display = RunDisplay(err, config.workload, embedded, options.yes)
    batch_id = new_id()
    try:
        with display, in_process_settings(options.prefect_server):
            result = benchmark(
                config,
                prices,
                settings.store,
                settings.host_name,
                settings.model_cache,
                display.on_request,
                on_event=engine_event_printer(pulls),
                batch_id=batch_id,
                watcher=display,
                api_key=settings.api_key,
            )
    except StoreError as exc:  # e.g. a full disk: the runs committed before it are still summarised
        if exc.stored is not None and exc.stored.run_ids:
            _print_result(exc.stored, settings, config.workload, options.sources, prices)
        raise
    except Interrupted as exc:
        kept = _kept(settings, prices, batch_id, options.sources, config.workload)
        raise Interrupted(f"{str(exc).split(':')[0]}: {kept}", exc.exit_code) from None
    finally:
        if pulls.live.is_started:
            pulls.stop()
    shapes = _print_result(result, settings, config.workload, options.sources, prices)
    counts = {r["run_id"]: (r["n"], r["errors"]) for r in result.run_rows.to_pylist()}
    check_runs(result.runs, counts, partial_threshold)  # a failed (3) or lossy (4) run first
    check_shapes(result.runs, shapes.to_pylist() if shapes is not None else [])  # then a missed shape (4)


def _shapes(settings: Settings, prices: Any, run_ids: list[str]) -> Any:
    """View run_shape of these runs; None (the row shows "-") when it cannot be read."""
    import duckdb

    from tcobench.errors import TcobenchError
    from tcobench.tasks.analysis.shape import run_shapes

    try:
        return run_shapes(settings.store, prices, run_ids, shape_tolerance=settings.shape_tolerance)
    except (TcobenchError, duckdb.Error):
        return None


def _print_result(result: Any, settings: Settings, workload: Any, sources: dict[str, str], prices: Any) -> Any:
    """The stored runs' summary, assumptions and workload; their rows of view run_shape (None: unreadable)."""
    shapes = _shapes(settings, prices, result.run_ids)
    print_runs(result.summary.runs, result.summary.tco, result.summary.goodput, shapes)
    print_assumptions(result.summary.tco, result.summary.sources)
    print_workload(workload, sources)
    for warning in sorted({r.identity_warning for r in result.runs if r.identity_warning}):
        err.print(f"[yellow]warning[/]: {escape(warning)}", soft_wrap=True)
    if result.sweep_stop is not None:
        out.print(f"sweep stopped: {result.sweep_stop}", highlight=False)
    out.print(f"stored {len(result.run_ids)} run(s) in {settings.store} (batch {result.batch_id})", highlight=False)
    return shapes


def _accuracy_options(
    questions: Annotated[
        int, typer.Option(min=1, help="Bundled exact-answer questions to ask (generated with seed 42).")
    ] = 40,
) -> None:
    """The option of `tcobench accuracy` that `run` does not have (its signature only)."""


# The options `tcobench accuracy` shares with `run`, declared there once (the fields' flags and _own_options).
_ACCURACY_FROM_RUN = (
    "config_file",
    "endpoint",
    "protocol",
    "model",
    "model_path",
    "chat",
    "image",
    "no_prefect",
    "prices_file",
    "store",
)


def _accuracy(**values: Any) -> None:
    """Ask the engine N bundled exact-answer questions (integer arithmetic, list lookups) at temperature 0, one at
    a time, and store the answers as a run of workload accuracy-N-seed42; `tcobench compare` scores each side and
    its claim-grade accuracy rule compares the scores (docs/claim-grade.md)."""
    questions = values.pop("questions")
    _run(**_RUN_DEFAULTS | values | {"accuracy": questions, "concurrency": [1], "warmup": 1})


def _run_parameters() -> list[inspect.Parameter]:
    own = inspect.signature(_own_options, eval_str=True).parameters
    params = [parameter(name, found, panel=_panel(found[0], found[1].panel)) for name, found in RUN_FLAGS.items()]
    params += [in_panel(param, _OWN_PANELS[name]) for name, param in own.items()]
    return sorted(params, key=lambda p: PANELS.index(_panel_of(p)))  # stable: declaration order within a panel


def _panel_of(param: inspect.Parameter) -> str:
    return str(next(m.rich_help_panel for m in param.annotation.__metadata__ if hasattr(m, "rich_help_panel")))


def _accuracy_parameters(run_parameters: list[inspect.Parameter]) -> list[inspect.Parameter]:
    run = {p.name: p for p in run_parameters}
    own = inspect.signature(_accuracy_options, eval_str=True).parameters
    return [*own.values(), *(run[name] for name in _ACCURACY_FROM_RUN)]


_RUN_PARAMETERS = _run_parameters()  # built once at import: run's and accuracy's signatures and run's defaults
with_parameters(_run, _RUN_PARAMETERS)
with_parameters(_accuracy, _accuracy_parameters(_RUN_PARAMETERS))
_RUN_DEFAULTS = {p.name: p.default for p in _RUN_PARAMETERS}


def register(app: typer.Typer) -> None:
    app.command("run")(guard(_run))
    app.command("accuracy")(guard(_accuracy))
