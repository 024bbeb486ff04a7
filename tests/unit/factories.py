"""Builders of valid records with overridable fields, shared by the unit tests (plain functions, no fixtures)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tcobench.schemas import (
    GpuVendor,
    HardwarePrice,
    LatencyTarget,
    OpsPrice,
    Phase,
    PriceTable,
    RentalPrice,
    RentalTier,
    RequestRecord,
    RunRecord,
    RunStatus,
    ServingConfig,
    SitePrice,
    TelemetryRecord,
)

if TYPE_CHECKING:
    from tcobench.tasks.inventory import NightlyPlan

__all__ = [
    "FLEET",
    "T0_NS",
    "FleetHost",
    "make_prices",
    "make_request",
    "make_run",
    "make_telemetry",
    "write_fleet",
    "write_nights",
    "write_replay",
]

T0_NS = 1_700_000_000_000_000_000  # 2023-11-14T22:13:20Z


def make_run(**overrides: Any) -> RunRecord:
    fields: dict[str, Any] = {
        "run_id": "run0",
        "batch_id": "batch0",
        "date": "2023-11-14",
        "host": "testhost",
        "started_ns": T0_NS,
        "finished_ns": T0_NS + 20_000_000_000,
        "measure_start_ns": T0_NS + 5_000_000_000,
        "measure_end_ns": T0_NS + 15_000_000_000,
        "status": RunStatus.ok,
        "error": None,
        "host_os": "Linux 6.1.0 (Debian 12)",
        "host_kernel": "6.1.0",
        "host_arch": "x86_64",
        "host_cpu": "Test CPU",
        "host_cpu_count": 2,
        "host_mem_bytes": 8 * 2**30,
        "python_version": "3.11.9",
        "engine_kind": "embedded",
        "engine_name": "llama.cpp",
        "engine_version": "b1234",
        "engine_url": "http://127.0.0.1:8080",
        "protocol": "openai",
        "api": "/v1/completions",
        "model_name": "test-model",
        "model_digest": None,
        "workload": "test-workload",
        "load_mode": "closed",
        "concurrency": 1,
        "rate_rps": None,
        "warmup_requests": 1,
        "measured_requests": 3,
        "max_tokens": 64,
        "num_ctx": 2048,
        "temperature": 0.0,
        "seed": 42,
        "ignore_eos": False,
        "prompt_set_hash": "0" * 64,
        "config_hash": "1" * 64,
        "hardware_key": "test-hw",
        "site_key": "test-site",
        "ops_key": "test-ops",
        "utilisation": 0.5,
        "tool_version": "0.1.0",
        "git_revision": None,
    }
    fields.update(overrides)
    if isinstance(fields.get("gpu_vendor"), str):  # the record holds the enum (strict model); tests say "nvidia"
        fields["gpu_vendor"] = GpuVendor(fields["gpu_vendor"])
    return RunRecord.model_validate(fields)


def make_request(**overrides: Any) -> RequestRecord:
    fields: dict[str, Any] = {
        "run_id": "run0",
        "date": "2023-11-14",
        "host": "testhost",
        "phase": Phase.measure,
        "request_index": 0,
        "prompt_index": 0,
        "seed": 42,
        "start_ns": T0_NS + 5_000_000_000,
        "ttft_ns": 100_000_000,
        "e2e_ns": 1_100_000_000,
        "decode_ns": 1_000_000_000,
        "chunks": 2,
        "itl_ns": [10_000_000],
        "prompt_tokens": 10,
        "output_tokens": 11,
        "cached_tokens": None,
        "token_count_source": "usage",
        "finish_reason": "length",
        "server_load_ns": None,
        "server_prompt_eval_count": None,
        "server_prompt_eval_ns": None,
        "server_eval_count": None,
        "server_eval_ns": None,
        "server_total_ns": None,
        "counter_note": None,
        "http_status": 200,
        "error": None,
    }
    fields.update(overrides)
    return RequestRecord.model_validate(fields)


def make_prices(
    hardware: dict[str, Any] | None = None,
    site: dict[str, Any] | None = None,
    ops: dict[str, Any] | None = None,
    rental: dict[str, Any] | None = None,
    latency_target: dict[str, Any] | None = None,
) -> PriceTable:
    """A one-row-per-section table keyed test-hw / test-site / test-ops, fields overridable.

    ``rental`` / ``latency_target`` (None: no such rows) add one row each, ``test-rate`` (2 USD per GPU-hour
    for test-hw, tier on-demand) / ``test-target`` (TTFT p90 500 ms, TPOT p90 50 ms), fields overridable.
    """
    sourced = {"source": "test fixture", "as_of": dt.date(2026, 1, 1)}
    hw = {
        "description": "test platform",
        "vendor": "nvidia",
        "accelerators": 1,
        "purchase_usd": 20_000.0,
        "server_share_usd": 4_000.0,
        "lifetime_months": 48,
        "load_watts": 1_000.0,
        "idle_watts": 200.0,
        "adaptation_days": 6.0,
        **sourced,
        **(hardware or {}),
    }
    st = {"description": "test site", "kwh_usd": 0.10, "pue": 1.5, **sourced, **(site or {})}
    op = {
        "description": "test ops",
        "hours_per_host_month": 2.0,
        "hourly_usd": 100.0,
        "daily_usd": 800.0,
        **sourced,
        **(ops or {}),
    }
    rate = {
        "description": "test rate",
        "hardware": "test-hw",
        "tier": RentalTier.on_demand,
        "usd_per_gpu_hour": 2.0,
        **sourced,
        **(rental or {}),
    }
    target = {"description": "test target", "ttft_p90_ms": 500.0, "tpot_p90_ms": 50.0, **(latency_target or {})}
    hw["vendor"] = GpuVendor(hw["vendor"])  # strict models take the enum; overrides may say "amd"
    return PriceTable(
        hardware={"test-hw": HardwarePrice(**hw)},
        site={"test-site": SitePrice(**st)},
        ops={"test-ops": OpsPrice(**op)},
        rental={"test-rate": RentalPrice(**rate)} if rental is not None else {},
        latency_target={"test-target": LatencyTarget(**target)} if latency_target is not None else {},
    )


def make_telemetry(**overrides: Any) -> TelemetryRecord:
    fields: dict[str, Any] = {
        "run_id": "run0",
        "date": "2023-11-14",
        "host": "testhost",
        "ts_ns": T0_NS,
        "phase": "measure",
        "source": "nvml",
        "device_index": 0,
        "device_uuid": None,
        "power_mw": 300_000,
        "energy_mj": None,
        "util_pct": None,
        "mem_used_bytes": None,
        "sm_clock_mhz": None,
        "temperature_c": None,
        "power_limit_mw": None,
    }
    fields.update(overrides)
    return TelemetryRecord.model_validate(fields)


@dataclass(frozen=True)
class FleetHost:
    """One simulated GPU host of the test fleet: its provenance and how fast and hungry it is."""

    host: str
    hardware_key: str
    vendor: str
    gpu_name: str
    driver_version: str
    cuda_version: str | None
    rocm_version: str | None
    source: str  # telemetry source
    decode_tok_s: float  # per-request decode rate at concurrency 1, tokens/s
    ttft_ms: float  # time to first token at concurrency 1, ms
    idle_w: float
    watts_per_stream: float
    base_w: float
    vram_gib: float


FLEET = (
    FleetHost(
        "gpu-nv-1",
        "nvidia-h200-sxm",
        "nvidia",
        "NVIDIA H200",
        "580.159.04",
        "13.0",
        None,
        "nvml",
        120.0,
        40.0,
        78.0,
        25.0,
        300.0,
        20.0,
    ),
    FleetHost(
        "gpu-amd-1",
        "amd-mi300x",
        "amd",
        "AMD Instinct MI300X",
        "6.10.5",
        None,
        "6.4.1",
        "amdsmi",
        72.0,
        60.0,
        140.0,
        28.0,
        350.0,
        22.0,
    ),
)

_FLEET_T0_NS = 1_795_651_200_000_000_000  # 2026-11-26T00:00:00Z: the last night
_DAY_NS = 86_400 * 10**9
_MS = 1_000_000


def _fleet_requests(run: RunRecord, rng: np.random.Generator, host: FleetHost, slow: float) -> list[RequestRecord]:
    """Closed-loop requests: each stream issues its next request when the previous one finishes."""
    assert run.max_tokens is not None  # the fleet's runs are made with it
    c, out_tokens = run.concurrency, run.max_tokens
    night = rng.lognormal(0.0, 0.02)  # night-to-night drift, shared by the run's requests
    rate = host.decode_tok_s / (1 + 0.08 * (c - 1)) * night * slow
    clocks = [run.measure_start_ns or 0] * c
    rows = [
        make_request(
            run_id=run.run_id,
            date=run.date,
            host=run.host,
            phase=Phase.warmup,
            start_ns=run.started_ns,
            prompt_tokens=24,
            output_tokens=out_tokens,
        )
    ]
    for i in range(run.measured_requests):
        stream = i % c
        per_request = rate * rng.lognormal(0.0, 0.03)
        gap_ns = round(1e9 / per_request)
        itl = [max(1, round(gap_ns * g)) for g in rng.lognormal(0.0, 0.15, out_tokens - 1)]
        ttft = round(host.ttft_ms * (1 + 0.3 * (c - 1)) * rng.lognormal(0.0, 0.1) * _MS)
        decode = sum(itl)
        rows.append(
            make_request(
                run_id=run.run_id,
                date=run.date,
                host=run.host,
                request_index=i,
                prompt_index=i % 5,
                seed=42 + i,
                start_ns=clocks[stream],
                ttft_ns=ttft,
                e2e_ns=ttft + decode,
                decode_ns=decode,
                chunks=out_tokens,
                itl_ns=itl,
                prompt_tokens=24,
                output_tokens=out_tokens,
            )
        )
        clocks[stream] += ttft + decode
    return rows


def _fleet_telemetry(run: RunRecord, host: FleetHost) -> list[TelemetryRecord]:
    """10 Hz samples: 1 s idle baseline, then the measurement window bracketed by one sample each side."""
    start, end = run.measure_start_ns or 0, run.measure_end_ns or 0
    load_w = min(host.base_w + host.watts_per_stream * run.concurrency, 750.0)
    step = 100 * _MS
    stamps = [(run.started_ns + k * step, "idle", host.idle_w) for k in range(10)]
    stamps += [(start - step // 2 + k * step, "measure", load_w) for k in range((end - start) // step + 2)]
    energy_mj, rows = 0, []
    for k, (ts, phase, watts) in enumerate(stamps):
        if k:
            energy_mj += round(watts * (ts - stamps[k - 1][0]) / 1e6)
        rows.append(
            make_telemetry(
                run_id=run.run_id,
                date=run.date,
                host=run.host,
                ts_ns=ts,
                phase=phase,
                source=host.source,
                power_mw=round(watts * 1000),
                energy_mj=energy_mj,
                mem_used_bytes=round((host.vram_gib + 0.5 * run.concurrency) * 2**30),
            )
        )
    return rows


def write_fleet(
    store: Path,
    nights: int = 5,
    concurrency: tuple[int, ...] = (1, 4, 16),
    seed: int = 7,
    regression: tuple[str, int, float] | None = ("gpu-amd-1", 4, 0.85),
    requests: int = 20,
    folder_layout: bool = False,
    cells: bool = False,
) -> list[RunRecord]:
    """Write a two-host fleet (NVIDIA H200, AMD MI300X) measured over several nights; return the run rows.

    Same engine (Ollama 0.32.0, same settings), model digest and prompts everywhere. ``regression``
    (host, concurrency, factor) makes that series decode ``factor`` times as fast on the last night, after a
    driver update: the change `tcobench history` must flag. ``folder_layout``: write the hive-partitioned folder
    store of tcobench < 0.2 instead (what `tcobench store migrate` imports). ``cells``: each run is a nightly cell
    (``HOST/cC``), so view availability counts the nights.
    """
    from tcobench.tasks.store.store import RunRows, write_runs

    rng = np.random.default_rng(seed)
    written = []
    batch = []
    for night in range(nights):
        for host in FLEET:
            last = night == nights - 1
            for c in concurrency:
                slow = regression[2] if regression and last and regression[:2] == (host.host, c) else 1.0
                run_id = f"{host.host}-n{night}-c{c}"
                started = _FLEET_T0_NS + (night - nights + 1) * _DAY_NS + c * 60 * 10**9
                run = make_run(
                    run_id=run_id,
                    batch_id=f"{host.host}-n{night}",
                    date=dt.datetime.fromtimestamp(started / 1e9, dt.UTC).date().isoformat(),
                    host=host.host,
                    started_ns=started,
                    measure_start_ns=started + 2 * 10**9,
                    measure_end_ns=started + 2 * 10**9,
                    engine_kind="container",
                    engine_name="ollama",
                    engine_version="0.32.0",
                    protocol="ollama",
                    api="/api/generate",
                    model_name="llama3.2:3b",
                    model_digest="sha256:" + "ab" * 32,
                    engine_settings=json.dumps({"OLLAMA_NUM_PARALLEL": 16, "num_ctx": 4096}),
                    gpu_vendor=host.vendor,
                    gpu_name=host.gpu_name,
                    gpu_count=1,
                    driver_version=host.driver_version + (".1" if slow != 1.0 else ""),
                    cuda_version=host.cuda_version,
                    rocm_version=host.rocm_version,
                    telemetry_source=host.source,
                    workload="chat-short",
                    concurrency=c,
                    measured_requests=requests,
                    max_tokens=64,
                    num_ctx=4096,
                    ignore_eos=True,
                    hardware_key=host.hardware_key,
                    site_key="datacenter",
                    ops_key="default",
                    cell=f"{host.host}/c{c}" if cells else None,
                )
                reqs = _fleet_requests(run, rng, host, slow)
                end = max(r.start_ns + (r.e2e_ns or 0) for r in reqs if r.phase is Phase.measure)
                run = run.model_copy(update={"measure_end_ns": end, "finished_ns": end + 10**9})
                batch.append(RunRows(run, reqs, _fleet_telemetry(run, host)))
                written.append(run)
    if folder_layout:
        from tests.store_helpers import write_folder_run

        for rows in batch:
            write_folder_run(store, rows.run, rows.requests, rows.telemetry)
    else:
        write_runs(store, batch)  # one commit for the whole fleet (each run in its own commit works the same)
    return written


def write_nights(
    store: Path, host: str, vendor: str, windows_s: dict[str, list[int]], concurrency: int = 1
) -> list[RunRecord]:
    """Runs of one platform at one concurrency, per night one run per measurement window given (s); each run's one
    ok request counts 60 prompt and 600 output tokens, so a run measures 600 / window output tok/s. A night is
    a date ("2023-11-14": batch "HOST-2023-11-14") or a date and a batch ("2023-11-14~b2": batch
    "HOST-2023-11-14~b2" on 2023-11-14): several nightly batches on one date. One commit for all of them (each
    run in its own commit stores the same rows, slower: docs/dev/performance.md#test-commit-per-run)."""
    from tcobench.tasks.store.store import RunRows, write_runs

    written = []
    batch = []
    for n, (night, windows) in enumerate(windows_s.items()):
        date = night.split("~")[0]
        for k, window in enumerate(windows):
            run_id = f"{host}-{night}-c{concurrency}-{k}" if concurrency != 1 else f"{host}-{night}-{k}"
            start = int(dt.datetime.fromisoformat(f"{date}T00:00:00+00:00").timestamp() * 10**9)
            start += (n * 600 + k * 60 + concurrency) * 10**9
            run = make_run(
                run_id=run_id,
                batch_id=f"{host}-{night}",
                date=date,
                host=host,
                gpu_vendor=vendor,
                started_ns=start,
                measure_start_ns=start,
                measure_end_ns=start + window * 10**9,
                concurrency=concurrency,
            )
            request = make_request(
                run_id=run_id, date=date, host=host, start_ns=start, prompt_tokens=60, output_tokens=600
            )
            batch.append(RunRows(run, [request]))
            written.append(run)
    write_runs(store, batch)
    return written


def fleet_plan(folder: Path, hosts: Sequence[str], prices: PriceTable) -> NightlyPlan:
    """A [fleet] nightly plan: these CPU hosts, one zero-cost endpoint engine on 127.0.0.1, one model and one
    workload at concurrency 1 and 4 (inventory.toml and matrix.toml written to ``folder``)."""
    from tcobench.tasks.inventory import load_plan

    inventory = folder / "inventory.toml"
    inventory.write_text(
        "[fleet]\n" + "".join(f'[[hosts]]\nname = "{h}"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n' for h in hosts),
        "utf-8",
    )
    matrix = folder / "matrix.toml"
    matrix.write_text(
        '[[engines]]\nname = "zero"\nendpoint = "http://127.0.0.1:8080"\n[[models]]\nname = "m"\n'
        '[[workloads]]\nname = "w"\nconcurrency = [1, 4]\n',
        "utf-8",
    )
    return load_plan(inventory, [matrix], prices)


@dataclass(frozen=True)
class SimulatedConfig:
    """A serving configuration of a simulated batching engine (bench/batching_engine.py: ITL = a + b x streams ms)
    on a host: what ``write_configs`` measures, level by level and night by night."""

    host: str
    vendor: str
    gpu_name: str
    hardware_key: str
    a_ms: float
    b_ms: float
    gpus: int  # GPUs the configuration was given (declared): its throughput is divided by these
    host_gpus: int = 8  # the host's GPUs (gpu_count): never the divisor when gpus is known
    tensor_parallel: int = 1
    levels: tuple[int, ...] = (1, 2, 4, 8, 16)
    engine_version: str = "0.32.0"

    def serving(self) -> ServingConfig:
        return ServingConfig(
            engine="vllm",
            engine_version=self.engine_version,
            model="sim-model",
            tensor_parallel=self.tensor_parallel,
            settings={"a_ms": self.a_ms, "b_ms": self.b_ms},
            gpus=self.gpus,
        )

    def run_labels(self) -> dict[str, Any]:
        """The run row's fields this configuration fixes: host, engine, model, GPUs, price keys, serving config."""
        serving = self.serving()
        return {
            "host": self.host,
            "engine_kind": "endpoint",
            "engine_name": "vllm",
            "engine_version": self.engine_version,
            "model_name": "sim-model",
            "gpu_vendor": self.vendor,
            "gpu_name": self.gpu_name,
            "gpu_count": self.host_gpus,
            "hardware_key": self.hardware_key,
            "site_key": "datacenter",
            "ops_key": "default",
            "config_id": serving.config_id,
            "serving_config": serving.canonical(),
            "tensor_parallel": self.tensor_parallel,
            "gpus_given": self.gpus,
            "gpus_given_source": "declared",
        }


def write_configs(
    store: Path, configs: Sequence[SimulatedConfig], nights: int = 2, requests: int = 48, tokens: int = 16
) -> list[RunRecord]:
    """Runs of simulated serving configurations (``SimulatedConfig``), each level a closed loop simulated event by
    event (bench/batching_engine.closed_loop; streams 10 ms apart), ``nights`` nightly batches per host; one commit.
    Every run: the same model, prompts and workload; priced by the shipped table (its hardware keys)."""
    import sys

    from tcobench.tasks.store.store import RunRows, write_runs

    bench = str(Path(__file__).resolve().parents[2] / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    from batching_engine import BatchingEngine, closed_loop

    written, batch = [], []
    for night in range(nights):
        for k, cfg in enumerate(configs):
            serving = cfg.serving()
            engine = BatchingEngine(cfg.a_ms, cfg.b_ms, 1.0)
            for c in cfg.levels:
                started = _FLEET_T0_NS + (night - nights + 1) * _DAY_NS + (k * 100 + c) * 60 * 10**9
                simulated = closed_loop(engine, c, requests, tokens, stagger_ms=10.0)
                run_id = f"{cfg.host}-{serving.config_id[:6]}-n{night}-c{c}"
                reqs = [
                    make_request(
                        run_id=run_id,
                        date=dt.datetime.fromtimestamp(started / 1e9, dt.UTC).date().isoformat(),
                        host=cfg.host,
                        request_index=i,
                        prompt_index=i % 5,
                        start_ns=started + r.start_ns,
                        ttft_ns=r.ttft_ns,
                        e2e_ns=r.token_ns[-1] - r.start_ns,
                        decode_ns=r.token_ns[-1] - r.token_ns[0],
                        chunks=len(r.token_ns),
                        itl_ns=r.itl_ns,
                        prompt_tokens=24,
                        output_tokens=len(r.token_ns),
                    )
                    for i, r in enumerate(simulated)
                ]
                end = started + max(r.token_ns[-1] for r in simulated)
                run = make_run(
                    run_id=run_id,
                    batch_id=f"{cfg.host}-n{night}",
                    date=reqs[0].date,
                    started_ns=started,
                    finished_ns=end + 10**9,
                    measure_start_ns=started,
                    measure_end_ns=end,
                    workload="sim",
                    concurrency=c,
                    measured_requests=requests,
                    max_tokens=tokens,
                    ignore_eos=True,
                    **cfg.run_labels(),
                )
                batch.append(RunRows(run, reqs))
                written.append(run)
    write_runs(store, batch)
    return written


def write_replay(
    store: Path,
    cfg: SimulatedConfig,
    trace: Path,
    time_scale: float,
    tpot_ms: float,
    run_id: str,
    ttft_ms: float = 100.0,
    requests: int = 20,
    seed: int = 42,
) -> RunRecord:
    """A replay of the whole ``trace`` file (`tcobench run --trace`) on a simulated configuration, as a run row
    records one: load_mode 'replay', the trace's prompt_set_hash (tasks/workload/keys.replay_set_key) and the time
    scale; ``requests`` measured requests of 101 output tokens, each with this TTFT and TPOT (decode 100 tokens)."""
    from tcobench.tasks.store.store import RunRows, write_runs
    from tcobench.tasks.workload.keys import replay_set_key, sha256_json
    from tcobench.tasks.workload.read_trace import file_sha256

    started = _FLEET_T0_NS + 3_600 * 10**9
    date = dt.datetime.fromtimestamp(started / 1e9, dt.UTC).date().isoformat()
    decode_ns = int(tpot_ms * 1e6 * 100)
    reqs = [
        make_request(
            run_id=run_id,
            date=date,
            host=cfg.host,
            request_index=i,
            prompt_index=i,
            start_ns=started + i * 10**8,
            ttft_ns=int(ttft_ms * 1e6),
            e2e_ns=int(ttft_ms * 1e6) + decode_ns,
            decode_ns=decode_ns,
            chunks=101,
            itl_ns=[decode_ns // 100] * 100,
            prompt_tokens=100,
            output_tokens=101,
        )
        for i in range(requests)
    ]
    end = max(r.start_ns + r.e2e_ns for r in reqs if r.e2e_ns is not None)
    run = make_run(
        run_id=run_id,
        batch_id=f"{cfg.host}-replay",
        date=date,
        started_ns=started,
        finished_ns=end + 10**9,
        measure_start_ns=started,
        measure_end_ns=end,
        workload="replay",
        load_mode="replay",
        concurrency=requests,
        measured_requests=requests,
        max_tokens=101,
        seed=seed,
        ignore_eos=True,
        prompt_set_hash=sha256_json(replay_set_key(file_sha256(trace), None, seed)),
        prompt_source="trace",
        dataset_path=str(trace),
        time_scale=time_scale,
        **cfg.run_labels(),
    )
    write_runs(store, [RunRows(run, reqs)])
    return run
