"""load_plan: inventory + matrix files -> every nightly cell as a validated BenchmarkConfig, before anything starts.

A cell is (host, engine, model, workload); its runs are the workload's concurrency levels. Everything is
checked as a whole first (file syntax, fields, price keys, each cell's full config), and every error names
the file and the field path, so a bad matrix never starts half a night.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tcobench.errors import ConfigError
from tcobench.schemas import (
    BenchmarkConfig,
    ClientPlacement,
    HostSpec,
    Inventory,
    Matrix,
    MatrixEngine,
    PriceTable,
    PricingConfig,
)
from tcobench.tasks.config import validation_message, validation_problems
from tcobench.tasks.load.placement import placement_of_url
from tcobench.tasks.prices import check_keys
from tcobench.tasks.workload.presets import apply_preset
from tcobench.tasks.workload.profiles import apply_profile
from tcobench.tasks.workload.replay import check_replay

__all__ = ["Cell", "NightlyPlan", "load_plan"]

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Cell:
    host: HostSpec
    engine: str
    model: str
    workload: str
    config: BenchmarkConfig

    @property
    def label(self) -> str:
        return f"{self.host.name}/{self.engine}/{self.model}/{self.workload}"


@dataclass(frozen=True)
class NightlyPlan:
    inventory: Inventory
    cells: tuple[Cell, ...]

    def cells_of(self, host: str) -> list[Cell]:
        return [c for c in self.cells if c.host.name == host]


def _with_profile(workload: dict[str, Any], profile: str | None) -> dict[str, Any]:
    """The workload with the nightly's profile (Settings.profile, `nightly --profile`) unless it names its own."""
    return workload if profile is None or workload.get("profile") is not None else {**workload, "profile": profile}


def _load(path: Path, model: type[M], profile: str | None = None) -> M:
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path} does not exist") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read TOML: {exc}") from exc
    if model is Matrix and isinstance(data.get("workloads"), list):  # a workload may start from a named preset
        data["workloads"] = [
            apply_profile(_with_profile(apply_preset(w, str(path)), profile), str(path)) if isinstance(w, dict) else w
            for w in data["workloads"]
        ]
    try:
        return model.model_validate_json(json.dumps(data, default=str))
    except ValidationError as exc:
        raise ConfigError(validation_message(exc, str(path))) from exc


def _applies(engine: MatrixEngine, matrix: Matrix, host: HostSpec) -> bool:
    vendor = engine.vendor or matrix.vendor
    on_host = engine.hosts is None or host.name in engine.hosts
    return on_host and (vendor is None or vendor is host.vendor)


def _engine(host: HostSpec, engine: MatrixEngine) -> dict[str, Any]:
    if engine.embedded:
        return {"kind": "embedded"}
    if engine.kind == "vllm":
        return {"kind": "vllm", "vllm": engine.vllm.model_dump(mode="json")}
    if engine.endpoint is not None:
        declared = {"gpus": engine.gpus, "settings": engine.settings} if engine.gpus or engine.settings else None
        return {
            "kind": "endpoint",
            "url": engine.endpoint,
            "protocol": engine.protocol.value,
            "api_key_env": engine.api_key_env,
            "serving": declared,
        }
    container: dict[str, Any] = {
        "image": engine.image,
        "docker_host": host.docker_host,
        "ollama": engine.ollama.model_dump(mode="json"),
    }
    if host.gpu is not None:
        container["gpu"] = host.gpu.model_dump(mode="json")
    elif host.vendor.value != "cpu":
        container["gpu"] = {"vendor": host.vendor.value}
    if engine.gpus is not None:  # the engine's own GPU count replaces the host's device list or count
        gpu = {k: v for k, v in container.get("gpu", {"vendor": host.vendor.value}).items() if k != "device_ids"}
        container["gpu"] = {**gpu, "count": engine.gpus}
    return {"kind": "container", "container": container, "vllm": engine.vllm.model_dump(mode="json")}


def _gpus_needed(engine: MatrixEngine) -> tuple[int, str] | None:
    """The GPUs a configuration needs and why, where it says (None: it takes what the host gives)."""
    if engine.gpus is not None:
        return engine.gpus, f"gpus = {engine.gpus}"
    v = engine.vllm
    if (engine.kind == "vllm" or engine.image is not None) and v.gpus > 1:
        why = f"tensor_parallel {v.tensor_parallel} x pipeline_parallel {v.pipeline_parallel} x data_parallel "
        return v.gpus, why + str(v.data_parallel)
    return None


def _check_gpus(
    inventory_path: Path, h: int, host: HostSpec, path: Path, e: int, engine: MatrixEngine, cell: str
) -> None:
    """Refuse a configuration that needs more GPUs than its host has (the inventory's gpu_count)."""
    needed = _gpus_needed(engine)
    if needed is None or host.vendor.value == "cpu" or needed[0] <= host.gpu_count:
        return
    raise ConfigError(
        f"{path}: engines.{e} (cell {cell}): the configuration needs {needed[0]} GPUs ({needed[1]}), but host "
        f"{host.name} has {host.gpu_count} ({inventory_path}: hosts.{h}.gpu_count)"
    )


def _cell_config(host: HostSpec, engine: MatrixEngine, model: Any, workload: Any) -> dict[str, Any]:
    declared = {"vendor": host.vendor.value, "gpu_model": host.gpu_model, "gpu_count": host.gpu_count}
    return {
        "engine": {**_engine(host, engine), "label": engine.name},
        "declared": declared,
        "model": model.model_dump(mode="json", exclude_none=True),
        "workload": workload.model_dump(mode="json"),
        "pricing": {"hardware": host.hardware, "site": host.site, "ops": host.ops},
    }


# A cell's config field that comes from the inventory's host entry, and that entry's field.
_FROM_HOST: tuple[tuple[tuple[str, ...], str], ...] = (
    (("declared", "vendor"), "vendor"),
    (("declared", "gpu_model"), "gpu_model"),
    (("declared", "gpu_count"), "gpu_count"),
    (("pricing", "hardware"), "hardware"),
    (("pricing", "site"), "site"),
    (("pricing", "ops"), "ops"),
    (("engine", "container", "docker_host"), "docker_host"),
    (("engine", "container", "gpu"), "gpu"),
)


def _origin(loc: tuple[int | str, ...], inventory_path: Path, h: int, path: Path, where: dict[str, int]) -> str:
    """The file and field path a cell config's field came from (the inventory's host, or the matrix's entry)."""
    for cell_path, host_field in _FROM_HOST:
        if loc[: len(cell_path)] == cell_path:
            rest = ".".join(str(p) for p in loc[len(cell_path) :])
            return f"{inventory_path}: hosts.{h}.{host_field}" + (f".{rest}" if rest else "")
    section = {"workload": "workloads", "model": "models", "engine": "engines"}.get(str(loc[0])) if loc else None
    if section is None:
        return f"{path}"
    rest = ".".join(str(p) for p in loc[1:])
    return f"{path}: {section}.{where[section]}" + (f".{rest}" if rest else "")


def _cell_error(
    exc: ValidationError, inventory_path: Path, h: int, path: Path, where: dict[str, int], cell: str
) -> ConfigError:
    """Each problem named by the file and field path it came from."""
    problems = [f"{_origin(loc, inventory_path, h, path, where)}: {text}" for loc, text in validation_problems(exc)]
    return ConfigError(f"{'; '.join(problems)} (cell {cell})")


def _check_host_prices(inventory_path: Path, inventory: Inventory, prices: PriceTable) -> None:
    """Each host's price keys name rows of the price table: errors name the inventory, host and field."""
    for h, host in enumerate(inventory.hosts):
        pricing = PricingConfig(hardware=host.hardware, site=host.site, ops=host.ops)
        names = {k: f"{inventory_path}: hosts.{h}.{k} (host {host.name})" for k in ("hardware", "site", "ops")}
        check_keys(prices, pricing, str(inventory_path), names)


def _cells(
    inventory_path: Path, inventory: Inventory, matrices: list[tuple[Path, Matrix]], prices: PriceTable
) -> list[Cell]:
    cells = []
    for h, host in enumerate(inventory.hosts):
        for path, matrix in matrices:
            for e, matrix_engine in enumerate(matrix.engines):
                if not _applies(matrix_engine, matrix, host):
                    continue
                for suffix, engine in _configurations(path, e, matrix_engine):
                    name = engine.name + suffix
                    for m, model in enumerate(matrix.models):
                        for w, workload in enumerate(matrix.workloads):
                            data = _cell_config(host, engine, model, workload)
                            cell = f"{host.name}/{name}/{model.name}/{workload.name}"
                            _check_gpus(inventory_path, h, host, path, e, engine, cell)
                            try:
                                config = BenchmarkConfig.model_validate_json(json.dumps(data))
                            except ValidationError as exc:
                                where = {"engines": e, "models": m, "workloads": w}
                                raise _cell_error(exc, inventory_path, h, path, where, cell) from exc
                            cells.append(Cell(host, name, model.name, workload.name, config))
    return cells


def _configurations(path: Path, e: int, engine: MatrixEngine) -> list[tuple[str, MatrixEngine]]:
    """The engine's serving configurations (MatrixEngine.configurations); a sweep value its settings refuse is a
    ConfigError naming the file, the sweep key and the value."""
    try:
        return engine.configurations()
    except ValidationError as exc:
        problems = [
            f"{path}: engines.{e}.sweep ({'.'.join(map(str, loc))}): {text}" for loc, text in validation_problems(exc)
        ]
        raise ConfigError("; ".join(problems)) from exc


def _check_engine_hosts(inventory: Inventory, matrices: list[tuple[Path, Matrix]]) -> None:
    names = {h.name for h in inventory.hosts}
    for path, matrix in matrices:
        for i, engine in enumerate(matrix.engines):
            unknown = sorted(set(engine.hosts or ()) - names)
            if unknown:
                raise ConfigError(
                    f"{path}: engines.{i}.hosts: {', '.join(map(repr, unknown))} not in the inventory "
                    f"(hosts: {', '.join(sorted(names))})"
                )


def _check_fleet_cells(inventory_path: Path, inventory: Inventory, cells: list[Cell]) -> None:
    """Fleet mode measures next to the engine: an endpoint must be on the worker's own host (loopback)."""
    if inventory.fleet is None:
        return
    for cell in cells:
        url = cell.config.engine.url
        if url is not None and placement_of_url(url) is not ClientPlacement.loopback:
            raise ConfigError(
                f"{inventory_path}: fleet mode: cell {cell.label}: endpoint {url!r} is not on the host's loopback "
                "interface; in fleet mode the worker measures the engine on its own host (http://127.0.0.1:PORT)"
            )


def _check_traces(matrices: list[tuple[Path, Matrix]]) -> None:
    """Each workload's trace read and checked as its cells will read it (the file, the window, every line), so a
    bad trace stops the night before any engine starts, not when its cell comes."""
    for path, matrix in matrices:
        for workload in matrix.workloads:
            if workload.trace is None:
                continue
            try:
                check_replay(workload.trace)
            except ConfigError as exc:
                raise ConfigError(f"{path}: workload {workload.name}: {exc}") from exc


def load_plan(
    inventory_path: Path, matrix_paths: list[Path], prices: PriceTable, profile: str | None = None
) -> NightlyPlan:
    """Validate the inventory and every matrix file together; every cell of the night, or one ConfigError.
    ``profile``: the run profile of every workload that names none (Settings.profile, `nightly --profile`)."""
    if not matrix_paths:
        raise ConfigError("give at least one matrix file")
    inventory = _load(inventory_path, Inventory)
    matrices = [(p, _load(p, Matrix, profile)) for p in matrix_paths]
    _check_traces(matrices)
    _check_engine_hosts(inventory, matrices)
    _check_host_prices(inventory_path, inventory, prices)
    cells = _cells(inventory_path, inventory, matrices, prices)
    _check_fleet_cells(inventory_path, inventory, cells)
    idle = [h.name for h in inventory.hosts if not any(c.host.name == h.name for c in cells)]
    if idle:
        raise ConfigError(
            f"{inventory_path}: host(s) {', '.join(idle)} match no engine of {', '.join(map(str, matrix_paths))} "
            "(check each host's vendor against the engines' vendor and hosts)"
        )
    labels = [c.label for c in cells]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        raise ConfigError(f"the matrix repeats cells: {', '.join(dupes)} (engine/model/workload names must differ)")
    return NightlyPlan(inventory, tuple(cells))
