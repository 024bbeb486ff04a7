"""start_engine_metrics / stop_engine_metrics: scrape the engine's own metrics while a run is measured.

Why throughput saturates is in the engine: requests waiting in its queue, KV-cache full, preemptions. One
scraper module per engine (``schemas.EngineMetricsKind``): llama.cpp (``/metrics`` + ``/slots``), vLLM
(``/metrics``), Ollama (``/api/ps``). ``auto`` probes them in that order; the run row says which answered
(``engine_metrics_source``) or why none did (``engine_metrics_note``). Rows go to the ``engine_metrics`` table
beside ``telemetry``; view ``engine_load`` summarises them per run.
"""

from __future__ import annotations

import httpx

from tcobench.schemas import EngineMetricRecord, EngineMetricsKind, TelemetryConfig
from tcobench.tasks.host.engine_metrics import llama_cpp, ollama, vllm  # noqa: F401  (importing registers the scrapers)
from tcobench.tasks.host.engine_metrics.base import Sample, Scraper, ScraperUnavailable, scraper_class
from tcobench.tasks.host.engine_metrics.session import ScrapeSession
from tcobench.tasks.load.record import RunContext
from tcobench.tasks.tls import tls_context

__all__ = [
    "Sample",
    "ScrapeSession",
    "Scraper",
    "ScraperUnavailable",
    "open_scraper",
    "start_engine_metrics",
    "stop_engine_metrics",
]

_AUTO = (EngineMetricsKind.llama_cpp, EngineMetricsKind.vllm, EngineMetricsKind.ollama)
_TIMEOUT = httpx.Timeout(5.0, connect=2.0)


def open_scraper(kind: EngineMetricsKind, client: httpx.Client, base_url: str) -> tuple[Scraper | None, str | None]:
    """(scraper, None) or (None, why the engine's metrics are not scraped)."""
    if kind is EngineMetricsKind.none:
        return None, "engine metrics switched off (telemetry.engine_metrics = none)"
    reasons = []
    for candidate in _AUTO if kind is EngineMetricsKind.auto else (kind,):
        try:
            return scraper_class(candidate)(client, base_url.rstrip("/")), None
        except ScraperUnavailable as exc:
            reasons.append(f"{candidate.value}: {exc}")
    return None, "no engine metrics endpoint: " + "; ".join(reasons)


def start_engine_metrics(
    config: TelemetryConfig, base_url: str, ctx: RunContext, transport: httpx.BaseTransport | None = None
) -> ScrapeSession:
    """Probe the engine at ``base_url`` and start scraping it (``config.engine_metrics_hz`` per second)."""
    client = httpx.Client(timeout=_TIMEOUT, trust_env=False, verify=tls_context(), transport=transport)
    scraper, note = open_scraper(config.engine_metrics, client, base_url)
    session = ScrapeSession(scraper, client, (ctx.run_id, ctx.date, ctx.host), config.engine_metrics_hz, note)
    session.start()
    return session


def stop_engine_metrics(session: ScrapeSession) -> list[EngineMetricRecord]:
    """Stop scraping; the rows for the engine_metrics table."""
    return session.stop()
