"""exposition: the store's key figures as Prometheus metrics (`tcobench metrics`, docs/prometheus.md), as a file for
node_exporter's textfile collector and as an HTTP endpoint; one renderer serves both.

Every sample is a row of the macro metric_rows (tcobench/sql/macros/metric_rows.sql: its header names each metric,
the view column it reads and its unit); this module only groups the rows into metric families and writes them in
the text exposition format (version 0.0.4) with ``prometheus_client``. Every column of a row other than metric,
type, help and value is a label, left out where NULL. The endpoint reads the store again at each scrape, so it
serves the store as it is then; a scrape that cannot read it is answered 500 with one line, and logged as one
warning line (no traceback).
"""

from __future__ import annotations

import logging
import socket
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import duckdb
from prometheus_client import CollectorRegistry, generate_latest, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from tcobench.errors import ConfigError, StoreError, TcobenchError
from tcobench.schemas import PriceTable
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.rows import arrow_of
from tcobench.tasks.store.store import StoreRef

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

__all__ = [
    "DEFAULT_TARGETS",
    "METRIC_ROWS_SQL",
    "MetricRows",
    "metric_families",
    "metric_rows",
    "render_metrics",
    "serve_metrics",
    "write_metrics",
    "write_textfile",
]

METRIC_ROWS_SQL = "SELECT * FROM metric_rows($targets)"  # macro metric_rows (tcobench/sql/macros)
DEFAULT_TARGETS = (20.0, 50.0, 100.0)  # interactivity targets, tok/s per user (`tcobench metrics --interactivity`)
_NOT_LABELS = frozenset({"metric", "type", "help", "value"})

MetricRows = Callable[[], Sequence[dict[str, Any]]]

_log = logging.getLogger(__name__)


def metric_rows(
    store: StoreRef, prices: PriceTable, targets: Sequence[float], snapshot: int | None = None
) -> list[dict[str, Any]]:
    """The rows of macro metric_rows over ``store``: one per sample, ``targets`` the interactivity targets."""
    con = connect(store, prices, needs=("metric_rows",), snapshot=snapshot)
    try:
        rows: list[dict[str, Any]] = arrow_of(
            con, METRIC_ROWS_SQL, {"targets": [float(t) for t in targets]}
        ).to_pylist()
    finally:
        con.close()
    return rows


def metric_families(rows: Iterable[dict[str, Any]]) -> list[Metric]:
    """The rows as metric families, in the rows' order (a counter's family is its name less ``_total``)."""
    found: dict[str, Metric] = {}
    for row in rows:
        name = str(row["metric"])
        family_name = name.removesuffix("_total") if row["type"] == "counter" else name
        family = found.get(family_name)
        if family is None:
            family = found[family_name] = Metric(family_name, str(row["help"]), str(row["type"]))
        labels = {k: str(v) for k, v in row.items() if k not in _NOT_LABELS and v is not None}
        family.add_sample(name, labels, float(row["value"]))
    return list(found.values())


class _StoreCollector(Collector):
    """Reads the rows at each collection (each scrape, each render)."""

    def __init__(self, read: MetricRows) -> None:
        self._read = read

    def collect(self) -> Iterator[Metric]:
        yield from metric_families(self._read())


def _registry(read: MetricRows) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_StoreCollector(read))
    return registry


def render_metrics(read: MetricRows) -> str:
    """The text exposition of the rows ``read`` returns."""
    return generate_latest(_registry(read)).decode("utf-8")


def write_textfile(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (a temporary file beside it renamed into place: the textfile collector
    never reads half a file; its name starts with a dot and ends in .tmp, so the collector's *.prom glob skips it)."""
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise StoreError(f"--textfile {path}: cannot write the metrics file: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_metrics(store: StoreRef, prices: PriceTable, path: Path, targets: Sequence[float] = DEFAULT_TARGETS) -> Path:
    """Render the store's metrics and write them to ``path`` atomically (the nightly's Settings.metrics_textfile)."""
    return write_textfile(path, render_metrics(lambda: metric_rows(store, prices, targets)))


class _QuietHandler(WSGIRequestHandler):
    """No access-log line per scrape on stderr."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the name of the overridden parameter
        pass


def _answering_failures(app: WSGIApplication) -> WSGIApplication:
    """``app``, with a scrape that cannot read the store answered 500 and one line (body and warning)."""

    def wrapped(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        try:
            return app(environ, start_response)
        except (TcobenchError, duckdb.Error, OSError) as exc:
            line = f"cannot read the store: {' '.join(str(exc).split())}"
            _log.warning("metrics scrape: %s", line)
            start_response("500 Internal Server Error", [("Content-Type", "text/plain; charset=utf-8")])
            return [f"{line}\n".encode()]

    return wrapped


def serve_metrics(address: str, port: int, read: MetricRows) -> tuple[WSGIServer, threading.Thread]:
    """Answer GET /metrics (any path) on ``address``:``port`` from a daemon thread: (the server, its thread); port 0
    takes a free port (``server.server_port``). ConfigError when the address cannot be bound. A scrape that cannot
    read the store: HTTP 500 with one line, and one warning line (logger ``tcobench.tasks.report.exposition``)."""

    class Server(ThreadingWSGIServer):
        """prometheus_client's threading server, with the address's family (IPv4 or IPv6)."""

    try:
        Server.address_family = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)[0][0]
        server = make_server(
            address, port, _answering_failures(make_wsgi_app(_registry(read))), Server, handler_class=_QuietHandler
        )
    except OSError as exc:
        raise ConfigError(f"--port {port}: cannot listen on {address}:{port}: {exc}") from exc
    thread = threading.Thread(target=server.serve_forever, name="tcobench-metrics", daemon=True)
    thread.start()
    return server, thread
