"""`tcobench metrics`: the store's key figures as Prometheus metrics (tasks/report/exposition.py): printed, written
atomically for node_exporter's textfile collector (--textfile), or served over HTTP (--port). A thin face: parse,
call the task, print.

A command of its own rather than a `serve --metrics-port` flag: `serve` needs a Prefect server and blocks in
Prefect's runner, while the metrics read the store alone (any store URI, read-only, as `query`), so they also work
on a machine that only reads a shared store, and a textfile needs no long-running process at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tcobench.cli._common import PricesOpt, SnapshotOpt, StoreOpt, err, guard

__all__ = ["register"]

_TARGETS = "20,50,100"  # tasks/report/exposition.py's DEFAULT_TARGETS (not imported: `--help` stays light)


def _metrics(
    textfile: Annotated[
        Path | None,
        typer.Option(
            "--textfile",
            help="Write the metrics to this file atomically (for node_exporter's textfile collector: a name "
            "ending in .prom in its --collector.textfile.directory) and exit.",
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option("--port", min=0, max=65535, help="Serve the metrics over HTTP on this port until stopped."),
    ] = None,
    address: Annotated[
        str, typer.Option("--address", help="The address --port listens on (0.0.0.0: every interface).")
    ] = "127.0.0.1",
    interactivity: Annotated[
        str,
        typer.Option(
            "--interactivity",
            help="Interactivity targets, tok/s per user, comma-separated: throughput and cost at each.",
        ),
    ] = _TARGETS,
    prices_file: PricesOpt = None,
    store: StoreOpt = None,
    snapshot: SnapshotOpt = None,
) -> None:
    """Expose the store's key figures as Prometheus metrics: printed, written to --textfile, or served on --port.

    Per platform and serving configuration, its last night's cost per 1M output tokens, output tok/s per GPU (and at
    the interactivity targets), TTFT/TPOT p50 and p90, energy per token and trend; availability and failed cells
    (docs/prometheus.md)."""
    import sys

    from tcobench.cli._common import read_settings
    from tcobench.tasks.analysis.compare.interactivity import parse_targets
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.report.exposition import metric_rows, render_metrics, serve_metrics, write_textfile

    if textfile is not None and port is not None:
        raise typer.BadParameter("give --textfile or --port, not both", param_hint="--textfile")
    targets = parse_targets(interactivity)
    settings = read_settings(store)
    prices = load_prices(prices_file)

    def read() -> list[dict[str, object]]:
        return metric_rows(settings.store, prices, targets, snapshot)

    text = render_metrics(read)  # before serving too: a store that cannot be read is one line now, not at a scrape
    if port is None:
        if textfile is None:
            sys.stdout.write(text)
        else:
            write_textfile(textfile, text)
        return
    import signal

    # Ctrl-C stops the server even when the shell that started it ignored SIGINT (a script's background job inherits
    # SIG_IGN, and Python then installs no KeyboardInterrupt handler of its own)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    server, thread = serve_metrics(address, port, read)
    err.print(f"serving metrics on http://{address}:{server.server_port}/metrics (Ctrl-C stops)", highlight=False)
    try:
        thread.join()
    finally:
        server.shutdown()
        server.server_close()


def register(app: typer.Typer) -> None:
    app.command("metrics")(guard(_metrics))
