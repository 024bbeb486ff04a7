"""start_telemetry / stop_telemetry: power and energy sampling, one sampler module per vendor."""

from __future__ import annotations

import time

from tcobench.schemas import SamplerKind, TelemetryConfig, TelemetryRecord

from . import amd, cpu, nvidia  # noqa: F401  (importing registers the samplers)
from .base import Reading, Sampler, SamplerUnavailable, sampler_class
from .session import TelemetrySession

__all__ = [
    "Reading",
    "Sampler",
    "SamplerUnavailable",
    "TelemetrySession",
    "open_sampler",
    "start_telemetry",
    "stop_telemetry",
]

_AUTO_ORDER = (SamplerKind.nvidia, SamplerKind.amd, SamplerKind.cpu)


def open_sampler(config: TelemetryConfig) -> tuple[Sampler | None, str | None]:
    """(sampler, None) or (None, why there is no power data)."""
    if config.sampler is SamplerKind.none:
        return None, "telemetry switched off (telemetry.sampler = none)"
    kinds = _AUTO_ORDER if config.sampler is SamplerKind.auto else (config.sampler,)
    reasons = []
    for kind in kinds:
        try:
            return sampler_class(kind)(config.devices), None
        except SamplerUnavailable as exc:
            reasons.append(str(exc))
    return None, "no power source on this host: " + "; ".join(reasons)


def start_telemetry(config: TelemetryConfig, run_id: str, date: str, host: str) -> TelemetrySession:
    """Start sampling (phase idle) and take the idle baseline before any load is sent."""
    sampler, note = open_sampler(config)
    session = TelemetrySession(sampler, run_id, date, host, config.hz, note)
    session.start()
    if sampler is not None:
        time.sleep(config.idle_s)
    return session


def stop_telemetry(session: TelemetrySession) -> list[TelemetryRecord]:
    """Stop sampling; the rows for the telemetry table."""
    return session.stop()
