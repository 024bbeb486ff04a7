"""Command line: a thin face over the flows and the SQL views. Errors cross it as one line."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import pyarrow as pa
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tcobench.cli_options import PricesOpt, StoreOpt
from tcobench.errors import TcobenchError
from tcobench.schemas import SHAPES, GpuVendor, Phase, Protocol, RequestRecord, SamplerKind
from tcobench.settings import Settings

__all__ = ["app", "main"]

app = typer.Typer(
    name="tcobench",
    help="Measure LLM inference engines on your own hosts and price the tokens (TCO per 1M tokens).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


def _settings(store: Path | None) -> Settings:
    settings = Settings()
    return settings.model_copy(update={"store": store}) if store is not None else settings


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:g}"


def _usd(value: Any) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "$0"
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:,.4f}"


_RUNS_PER_TABLE = 6
_METRICS: list[tuple[str, Callable[[dict[str, Any], dict[str, Any]], str]]] = [
    ("model", lambda r, c: str(r["model_name"])),
    ("engine", lambda r, c: f"{r['engine_name']}"),
    ("workload / mode", lambda r, c: f"{r['workload']} / {r['load_mode']}"),
    ("concurrency", lambda r, c: str(r["concurrency"])),
    ("status", lambda r, c: str(r["status"])),
    ("requests measured / errors", lambda r, c: f"{r['n']} / {r['errors']}"),
    ("TTFT p50 / p90 / p99 (ms)", lambda r, c: " / ".join(_fmt(r[f"ttft_{p}_ms"]) for p in ("p50", "p90", "p99"))),
    ("ITL p50 / p90 / p99 (ms)", lambda r, c: " / ".join(_fmt(r[f"itl_{p}_ms"]) for p in ("p50", "p90", "p99"))),
    ("e2e p50 / p90 / p99 (ms)", lambda r, c: " / ".join(_fmt(r[f"e2e_{p}_ms"], 0) for p in ("p50", "p90", "p99"))),
    (
        "decode tok/s per request, mean / p50",
        lambda r, c: f"{_fmt(r['req_decode_tok_s_mean'])} / {_fmt(r['req_decode_tok_s_p50'])}",
    ),
    ("engine-reported decode tok/s, mean", lambda r, c: _fmt(r["server_decode_tok_s_mean"])),
    ("aggregate output tok/s", lambda r, c: _fmt(r["output_tok_s"])),
    ("aggregate total tok/s", lambda r, c: _fmt(r["total_tok_s"])),
    ("cost per 1M output tokens", lambda r, c: _usd(c.get("usd_per_m_output_tokens"))),
    ("cost per 1M total tokens", lambda r, c: _usd(c.get("usd_per_m_total_tokens"))),
]


def _print_runs(runs: pa.Table, tco: pa.Table) -> None:
    """One column per run (metrics down the side), a table per six runs."""
    costs = {row["run_id"]: row for row in tco.to_pylist()}
    rows = runs.to_pylist()
    for start in range(0, len(rows), _RUNS_PER_TABLE):
        chunk = rows[start : start + _RUNS_PER_TABLE]
        table = Table(title="Measured runs (warm-up excluded)", header_style="bold")
        table.add_column("metric")
        for row in chunk:
            table.add_column(f"run {row['run_id'][:8]}", justify="right")
        for label, cell in _METRICS:
            table.add_row(label, *[escape(cell(row, costs.get(row["run_id"], {}))) for row in chunk])
        out.print(table)


def _print_assumptions(tco: pa.Table, sources: pa.Table) -> None:
    """The cost terms per month with their inputs, and where each price comes from."""
    seen: set[tuple[Any, ...]] = set()
    cited = {(s["run_id"], s["term"]): s for s in sources.to_pylist()}
    for row in tco.to_pylist():
        key = (row["hardware_key"], row["site_key"], row["ops_key"], row["utilisation"])
        if key in seen:
            continue
        seen.add(key)
        lt = row["lifetime_months"]
        table = Table(title=f"Cost per month behind those numbers: {row['hardware_key']}", header_style="bold")
        for name in ("term", "USD/month", "inputs"):
            table.add_column(name, justify="right" if name == "USD/month" else "left")
        table.add_row(
            "hardware",
            _usd(row["hardware_usd_month"]),
            f"({_usd(row['purchase_usd'])} + {_usd(row['server_share_usd'])} server share) / {lt} months",
        )
        table.add_row(
            "power",
            _usd(row["power_usd_month"]),
            f"{_fmt(row['power_w'])} W x PUE {row['pue']} x {_num(row['hours_per_month'])} h x "
            f"{_usd(row['kwh_usd'])}/kWh ({row['power_basis']})",
        )
        table.add_row(
            "ops labour",
            _usd(row["ops_usd_month"]),
            f"{_num(row['ops_hours_per_month'])} h x {_usd(row['hourly_usd'])}/h",
        )
        table.add_row(
            "adaptation",
            _usd(row["adaptation_usd_month"]),
            f"{_num(row['adaptation_days'])} days x {_usd(row['daily_usd'])}/day / {lt} months",
        )
        table.add_row(
            "total",
            _usd(row["total_usd_month"]),
            f"tokens/month = aggregate tok/s x 3600 x {_num(row['hours_per_month'])} h x "
            f"utilisation {row['utilisation']:.0%}",
        )
        for term in ("hardware", "site", "ops"):
            src = cited.get((row["run_id"], term), {})
            table.add_row(
                f"source: {term}", "", f"{row[f'{term}_key']}: {src.get('source')} (as of {src.get('as_of')})"
            )
        out.print(table)  # fmt: skip


def _guard(fn: F) -> F:
    """Our own errors become one line on stderr and exit code 1; anything else is a bug."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TcobenchError as exc:
            err.print(f"[bold red]{exc.kind}[/]: {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def _prefect_defaults() -> None:
    """Quiet, patient defaults for Prefect's in-process (ephemeral) API server; the user's env wins."""
    # Our errors reach the CLI as exceptions and print as one line; Prefect would log each with a traceback.
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # no network here; avoids an error line


def _json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(
            f"not JSON ({exc.msg} at character {exc.pos}): {text[:80]!r}", param_hint=option
        ) from exc
    if not isinstance(value, dict):
        raise typer.BadParameter(f"must be a JSON object, got {type(value).__name__}: {text[:80]!r}", param_hint=option)
    return value


def _overrides(**cli: Any) -> dict[str, Any]:
    endpoint = cli["endpoint"]
    if endpoint is not None and cli["model"] is None:
        raise typer.BadParameter(
            "--model is required with --endpoint (the name the server serves)", param_hint="--model"
        )
    from tcobench.cli_docker import container_overrides

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
            "extra_body": _json_object(cli["extra_body"], "--extra-body") if cli["extra_body"] else None,
        },
        "telemetry": {"sampler": cli["telemetry"].value if cli["telemetry"] else None, "hz": cli["telemetry_hz"]},
        "pricing": {"hardware": cli["hardware"], "site": cli["site"], "utilisation": cli["utilisation"]},
    }


@app.command()
@_guard
def run(
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
    settings = _settings(store)
    overrides = _overrides(**locals())
    if prices_file is not None:
        overrides["pricing"]["table"] = str(prices_file)
    config = load_config(config_file, overrides)
    prices = load_prices(config.pricing.table)
    check_keys(prices, config.pricing, where=str(config.pricing.table or "shipped price table"))
    _run_flow(config, prices, settings)


def _run_flow(config: Any, prices: Any, settings: Settings) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    _prefect_defaults()  # before importing tcobench.flows: it imports (and configures) Prefect when enabled
    from tcobench.flows import prefect_enabled

    if prefect_enabled():
        err.print("[dim]starting Prefect (in-process API server) and the engine...[/]")
    else:
        err.print("[dim]starting the engine (Prefect off)...[/]")
    from tcobench.cli_docker import engine_event_printer
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
    _print_runs(result.summary.runs, result.summary.tco)
    _print_assumptions(result.summary.tco, result.summary.sources)
    out.print(f"stored {len(result.run_ids)} run(s) in {settings.store} (batch {result.batch_id})", highlight=False)


@app.command()
@_guard
def summary(
    run_id: Annotated[
        list[str] | None, typer.Option("--run", help="Run id (or prefix); repeatable. Default: all.")
    ] = None,
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
) -> None:
    """Per run: n, errors, TTFT/ITL/e2e p50/p90/p99, tok/s, cost per 1M tokens with its assumptions."""
    from tcobench.errors import QueryError
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.summarise import summarise

    settings = _settings(store)
    result = summarise(settings.store, load_prices(prices_file))
    if run_id:
        keep = [r for r in result.runs.column("run_id").to_pylist() if any(r.startswith(p) for p in run_id)]
        if not keep:
            raise QueryError(f"no run matches {', '.join(run_id)} in {settings.store}")
        result = summarise(settings.store, load_prices(prices_file), keep)
    if result.runs.num_rows == 0:
        out.print(f"no runs stored in {settings.store} yet; try `tcobench run`")
        return
    _print_runs(result.runs, result.tco)
    _print_assumptions(result.tco, result.sources)


@app.command()
@_guard
def query(
    sql: Annotated[str, typer.Argument(help="One read-only SQL statement over the views.")],
    fmt: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
) -> None:
    """Read-only SQL over the views (runs, requests, telemetry, run_summary, tco, hardware, site, ops)."""
    from tcobench.errors import ConfigError
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.query import connect, read_only_query

    if fmt not in ("table", "csv", "json"):
        raise ConfigError(f"--format must be table, csv or json, got {fmt!r}")
    settings = _settings(store)
    con = connect(settings.store, load_prices(prices_file))
    try:
        result = read_only_query(con, sql)
    finally:
        con.close()
    _print_result(result, fmt)


def _print_result(result: pa.Table, fmt: str) -> None:
    rows = result.to_pylist()
    if fmt == "json":
        import json

        sys.stdout.write(json.dumps(rows, default=str, ensure_ascii=False, indent=1) + "\n")
        return
    if fmt == "csv":
        import csv

        writer = csv.writer(sys.stdout)
        writer.writerow(result.column_names)
        writer.writerows([[row[c] for c in result.column_names] for row in rows])
        return
    table = Table(header_style="bold")
    for name in result.column_names:
        table.add_column(name)
    for row in rows:
        table.add_row(*[_fmt(row[c], 3) for c in result.column_names])
    out.print(table)
    out.print(f"{len(rows)} row(s)", style="dim")


def main(argv: Sequence[str] | None = None) -> None:
    app(args=list(argv) if argv is not None else None, prog_name="tcobench")


models_app = typer.Typer(help="Synthetic models (random weights, real shapes) for hosts without downloads.")
app.add_typer(models_app, name="models")


@models_app.command("synth")
@_guard
def models_synth(
    shape: Annotated[str, typer.Option(help=f"Architecture shape: {', '.join(SHAPES)}.")],
    path_out: Annotated[Path, typer.Option("--out", help="GGUF file to write.")],
    tokenizer: Annotated[
        Path | None, typer.Option(help=r"GGUF to take the tokenizer from \[the bundled Gemma 3 model].")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random weights.")] = 0,
) -> None:
    """Write a random-weight F16 GGUF of a real architecture shape (rows measured on it say synthetic)."""
    from tcobench.errors import ConfigError
    from tcobench.tasks.engine.model import bundled_model
    from tcobench.tasks.models import synth_model

    if shape not in SHAPES:
        raise ConfigError(f"--shape {shape!r} is unknown; choose one of {', '.join(SHAPES)}")
    source = tokenizer or bundled_model(Settings().model_cache)[0]
    err.print(f"[dim]writing {shape} with the tokenizer of {source}...[/]")
    path = synth_model(SHAPES[shape], path_out, source, seed)
    size = path.stat().st_size / 2**30
    out.print(f"wrote {path} ({size:.2f} GiB): use --model-path {path}, or serve it and pass --synthetic")


@models_app.command("tokenizer")
@_guard
def models_tokenizer(
    path_out: Annotated[Path, typer.Option("--out", help="Tokenizer-only GGUF to write (a few MB).")],
    source: Annotated[Path | None, typer.Option("--from", help=r"GGUF to copy it from \[bundled Gemma 3].")] = None,
) -> None:
    """Copy a model's tokenizer into a small GGUF, to carry to a host that synthesises models offline."""
    from tcobench.tasks.engine.model import bundled_model
    from tcobench.tasks.models import write_tokenizer

    path = write_tokenizer(source or bundled_model(Settings().model_cache)[0], path_out)
    out.print(f"wrote {path} ({path.stat().st_size / 2**20:.1f} MiB)", highlight=False)


from tcobench.cli_docker import register_docker_commands  # noqa: E402  (needs the helpers above)

register_docker_commands(app)

from tcobench.cli_analytics import register as register_analytics_commands  # noqa: E402

register_analytics_commands(app)

from tcobench.cli_nightly import register_nightly_commands  # noqa: E402  (needs the helpers above)

register_nightly_commands(app)
