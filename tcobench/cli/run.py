"""`tcobench run`: start the engine (or use an endpoint), warm up, measure, store, print cost per 1M tokens."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from tcobench.schemas import EngineMetricsKind, GpuVendor, Phase, Protocol, RequestRecord, SamplerKind
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
            "requests": cli["requests"],
            "warmup_requests": cli["warmup"],
            "concurrency": list(cli["concurrency"]) if cli["concurrency"] else None,
            "max_tokens": cli["max_tokens"],
            "mode": "poisson" if cli["rate"] else None,
            "rate": cli["rate"],
            "ignore_eos": cli["ignore_eos"] or None,
            "extra_body": json_object(cli["extra_body"], "--extra-body") if cli["extra_body"] else None,
        },
        "telemetry": {
            "sampler": cli["telemetry"].value if cli["telemetry"] else None,
            "hz": cli["telemetry_hz"],
            "engine_metrics": cli["engine_metrics"].value if cli["engine_metrics"] else None,
        },
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
    max_tokens: Annotated[int | None, typer.Option(help="Output tokens per request [64].")] = None,
    ignore_eos: Annotated[bool, typer.Option(help="Ask for exactly --max-tokens tokens (llama.cpp, vLLM).")] = False,
    extra_body: Annotated[
        str | None,
        typer.Option(
            help='JSON object added to every request body, e.g. \'{"samplers": ["temperature"]}\' (llama.cpp).'
        ),
    ] = None,
    synthetic: Annotated[bool, typer.Option(help="Mark the model as synthetic (random weights).")] = False,
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
    total = (w.warmup_requests + w.requests) * len(w.concurrency)
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
    print_runs(result.summary.runs, result.summary.tco)
    print_assumptions(result.summary.tco, result.summary.sources)
    out.print(f"stored {len(result.run_ids)} run(s) in {settings.store} (batch {result.batch_id})", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("run")(guard(_run))
