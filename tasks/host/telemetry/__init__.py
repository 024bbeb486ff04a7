"""start_telemetry / stop_telemetry: power and energy sampling, one sampler module per vendor."""

from __future__ import annotations

import time

from tcobench.schemas import SamplerKind, TelemetryConfig, TelemetryRecord
from tcobench.tasks.host.telemetry import amd, amd_smi, cpu, nvidia, smi  # noqa: F401  (importing registers the samplers)
from tcobench.tasks.host.telemetry.base import Reading, Runner, Sampler, SamplerUnavailable, sampler_class
from tcobench.tasks.host.telemetry.session import TelemetrySession

__all__ = [
    "Reading",
    "Runner",
    "Sampler",
    "SamplerUnavailable",
    "TelemetrySession",
    "open_sampler",
    "start_telemetry",
    "stop_telemetry",
]

_AUTO_LOCAL = (SamplerKind.nvidia, SamplerKind.amd, SamplerKind.nvidia_smi, SamplerKind.amd_smi, SamplerKind.cpu)
_AUTO_REMOTE = (SamplerKind.nvidia_smi, SamplerKind.amd_smi)  # what can run inside a container on another host


def open_sampler(
    config: TelemetryConfig, runner: Runner | None = None, remote: bool = False
) -> tuple[Sampler | None, str | None]:
    """(sampler, None) or (None, why there is no power data).

    ``remote``: the engine runs on another host, so this machine's own power sources say nothing about it;
    only samplers that run through ``runner`` (inside the engine's container) are tried.
    """
    if config.sampler is SamplerKind.none:
        return None, "telemetry switched off (telemetry.sampler = none)"
    if remote and runner is None:
        return None, "the engine runs on another host and offers no way to run a sampler there"
    kinds = (_AUTO_REMOTE if remote else _AUTO_LOCAL) if config.sampler is SamplerKind.auto else (config.sampler,)
    reasons = []
    for kind in kinds:
        try:
            return sampler_class(kind)(config.devices, runner), None  # only command-line samplers use the runner
        except SamplerUnavailable as exc:
            reasons.append(str(exc))
    where = "where the engine runs" if remote else "on this host"
    return None, f"no power source {where}: " + "; ".join(reasons)


def start_telemetry(
    config: TelemetryConfig, run_id: str, date: str, host: str, access: tuple[Runner | None, bool] = (None, False)
) -> TelemetrySession:
    """Start sampling (phase idle) and take the idle baseline before any load is sent.

    ``access``: (runner, remote) from ``tasks.engine.telemetry_access``, where the engine runs."""
    sampler, note = open_sampler(config, *access)
    session = TelemetrySession(sampler, run_id, date, host, config.hz, note)
    session.start()
    if sampler is not None:
        time.sleep(config.idle_s)
    return session


def stop_telemetry(session: TelemetrySession) -> list[TelemetryRecord]:
    """Stop sampling; the rows for the telemetry table."""
    return session.stop()
