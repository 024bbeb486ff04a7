"""`tcobench run`: start the engine (or use an endpoint), warm up, measure, store, print cost per 1M tokens."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from tcobench.errors import Interrupted, StoreError
from tcobench.schemas import (
    SHAPES,
    EngineKind,
    EngineMetricsKind,
    GpuVendor,
    Protocol,
    SamplerKind,
)
from tcobench.settings import Settings

from ._claim import warn_claim_shortfalls
from ._common import (
    PartialThresholdOpt,
    PricesOpt,
    StoreOpt,
    err,
    guard,
    json_object,
    out,
    prefect_defaults,
    settings_for,
)
from ._run_display import RunDisplay
from ._runs_table import print_assumptions, print_runs
from ._signals import measuring
from ._workload_table import print_workload
from .images import container_overrides, engine_event_printer

if TYPE_CHECKING:
    from tcobench.tasks.store import StoreRef

__all__ = ["FLAG_NAMES", "RunOptions", "expand_synthetic", "register"]


# How the command line spells each workload field it sets (messages and the summary's "from" column).
FLAG_NAMES = {
    "preset": "--preset", "requests": "--requests", "warmup_requests": "--warmup", "concurrency": "--concurrency",
    "max_tokens": "--max-tokens", "input_tokens": "--input-tokens", "output_tokens": "--output-tokens",
    "mode": "--rate", "rate": "--rate", "client_procs": "--client-procs", "ignore_eos": "--ignore-eos",
    "request_timeout_s": "--request-timeout", "run_deadline_s": "--deadline", "extra_body": "--extra-body",
    "dataset": "--dataset", "shared_prefix_tokens": "--shared-prefix", "turns": "--turns", "duration_s": "--duration",
    "min_requests": "--min-requests", "tokenizer": "--tokenizer", "slo": "--slo-*", "sweep": "--sweep-margin",
    "profile": "--profile", "accuracy": "--accuracy",
}  # fmt: skip


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


def _overrides(**cli: Any) -> dict[str, Any]:
    endpoint = cli["endpoint"]
    if endpoint is not None and cli["model"] is None:
        raise typer.BadParameter(
            "--model is required with --endpoint (the name the server serves)", param_hint="--model"
        )
    return {
        "engine": {
            "kind": _kind(cli),
            "vllm": {"python": str(cli["vllm_python"])} if cli["vllm_python"] else None,
            "url": endpoint,
            "protocol": cli["protocol"].value if cli["protocol"] else None,
            "chat": cli["chat"],
            "container": container_overrides(cli["image"], cli["docker_host"], cli["gpu_vendor"], cli["gpus"]),
        },
        "model": {
            "name": cli["model"] or (f"synthetic-{cli['shape']}" if cli["shape"] else None),
            "shape": cli["shape"],
            "path": str(cli["model_path"]) if cli["model_path"] else None,
            "synthetic": cli["synthetic"] or bool(cli["shape"]) or None,
        },
        "workload": {
            "preset": cli["preset"],
            "profile": cli["profile"],
            "accuracy": cli["accuracy"],
            "requests": cli["requests"],
            "warmup_requests": cli["warmup"],
            "concurrency": list(cli["concurrency"]) if cli["concurrency"] else None,
            "max_tokens": cli["max_tokens"],
            "input_tokens": cli["input_tokens"],
            "output_tokens": cli["output_tokens"],
            "mode": "poisson" if cli["rate"] else None,
            "rate": cli["rate"],
            "client_procs": cli["client_procs"],
            "ignore_eos": cli["ignore_eos"],
            "request_timeout_s": cli["request_timeout"],
            "run_deadline_s": cli["deadline"],
            "extra_body": json_object(cli["extra_body"], "--extra-body") if cli["extra_body"] else None,
            "dataset": {"path": str(cli["dataset"]), "format": cli["dataset_format"]} if cli["dataset"] else None,
            "shared_prefix_tokens": cli["shared_prefix"],
            "turns": cli["turns"],
            "duration_s": cli["duration"],
            "min_requests": cli["min_requests"],
            "tokenizer": cli["tokenizer"],
            "slo": {
                "ttft_ms": cli["slo_ttft_ms"],
                "tpot_ms": cli["slo_tpot_ms"],
                "itl_ms": cli["slo_itl_ms"],
                "quantile": cli["slo_quantile"],
            },  # fmt: skip
            "sweep": {"margin": cli["sweep_margin"]} if cli["sweep_margin"] is not None else None,
        },
        "telemetry": {
            "sampler": cli["telemetry"].value if cli["telemetry"] else None,
            "hz": cli["telemetry_hz"],
            "engine_metrics": cli["engine_metrics"].value if cli["engine_metrics"] else None,
        },
        "pricing": {"hardware": cli["hardware"], "site": cli["site"], "utilisation": cli["utilisation"]},
    }


def _kind(cli: dict[str, Any]) -> str | None:
    if cli["engine"] is not None:
        return str(cli["engine"].value)
    return "endpoint" if cli["endpoint"] else ("container" if cli["image"] else None)


def _run(
    config_file: Annotated[Path | None, typer.Option("--config", "-c", help="Benchmark config (TOML).")] = None,
    endpoint: Annotated[str | None, typer.Option(help="Measure a running server at this URL instead.")] = None,
    protocol: Annotated[Protocol | None, typer.Option(help="Wire protocol of --endpoint.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name as the server knows it.")] = None,
    model_path: Annotated[
        Path | None, typer.Option(help="GGUF file for the embedded engine; a model folder (config.json) for vllm.")
    ] = None,
    engine: Annotated[
        EngineKind | None,
        typer.Option(help=r"Engine to start or use: embedded, vllm (a local vLLM), endpoint, container \[embedded]."),
    ] = None,
    vllm_python: Annotated[
        Path | None,
        typer.Option(help="--engine vllm: a Python with vLLM installed [$TCOBENCH_VLLM_PYTHON].", show_default=False),
    ] = None,
    shape: Annotated[
        str | None,
        typer.Option(
            help=f"--engine vllm: serve random weights of this shape ({', '.join(SHAPES)}), no download; "
            "`--synthetic SHAPE` says the same."
        ),
    ] = None,
    chat: Annotated[bool | None, typer.Option("--chat/--completion", help="Chat or plain completion API.")] = None,
    requests: Annotated[int | None, typer.Option(help="Measured requests per run [20].")] = None,
    warmup: Annotated[int | None, typer.Option(help="Warm-up requests per run [1].")] = None,
    concurrency: Annotated[list[int] | None, typer.Option(help="Concurrency level; repeat for several [1, 2].")] = None,
    rate: Annotated[float | None, typer.Option(help="Open-loop Poisson arrival rate, requests/s.")] = None,
    client_procs: Annotated[
        int | None,
        typer.Option(
            help=r"Client processes sending the load \[auto: one per 128 streams or 400 req/s, at most "
            "the cores minus one]."
        ),  # fmt: skip
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option(help="Output tokens per request without --output-tokens [64].")
    ] = None,
    ignore_eos: Annotated[
        bool | None,
        typer.Option(
            "--ignore-eos/--no-ignore-eos",
            help=r"Ask for exactly the requested output tokens (llama.cpp, "
            r"vLLM) \[on with --output-tokens].",
            show_default=False,
        ),
    ] = None,
    request_timeout: Annotated[
        float | None, typer.Option(help="Seconds one request may take, sending to the end of its stream [120].")
    ] = None,
    deadline: Annotated[
        float | None,
        typer.Option(help="Seconds one run (concurrency level) may take; then it stops and keeps what finished."),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            help="API key sent as `Authorization: Bearer` to --endpoint; prefer the environment: TCOBENCH_API_KEY.",
            show_default=False,
        ),
    ] = None,
    preset: Annotated[
        str | None, typer.Option(help="Named workload shape (`tcobench presets`), e.g. chat-1k-1k; flags override it.")
    ] = None,
    accuracy: Annotated[
        int | None,
        typer.Option(help="Ask N bundled exact-answer questions instead of the prompts (`tcobench accuracy`)."),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            help="Run profile: claim (>= 600 s and >= 1,000 requests per level, warm-up 2 x concurrency; "
            "docs/claim-grade.md); flags override its defaults."
        ),
    ] = None,
    input_tokens: Annotated[
        str | None,
        typer.Option(
            help="Synthetic prompts of N tokens as the server counts them: N, uniform:MIN-MAX, "
            "normal:MEAN,SD[,MIN-MAX], lognormal:MEAN,SD[,MIN-MAX]."
        ),
    ] = None,
    output_tokens: Annotated[
        str | None, typer.Option(help="Output tokens per request: N or a distribution (as --input-tokens).")
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(help="JSONL of requests ({prompt} or {messages}, optional output_tokens) or ShareGPT."),
    ] = None,
    dataset_format: Annotated[str | None, typer.Option(help=r"auto, jsonl or sharegpt \[auto].")] = None,
    shared_prefix: Annotated[
        int | None, typer.Option(help="A system prompt of N tokens shared by every synthetic request [0].")
    ] = None,
    turns: Annotated[
        int | None, typer.Option(help="Turns per conversation; turn n+1 carries turn n's answer [1].")
    ] = None,
    duration: Annotated[
        float | None, typer.Option(help="Measure for S seconds after warm-up instead of --requests.")
    ] = None,
    min_requests: Annotated[int | None, typer.Option(help="With --duration: at least this many requests [1].")] = None,
    tokenizer: Annotated[
        str | None,
        typer.Option(help=r"auto, engine, or a local tokenizer.json / .gguf of the model (never downloaded) \[auto]."),
    ] = None,
    slo_ttft_ms: Annotated[float | None, typer.Option(help="SLO: time to first token target, ms.")] = None,
    slo_tpot_ms: Annotated[float | None, typer.Option(help="SLO: time per output token target, ms.")] = None,
    slo_itl_ms: Annotated[float | None, typer.Option(help="SLO: inter-token latency target, ms.")] = None,
    slo_quantile: Annotated[
        float | None, typer.Option(help="SLO: fraction of requests that must meet every target [0.9].")
    ] = None,
    sweep_margin: Annotated[
        float | None,
        typer.Option(help="Stop the concurrency levels once aggregate tok/s rises less than this fraction (0.05)."),
    ] = None,
    extra_body: Annotated[
        str | None,
        typer.Option(
            help='JSON object added to every request body, e.g. \'{"samplers": ["temperature"]}\' (llama.cpp).'
        ),
    ] = None,
    synthetic: Annotated[
        bool, typer.Option(help="Mark the model as synthetic (random weights); `--synthetic SHAPE`: see --shape.")
    ] = False,
    telemetry: Annotated[SamplerKind | None, typer.Option(help=r"Power sampler \[auto: the first that works].")] = None,
    telemetry_hz: Annotated[float | None, typer.Option(help="Power samples per second [10].")] = None,
    engine_metrics: Annotated[
        EngineMetricsKind | None,
        typer.Option(help=r"Engine-side metrics to scrape (queue, KV-cache) \[auto: probe the engine]."),
    ] = None,
    no_prefect: Annotated[
        bool, typer.Option("--no-prefect", help="Run the same steps without Prefect (faster start).")
    ] = False,
    image: Annotated[
        str | None, typer.Option(help="Start this engine image (reference or catalog name) as a container.")
    ] = None,
    docker_host: Annotated[
        str | None, typer.Option(help="Docker host for --image: unix://..., tcp://host:2376 (TLS), ssh://user@host.")
    ] = None,
    gpu_vendor: Annotated[GpuVendor | None, typer.Option(help=r"GPUs to hand to the --image container \[cpu].")] = None,
    gpus: Annotated[
        str | None,
        typer.Option(help="Which GPUs: all, a count (NVIDIA), or device=ID,... (NVIDIA ids; AMD render nodes)."),
    ] = None,
    hardware: Annotated[str | None, typer.Option(help="Price-table hardware key of this host.")] = None,
    site: Annotated[str | None, typer.Option(help="Price-table site key (electricity, PUE).")] = None,
    utilisation: Annotated[float | None, typer.Option(help="Assumed utilisation, 0-1 [0.5].")] = None,
    shape_tolerance: Annotated[
        float | None,
        typer.Option(
            help="Flag a run whose mean input or output tokens (server-counted) differ from the asked by more than "
            "this fraction [0.10]; also TCOBENCH_SHAPE_TOLERANCE.",
            min=0,
            max=10,
        ),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option("--yes", help="Measure even when the estimate is over 30 min on the embedded CPU engine."),
    ] = False,
    partial_threshold: PartialThresholdOpt = 0.05,
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
) -> None:
    """Start the engine (or use --endpoint), warm up, measure, store every request, print cost per 1M tokens.

    Exit status: 0 ok; 1 an error before measuring (also: the estimate after warm-up is over 30 min on the embedded
    CPU engine and --yes was not given); 3 a run failed (every measured request failed, or the engine
    died); 4 a run lost more than --partial-threshold of its requests or hit --deadline; 130/143/129 stopped by
    SIGINT/SIGTERM/SIGHUP (finished requests are kept as an interrupted run).
    """
    from tcobench.tasks.config import load_config_sourced
    from tcobench.tasks.load_limits import check_load
    from tcobench.tasks.prices import check_keys, load_prices
    from tcobench.tasks.store import check_store

    if no_prefect:
        os.environ["TCOBENCH_PREFECT"] = "off"
    if shape_tolerance is not None:
        os.environ["TCOBENCH_SHAPE_TOLERANCE"] = repr(shape_tolerance)  # view run_shape reads it (tasks.query)
    if api_key:
        os.environ["TCOBENCH_API_KEY"] = api_key  # read from the environment where used; never stored
    settings = settings_for(store)
    overrides = _overrides(**{k: v for k, v in locals().items() if k != "api_key"})
    if prices_file is not None:
        overrides["pricing"]["table"] = str(prices_file)
    config, sources = load_config_sourced(config_file, overrides, FLAG_NAMES)
    warn_claim_shortfalls([config.workload])
    prices = load_prices(config.pricing.table)
    flags = {"hardware": "--hardware", "site": "--site"}
    named = {k: flag for k, flag in flags.items() if overrides["pricing"].get(k) is not None}
    check_keys(prices, config.pricing, str(config_file) if config_file else "default", named)
    check_load(config.workload)  # a level this process cannot open is refused; one the plan cannot reach, warned
    check_store(settings.store)  # before Prefect and the engine start: a bad store fails in a second, not later
    options = RunOptions(sources, yes)
    try:
        with measuring(settings) as children:
            _run_flow(config, prices, settings, partial_threshold, children, options)
    except Interrupted as exc:
        if options.prefect_server is not None:
            _exit_now(exc, options.prefect_server)
        raise


def _exit_now(exc: Interrupted, server: int) -> None:
    """After a signal, once the kept runs are stored and summarised: the one line, then exit without Prefect's own exit
    work (its in-process server takes seconds to stop: docs/performance.md#prefect-server-stop; its flow run has already
    ended). Its server is told to stop now, and dies with this process in any case (a death signal)."""
    import signal
    import sys

    from ._common import print_error

    print_error(exc.kind, escape(str(exc)))
    with contextlib.suppress(OSError):
        os.kill(server, signal.SIGTERM)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(exc.exit_code))


@dataclass
class RunOptions:
    sources: dict[str, str]  # each workload field's source: flag, config, preset, default
    yes: bool = False  # measure even when the estimate is long
    prefect_server: int | None = None  # pid of the Prefect API server this run started


def _kept(store: StoreRef, prices: Any, batch_id: str, sources: dict[str, str], workload: Any) -> str:
    """One line: which runs of this batch are stored, with their measured requests; their summary on stdout first,
    as at the end of a run (one connection: after a signal, the exit must not wait for several)."""
    import duckdb

    from tcobench.errors import TcobenchError
    from tcobench.tasks.query import connect
    from tcobench.tasks.shape import shapes_of
    from tcobench.tasks.summarise import SUMMARY_VIEWS, summary_of

    try:
        con = connect(store, prices, needs=(*SUMMARY_VIEWS, "run_shape"))
        try:
            rows = con.execute(
                "SELECT run_id, concurrency, status, n, ok FROM run_summary WHERE batch_id = $b ORDER BY started",
                {"b": batch_id},
            ).fetchall()
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
    runs = "; ".join(f"run {r[0][:8]} (concurrency {r[1]}) {r[2]}: {r[4]} of {r[3]} measured requests ok"
                     for r in rows)  # fmt: skip
    return f"kept {len(rows)} run(s) of batch {batch_id[:8]} in {store}: {runs}"


def _run_flow(
    config: Any, prices: Any, settings: Settings, partial_threshold: float, children: Any, options: RunOptions
) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    prefect_defaults()  # before importing tcobench.flows: it imports (and configures) Prefect when enabled
    from tcobench.flows import prefect_enabled, start_api_server

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
    from tcobench.tasks.runs import check_runs, new_id

    pulls = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err
    )  # fmt: skip  (model pulls while an engine starts)
    embedded = config.engine.kind is EngineKind.embedded
    display = RunDisplay(err, config.workload, embedded, options.yes)
    batch_id = new_id()
    try:
        with display:
            result = benchmark(config, prices, settings.store, settings.host_name, settings.model_cache,
                               display.on_request, on_event=engine_event_printer(pulls), batch_id=batch_id,
                               watcher=display)  # fmt: skip
    except StoreError as exc:  # e.g. a full disk: the runs committed before it are still summarised
        if exc.stored is not None and exc.stored.run_ids:
            _print_result(exc.stored, settings, config.workload, options.sources, prices)
        raise
    except Interrupted as exc:
        kept = _kept(settings.store, prices, batch_id, options.sources, config.workload)
        raise Interrupted(f"{str(exc).split(':')[0]}: {kept}", exc.exit_code) from None
    finally:
        if pulls.live.is_started:
            pulls.stop()
    _print_result(result, settings, config.workload, options.sources, prices)
    counts = {r["run_id"]: (r["n"], r["errors"]) for r in result.run_rows.to_pylist()}
    check_runs(result.runs, counts, partial_threshold)


def _shapes(store: StoreRef, prices: Any, run_ids: list[str]) -> Any:
    """View run_shape of these runs; None (the row shows "-") when it cannot be read."""
    import duckdb

    from tcobench.errors import TcobenchError
    from tcobench.tasks.shape import run_shapes

    try:
        return run_shapes(store, prices, run_ids)
    except (TcobenchError, duckdb.Error):
        return None


def _print_result(result: Any, settings: Settings, workload: Any, sources: dict[str, str], prices: Any) -> None:
    shapes = _shapes(settings.store, prices, result.run_ids)
    print_runs(result.summary.runs, result.summary.tco, result.summary.goodput, shapes)
    print_assumptions(result.summary.tco, result.summary.sources)
    print_workload(workload, sources)
    for warning in sorted({r.identity_warning for r in result.runs if r.identity_warning}):
        err.print(f"[yellow]warning[/]: {escape(warning)}", soft_wrap=True)
    if result.sweep_stop is not None:
        out.print(f"sweep stopped: {result.sweep_stop}", highlight=False)
    out.print(f"stored {len(result.run_ids)} run(s) in {settings.store} (batch {result.batch_id})", highlight=False)


def _accuracy(
    questions: Annotated[int, typer.Option(help="Bundled exact-answer questions to ask (made from the seed 42).")] = 40,
    config_file: Annotated[Path | None, typer.Option("--config", "-c", help="Benchmark config (TOML).")] = None,
    endpoint: Annotated[str | None, typer.Option(help="Ask a running server at this URL instead.")] = None,
    protocol: Annotated[Protocol | None, typer.Option(help="Wire protocol of --endpoint.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name as the server knows it.")] = None,
    model_path: Annotated[Path | None, typer.Option(help="GGUF file for the embedded engine.")] = None,
    chat: Annotated[bool | None, typer.Option("--chat/--completion", help="Chat or plain completion API.")] = None,
    image: Annotated[str | None, typer.Option(help="Start this engine image as a container.")] = None,
    no_prefect: Annotated[bool, typer.Option("--no-prefect", help="Run without Prefect (faster start).")] = False,
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
) -> None:
    """Ask the engine N bundled exact-answer questions (integer arithmetic, list lookups) at temperature 0, one at
    a time, and store the answers as a run of workload accuracy-N-seed42; `tcobench compare` scores each side and
    its claim-grade accuracy rule compares the scores (docs/claim-grade.md)."""
    _run(config_file=config_file, endpoint=endpoint, protocol=protocol, model=model, model_path=model_path, chat=chat,
         image=image, no_prefect=no_prefect, prices_file=prices_file, store=store, accuracy=questions,
         concurrency=[1], warmup=1)  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command("run")(guard(_run))
    app.command("accuracy")(guard(_accuracy))
