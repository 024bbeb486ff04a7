"""A sampling session: a background thread reading a sampler at a fixed rate, phases marked.

Timestamps are wall-clock ns (``time.time_ns()``), the same clock the request rows use, so the
``energy`` view can cut telemetry to a run's measurement window.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tcobench.schemas import Phase, TelemetryPhase, TelemetryRecord
from tcobench.tasks.host.telemetry.base import Sampler

__all__ = ["TelemetrySession"]


class TelemetrySession:
    """Collects TelemetryRecord rows for one run until stopped; without a sampler it only carries the note."""

    def __init__(self, sampler: Sampler | None, run_id: str, date: str, host: str, hz: float, note: str | None) -> None:
        self.sampler, self.run_id, self.date, self.host = sampler, run_id, date, host
        self.period_s = 1.0 / hz
        self.phase = TelemetryPhase.idle
        self.rows: list[TelemetryRecord] = []
        self.failures = 0
        self.note = note
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.facts: dict[str, Any] = {"telemetry_source": sampler.source if sampler else None, "telemetry_note": note}
        if sampler is not None:
            self.facts.update(sampler.describe())

    def start(self) -> None:
        if self.sampler is not None:
            self._thread = threading.Thread(target=self._loop, name="tcobench-telemetry", daemon=True)
            self._thread.start()

    def set_phase(self, phase: Phase | TelemetryPhase) -> None:
        """Mark the samples from now on (measure calls this when warm-up and measurement start)."""
        self.phase = TelemetryPhase(phase.value)

    def _sample(self) -> None:
        assert self.sampler is not None
        phase = self.phase.value
        ts = time.time_ns()
        try:
            readings = self.sampler.read()
        except Exception:  # a sampler must not end the run; count and go on
            self.failures += 1
            return
        for r in readings:
            self.rows.append(
                TelemetryRecord(
                    run_id=self.run_id,
                    date=self.date,
                    host=self.host,
                    ts_ns=ts,
                    phase=phase,
                    source=self.sampler.source,
                    device_index=r.device_index,
                    device_uuid=r.device_uuid,
                    power_mw=r.power_mw,
                    energy_mj=r.energy_mj,
                    util_pct=r.util_pct,
                    mem_used_bytes=r.mem_used_bytes,
                    sm_clock_mhz=r.sm_clock_mhz,
                    temperature_c=r.temperature_c,
                    power_limit_mw=r.power_limit_mw,
                )
            )

    def _loop(self) -> None:
        due = time.monotonic()
        while not self._stop.is_set():
            self._sample()
            due += self.period_s
            self._stop.wait(max(0.0, due - time.monotonic()))

    def stop(self) -> list[TelemetryRecord]:
        """Stop sampling (one last sample closes the window) and hand over the rows."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=10)
            self._sample()
            self._thread = None
        if self.sampler is not None:
            self.sampler.close()
        if self.failures:
            lost = f"{self.failures} telemetry sample(s) failed to read"
            self.facts["telemetry_note"] = f"{self.note}; {lost}" if self.note else lost
        return self.rows
