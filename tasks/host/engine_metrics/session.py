"""A scraping session: a background thread reading the engine's metrics endpoint at a fixed rate.

Timestamps are wall-clock ns (``time.time_ns()`` when the scrape is sent), the clock request and telemetry rows
use, so views can cut the samples to a run's measurement window. One scrape is taken when the session starts and
one when it stops, so the samples bracket the window.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

from tcobench.schemas import EngineMetricRecord
from tcobench.tasks.host.engine_metrics.base import Scraper

__all__ = ["MAX_FAILURES_IN_A_ROW", "ScrapeSession"]

# The thread gives up after this many failed scrapes in a row: the engine is gone (a run that raised never reaches
# stop(), and a long-lived worker must not keep a thread scraping a stopped engine).
MAX_FAILURES_IN_A_ROW = 60


class ScrapeSession:
    """Collects EngineMetricRecord rows for one run until stopped; without a scraper it only carries the note."""

    def __init__(
        self, scraper: Scraper | None, client: httpx.Client, keys: tuple[str, str, str], hz: float, note: str | None
    ) -> None:
        self.scraper, self.client = scraper, client
        self.run_id, self.date, self.host = keys
        self.period_s = 1.0 / hz
        self.rows: list[EngineMetricRecord] = []
        self.failures = 0
        self.in_a_row = 0
        self.last_failure = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.facts: dict[str, Any] = {
            "engine_metrics_source": scraper.source if scraper else None,
            "engine_metrics_note": note,
        }

    def start(self) -> None:
        if self.scraper is not None:
            self._scrape()
            self._thread = threading.Thread(target=self._loop, name="tcobench-engine-metrics", daemon=True)
            self._thread.start()

    def _scrape(self) -> None:
        assert self.scraper is not None
        ts = time.time_ns()
        try:
            samples = self.scraper.read()
        except Exception as exc:  # a scrape must not end the run; count and go on
            self.failures += 1
            self.in_a_row += 1
            self.last_failure = f"{type(exc).__name__}: {exc}"
            return
        self.in_a_row = 0
        source = self.scraper.source
        self.rows.extend(
            EngineMetricRecord(
                run_id=self.run_id,
                date=self.date,
                host=self.host,
                ts_ns=ts,
                source=source,
                metric=s.metric,
                labels=s.labels_json(),
                quantity=s.quantity,
                value=s.value,
            )
            for s in samples
        )

    def _loop(self) -> None:
        due = time.monotonic() + self.period_s
        while not self._stop.wait(max(0.0, due - time.monotonic())):
            self._scrape()
            if self.in_a_row >= MAX_FAILURES_IN_A_ROW:
                return
            due += self.period_s

    def stop(self) -> list[EngineMetricRecord]:
        """Stop scraping (one last scrape closes the window), release the HTTP client and hand over the rows."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=10)
            self._thread = None
            self._scrape()
        self.client.close()
        if self.failures:
            self.facts["engine_metrics_note"] = f"{self.failures} scrape(s) failed, last: {self.last_failure}"
        return self.rows
