"""AMD GPUs through the ``amd-smi`` command: the fallback where ROCm's amdsmi Python package is missing, and the
way to sample an engine whose container runs on a remote Docker host (the command runs inside the container).

Calls: ``amd-smi list --json`` once (GPU ids and UUIDs), ``amd-smi static -a -b -d -B -l --json`` once (name,
driver, power cap), then one ``amd-smi metric -p -u -m -c -t -E --json`` per sample (``-g IDS`` when devices are
chosen). ``-E`` (energy) and ``-l`` (limits) exist only on Linux bare metal (amd-smi's parser registers them
nowhere else), so each call falls back to the same flags without them once, at open.

Design notes: docs/dev/architecture/hosts-and-engines.md#tasks-telemetry-amd-smi.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tcobench.schemas import GpuVendor, SamplerKind
from tcobench.tasks.host.telemetry.base import Reading, Runner, Sampler, SamplerUnavailable, register
from tcobench.tasks.host.telemetry.smi import local_runner

__all__ = ["ROCM_VERSION_FILE", "UNSUPPORTED", "AmdSmiCliSampler", "rocm_release"]

# written by ROCm's rocm-core package in every ROCm install and ROCm image, e.g. "6.4.1-83"
ROCM_VERSION_FILE = "/opt/rocm/.info/version"
_TIMEOUT_S = 10.0  # a local amd-smi call; startup alone can take a second on a many-GPU host
_METRIC = ("-p", "-u", "-m", "-c", "-t")
_STATIC = ("-a", "-b", "-d", "-B")
UNSUPPORTED = frozenset({0xFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF})  # all-ones integers: amdsmi's "not supported"

# unit label -> factor to the raw unit; the first entry is the unit amd-smi documents for the field
_MW = {"W": 1e3, "mW": 1.0, "uW": 1e-3}
_MJ = {"J": 1e3, "mJ": 1.0, "uJ": 1e-3, "kJ": 1e6}
_BYTES = {"MB": 2.0**20, "B": 1.0, "KB": 2.0**10, "GB": 2.0**30, "MiB": 2.0**20, "KiB": 2.0**10, "GiB": 2.0**30}
_MHZ = {"MHz": 1.0, "Mhz": 1.0, "GHz": 1e3}
_PCT = {"%": 1.0}
_CELSIUS = {"C": 1.0, "\N{DEGREE SIGN}C": 1.0}


def rocm_release(text: str) -> str | None:
    """The release in a ROCm version string ("6.4.1-83" -> "6.4.1"); None if there is none."""
    return text.strip().split("-")[0] or None


def _local(cmd: list[str]) -> str:
    return local_runner(cmd, timeout_s=_TIMEOUT_S)


def _document(output: str) -> Any:
    """The first JSON document in amd-smi's output (text before it is skipped); ValueError if there is none."""
    decoder, offset = json.JSONDecoder(), 0
    for line in output.splitlines(keepends=True):
        start = offset + len(line) - len(line.lstrip())
        offset += len(line)
        if output[start : start + 1] in ("[", "{"):
            try:
                return decoder.raw_decode(output, start)[0]
            except ValueError:
                continue  # e.g. "[WARNING] ..."
    raise ValueError(f"no JSON in amd-smi's output: {output.strip()[:200]!r}")


def _gpus(doc: Any) -> dict[int, Mapping[str, Any]]:
    """Per-GPU objects by amd-smi GPU id, from either shape (list, or {"gpu_data": list})."""
    entries = doc.get("gpu_data") if isinstance(doc, dict) else doc
    if not isinstance(entries, list):
        return {}
    return {e["gpu"]: e for e in entries if isinstance(e, dict) and type(e.get("gpu")) is int}


def _section(node: Any, *path: str) -> Mapping[str, Any]:
    """``node[path[0]][path[1]]...`` where each is an object; {} where one is missing or "N/A"."""
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def _scaled(node: Any, units: Mapping[str, float]) -> float | None:
    """A value in the raw unit: ``{"value": x, "unit": u}`` or a bare number; None for "N/A", unknown units."""
    value, unit = (node.get("value"), node.get("unit")) if isinstance(node, Mapping) else (node, None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and value in UNSUPPORTED:
        return None
    factor = units.get(str(unit)) if unit is not None else next(iter(units.values()))
    return value * factor if factor is not None else None


def _first(section: Mapping[str, Any], keys: tuple[str, ...], units: Mapping[str, float]) -> float | None:
    return next((v for v in (_scaled(section.get(k), units) for k in keys) if v is not None), None)


def _whole(value: float | None) -> int | None:
    return round(value) if value is not None else None


def _gfx_clock(clock: Mapping[str, Any], field: str) -> int | None:
    """``field`` of the first gfx_N clock domain that has one (MI300-class GPUs list one per XCD)."""
    domains = sorted((k for k in clock if k.startswith("gfx_") and k[4:].isdigit()), key=lambda k: int(k[4:]))
    return _whole(_first({d: _section(clock, d).get(field) for d in domains}, tuple(domains), _MHZ))


def _power_limit_mw(static: Mapping[str, Any]) -> int | None:
    limit = _section(static, "limit")
    cap = _first(_section(limit, "ppt0"), ("socket_power_limit",), _MW)
    return _whole(cap if cap is not None else _first(limit, ("socket_power_limit", "socket_power"), _MW))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() and value != "N/A" else None


def _reading(index: int, gpu: Mapping[str, Any], uuid: str | None, limit_mw: int | None) -> Reading:
    power, temperature = _section(gpu, "power"), _section(gpu, "temperature")
    return Reading(
        device_index=index,
        device_uuid=uuid,
        power_mw=_whole(_first(power, ("socket_power", "current_socket_power", "average_socket_power"), _MW)),
        energy_mj=_whole(_first(_section(gpu, "energy"), ("total_energy_consumption",), _MJ)),
        util_pct=_first(_section(gpu, "usage"), ("gfx_activity",), _PCT),
        mem_used_bytes=_whole(_first(_section(gpu, "mem_usage"), ("used_vram",), _BYTES)),
        sm_clock_mhz=_gfx_clock(_section(gpu, "clock"), "clk"),
        temperature_c=_first(temperature, ("edge", "hotspot"), _CELSIUS),
        power_limit_mw=limit_mw,
    )


@register(SamplerKind.amd_smi, "amd-smi")
class AmdSmiCliSampler(Sampler):
    def __init__(self, devices: tuple[int, ...] | None, runner: Runner | None = None) -> None:
        self.run = runner or _local
        self.where = "in the engine container" if runner else "on this host"
        try:
            listed = _gpus(_document(self.run(["amd-smi", "list", "--json"])))
        except (OSError, ValueError) as exc:
            raise SamplerUnavailable(f"amd-smi {self.where}: {exc}") from exc
        visible = sorted(listed)
        self.indices = devices if devices is not None else tuple(visible)
        if not visible or any(i not in visible for i in self.indices):
            raise SamplerUnavailable(f"amd-smi {self.where}: GPUs {visible}; asked for {list(self.indices)}")
        self.uuids = {i: _text(listed[i].get("uuid")) for i in self.indices}
        pick = ["-g", *map(str, self.indices)] if devices is not None else []
        self.metric, doc = self._open("metric", [*_METRIC, "-E"], [*_METRIC], pick)
        self.at_open = _gpus(doc)
        try:
            self.static = _gpus(self._open("static", [*_STATIC, "-l"], [*_STATIC], pick)[1])
        except SamplerUnavailable:
            self.static = {}  # provenance only; the power readings work without it
        self.limits = {i: _power_limit_mw(self.static.get(i, {})) for i in self.indices}

    def _open(self, command: str, flags: list[str], fallback: list[str], pick: list[str]) -> tuple[list[str], Any]:
        """(the command line that works, its first JSON document): with every flag, else without the optional."""
        errors = []
        for chosen in (flags, fallback):
            cmd = ["amd-smi", command, *chosen, "--json", *pick]
            try:
                return cmd, _document(self.run(cmd))
            except (OSError, ValueError) as exc:
                errors.append(str(exc))
        raise SamplerUnavailable(f"amd-smi {self.where}: {' | '.join(errors)}")

    def read(self) -> list[Reading]:
        gpus = _gpus(_document(self.run(self.metric)))
        return [_reading(i, gpus[i], self.uuids[i], self.limits[i]) for i in self.indices if i in gpus]

    def _energy_note(self) -> str:
        """What the ``energy`` view will use: the counter only where every GPU reported one at open."""
        if "-E" not in self.metric:
            return "no energy counter (integrated)"
        readings = [_reading(i, self.at_open.get(i, {}), None, None).energy_mj for i in self.indices]
        if None in readings:
            return "energy counter not reported for every GPU (integrated)"
        return "energy: amd-smi total_energy_consumption counter"

    def _rocm_version(self) -> str | None:
        """The ROCm release where amd-smi runs (``ROCM_VERSION_FILE``); None if absent."""
        try:
            return rocm_release(self.run(["cat", ROCM_VERSION_FILE]))
        except OSError:
            return None

    def describe(self) -> dict[str, Any]:
        first = self.static.get(self.indices[0], {})
        name = _text(_section(first, "asic").get("market_name")) or _text(_section(first, "board").get("product_name"))
        return {
            "gpu_vendor": GpuVendor.amd,
            "gpu_name": name,
            "gpu_count": len(self.indices),
            "gpu_uuids": ",".join(u for u in self.uuids.values() if u) or None,
            "driver_version": _text(_section(first, "driver").get("version")),
            "rocm_version": self._rocm_version(),
            "gpu_power_limit_mw": self.limits[self.indices[0]],
            "gpu_max_sm_clock_mhz": _gfx_clock(_section(self.at_open.get(self.indices[0], {}), "clock"), "max_clk"),
            "telemetry_note": f"power: amd-smi socket_power {self.where}; {self._energy_note()}",
        }
