"""The scraper interface and its registry keyed by ``schemas.EngineMetricsKind``.

A scraper reads, at one instant, what the engine says about its own load from the engine's own endpoint;
``tasks.host.engine_metrics.session`` calls it at a fixed rate in a background thread and turns the samples into
EngineMetricRecord rows. A scraper's constructor probes the endpoint once and raises ScraperUnavailable with the
reason when the engine does not offer it (that reason ends up in the run row).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from tcobench.schemas import EngineMetricsKind, EngineQuantity
from tcobench.tasks._registry import Registry

__all__ = ["Sample", "Scraper", "ScraperUnavailable", "get_ok", "register", "scraper_class"]


class ScraperUnavailable(Exception):
    """The engine offers no such endpoint; the message says why."""


@dataclass(frozen=True)
class Sample:
    """One value the engine reported, in its own name and units."""

    metric: str
    quantity: EngineQuantity
    value: float
    labels: dict[str, str] | None = None

    def labels_json(self) -> str | None:
        return json.dumps(self.labels, sort_keys=True, separators=(",", ":")) if self.labels else None


class Scraper(ABC):
    kind: EngineMetricsKind
    source: str  # value of EngineMetricRecord.source and RunRecord.engine_metrics_source

    @abstractmethod
    def __init__(self, client: httpx.Client, base_url: str) -> None:
        """Probe the endpoint; raise ScraperUnavailable with the reason if the engine does not offer it."""

    @abstractmethod
    def read(self) -> list[Sample]:
        """The samples of one scrape; raises (httpx.HTTPError, ValueError) when the scrape failed."""


def get_ok(client: httpx.Client, url: str) -> httpx.Response:
    """GET ``url``; ScraperUnavailable naming the URL and the answer unless it is HTTP 200."""
    try:
        response = client.get(url)
    except httpx.HTTPError as exc:
        raise ScraperUnavailable(f"GET {url} failed: {type(exc).__name__}: {exc}") from exc
    if response.status_code != 200:
        raise ScraperUnavailable(f"GET {url} answered HTTP {response.status_code}")
    return response


_REGISTRY: Registry[EngineMetricsKind, type[Scraper]] = Registry("engine metrics scraper", instances=False)


def register(kind: EngineMetricsKind, source: str) -> Callable[[type[Scraper]], type[Scraper]]:
    return _REGISTRY.register(kind, kind=kind, source=source)


def scraper_class(kind: EngineMetricsKind) -> type[Scraper]:
    return _REGISTRY[kind]
