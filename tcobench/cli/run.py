"""`tcobench run`: start the engine (or use an endpoint), warm up, measure, store, print cost per 1M tokens."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from tcobench.schemas import GpuVendor, Phase, Protocol, RequestRecord, SamplerKind
from tcobench.settings import Settings

from ._common import PricesOpt, StoreOpt, err, guard, json_object, out, prefect_defaults, settings_for
from ._runs_table import print_assumptions, print_runs
from .images import container_overrides, engine_event_printer

__all__ = ["register"]


def _overrides(**cli: Any) -> dict[str, Any]:
    endpoint = cli["endpoint"]
    if endpoint is not None and cli["model"] is None:
        raise typer.BadParameter(
            "--model is required with --endpoint (the name the server serves)", param_hint="--model"
        )
    return {
        "engine": {
            "kind": "endpoint" if endpoint else ("container" if cli["image"] else None),
            "url": endpoint,
            "protocol": cli["protocol"].value if cli["protocol"] else None,
            "chat": cli["chat"],
            "container": container_overrides(cli["image"], cli["docker_host"], cli["gpu_vendor"], cli["gpus"]),
        },
        "model": {
            "name": cli["model"],
            "path": str(cli["model_path"]) if cli["model_path"] else None,
            "synthetic": cli["synthetic"] or None,
        },
        "workload": {
            "preset": cli["preset"],
            "requests": cli["requests"],
            "warmup_requests": cli["warmup"],
            "concurrency": list(cli["concurrency"]) if cli["concurrency"] else None,
            "max_tokens": cli["max_tokens"],
            "input_tokens": cli["input_tokens"],
            "output_tokens": cli["output_tokens"],
            "mode": "poisson" if cli["rate"] else None,
            "rate": cli["rate"],
            "ignore_eos": cli["ignore_eos"],
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
        "telemetry": {"sampler": cli["telemetry"].value if cli["telemetry"] else None, "hz": cli["telemetry_hz"]},
        "pricing": {"hardware": cli["hardware"], "site": cli["site"], "utilisation": cli["utilisation"]},
    }


def _run(
    config_file: Annotated[Path | None, typer.Option("--config", "-c", help="Benchmark config (TOML).")] = None,
    endpoint: Annotated[str | None, typer.Option(help="Measure a running server at this URL instead.")] = None,
    protocol: Annotated[Protocol | None, typer.Option(help="Wire protocol of --endpoint.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name as the server knows it.")] = None,
    model_path: Annotated[Path | None, typer.Option(help="GGUF file for the embedded engine.")] = None,
    chat: Annotated[bool | None, typer.Option("--chat/--completion", help="Chat or plain completion API.")] = None,
    requests: Annotated[int | None, typer.Option(help="Measured requests per run [20].")] = None,
    warmup: Annotated[int | None, typer.Option(help="Warm-up requests per run [1].")] = None,
    concurrency: Annotated[list[int] | None, typer.Option(help="Concurrency level; repeat for several [1, 2].")] = None,
    rate: Annotated[float | None, typer.Option(help="Open-loop Poisson arrival rate, requests/s.")] = None,
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
    preset: Annotated[
        str | None, typer.Option(help="Named workload shape (`tcobench presets`), e.g. chat-1k-1k; flags override it.")
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
    synthetic: Annotated[bool, typer.Option(help="Mark the model as synthetic (random weights).")] = False,
    telemetry: Annotated[SamplerKind | None, typer.Option(help=r"Power sampler \[auto: the first that works].")] = None,
    telemetry_hz: Annotated[float | None, typer.Option(help="Power samples per second [10].")] = None,
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
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
) -> None:
    """Start the engine (or use --endpoint), warm up, measure, store every request, print cost per 1M tokens."""
    from tcobench.tasks.config import load_config
    from tcobench.tasks.prices import check_keys, load_prices

    if no_prefect:
        os.environ["TCOBENCH_PREFECT"] = "off"
    settings = settings_for(store)
    overrides = _overrides(**locals())
    if prices_file is not None:
        overrides["pricing"]["table"] = str(prices_file)
    config = load_config(config_file, overrides)
    prices = load_prices(config.pricing.table)
    check_keys(prices, config.pricing, where=str(config.pricing.table or "shipped price table"))
    _run_flow(config, prices, settings)


def _run_flow(config: Any, prices: Any, settings: Settings) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    prefect_defaults()  # before importing tcobench.flows: it imports (and configures) Prefect when enabled
    from tcobench.flows import prefect_enabled

    if prefect_enabled():
        err.print("[dim]starting Prefect (in-process API server) and the engine...[/]")
    else:
        err.print("[dim]starting the engine (Prefect off)...[/]")
    from tcobench.flows import benchmark

    w = config.workload
    total = None if w.duration_s is not None else (w.warmup_requests + w.requests) * len(w.concurrency)
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=err)  # fmt: skip
    bar = progress.add_task("requests (0 errors)", total=total)
    errors = 0

    def on_request(record: RequestRecord) -> None:
        nonlocal errors
        if not progress.live.is_started:  # shown from the first finished request on
            progress.start()
        errors += record.error is not None
        phase = "warm-up" if record.phase is Phase.warmup else "measure"
        progress.update(bar, advance=1, description=f"{phase} ({errors} errors)")

    try:
        result = benchmark(config, prices, settings.store, settings.host_name, settings.model_cache, on_request,
                           on_event=engine_event_printer(progress))  # fmt: skip
    finally:
        if progress.live.is_started:
            progress.stop()
    print_runs(result.summary.runs, result.summary.tco, result.summary.goodput)
    print_assumptions(result.summary.tco, result.summary.sources)
    if result.sweep_stop is not None:
        out.print(f"sweep stopped: {result.sweep_stop}", highlight=False)
    out.print(f"stored {len(result.run_ids)} run(s) in {settings.store} (batch {result.batch_id})", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("run")(guard(_run))
