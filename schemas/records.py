"""Stored records: one model per table. Raw units only (ns, tokens, bytes, mW, mJ).

The Arrow/Parquet schemas are derived from these models by ``schemas.arrow``; nothing else
defines a column. Timestamps are integers (ns since the Unix epoch, UTC) so that every
duration is an exact integer difference.
"""

from __future__ import annotations

from pydantic import Field

from .base import GpuVendor, Phase, RunStatus, StrictModel

__all__ = ["DATE_PATTERN", "HOST_PATTERN", "RequestRecord", "RunRecord", "TelemetryRecord"]

# Partition values must be safe as folder names: they appear in the store's paths.
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
HOST_PATTERN = r"^[A-Za-z0-9._-]+$"


class RunRecord(StrictModel):
    """One row per run: one (engine, model, workload, concurrency) measurement with its provenance."""

    run_id: str = Field(description="Unique id of the run (UUID4 hex).")
    batch_id: str = Field(description="Id shared by the runs of one `tcobench run` invocation.")
    date: str = Field(pattern=DATE_PATTERN, description="UTC date the run started, YYYY-MM-DD (partition key).")
    host: str = Field(pattern=HOST_PATTERN, description="Name of the measured host (partition key).")
    started_ns: int = Field(description="Run start, ns since the Unix epoch (UTC).")
    finished_ns: int = Field(description="Run end, ns since the Unix epoch (UTC).")
    measure_start_ns: int | None = Field(description="First measured request sent, ns since epoch.")
    measure_end_ns: int | None = Field(description="Last measured request finished, ns since epoch.")
    status: RunStatus = Field(description="ok, partial (some requests failed) or failed.")
    error: str | None = Field(description="Why the run failed or is partial; null when ok.")
    # Host facts
    host_os: str = Field(description="Operating system and release, e.g. 'Linux 6.1.0 (Debian 12)'.")
    host_kernel: str = Field(description="Kernel release (uname -r).")
    host_arch: str = Field(description="Machine architecture (uname -m).")
    host_cpu: str = Field(description="CPU model name.")
    host_cpu_count: int = Field(description="Logical CPUs visible to tcobench.")
    host_mem_bytes: int = Field(description="Total memory of the host, bytes.")
    python_version: str = Field(description="Python running tcobench.")
    # Engine and model
    engine_kind: str = Field(description="embedded, endpoint or container.")
    engine_name: str = Field(description="Engine product, e.g. llama.cpp, ollama, vllm, or 'unknown'.")
    engine_version: str = Field(description="Engine version/build as reported by the engine itself.")
    engine_url: str = Field(description="Base URL the requests went to.")
    protocol: str = Field(description="openai or ollama.")
    api: str = Field(description="Endpoint path used, e.g. /v1/completions or /api/generate.")
    model_name: str = Field(description="Model name as sent to the engine.")
    model_digest: str | None = Field(description="sha256 of the model file or the engine's model digest.")
    synthetic_model: bool = Field(
        default=False, description="True when the model has random weights of a real shape (tcobench models synth)."
    )
    engine_settings: str = Field(
        default="{}", description="JSON of the engine's pinned settings (slots, context, threads, Ollama knobs...)."
    )
    image: str | None = Field(default=None, description="Container image reference, for containerised engines.")
    image_digest: str | None = Field(default=None, description="Image id/digest (sha256:...) of that container.")
    container_settings: str | None = Field(
        default=None, description="JSON of the container's settings (devices, groups, ipc, shm, env)."
    )
    # Accelerator provenance (null on CPU-only hosts)
    gpu_vendor: GpuVendor | None = Field(default=None, description="nvidia or amd; null for a CPU host.")
    gpu_name: str | None = Field(default=None, description="Accelerator model name as the driver reports it.")
    gpu_count: int | None = Field(default=None, description="Accelerators used by the engine.")
    gpu_uuids: str | None = Field(default=None, description="Comma-separated UUIDs of those accelerators.")
    driver_version: str | None = Field(default=None, description="GPU driver version.")
    cuda_version: str | None = Field(default=None, description="CUDA driver API version (NVIDIA).")
    rocm_version: str | None = Field(default=None, description="ROCm version (AMD).")
    gpu_power_limit_mw: int | None = Field(default=None, description="Enforced power limit of the first GPU, mW.")
    gpu_max_sm_clock_mhz: int | None = Field(default=None, description="Maximum SM/core clock of the first GPU, MHz.")
    telemetry_source: str | None = Field(default=None, description="Sampler that produced telemetry rows, if any.")
    telemetry_note: str | None = Field(
        default=None, description="Which power reading was used, or why there is no (or only partial) power data."
    )
    engine_metrics_source: str | None = Field(
        default=None, description="Engine endpoint scraped for engine_metrics rows (e.g. 'llama.cpp /metrics')."
    )
    engine_metrics_note: str | None = Field(
        default=None, description="Why there are no (or fewer) engine_metrics rows; null when scraping went fine."
    )
    # Workload
    workload: str = Field(description="Workload label.")
    load_mode: str = Field(description="closed or poisson.")
    concurrency: int = Field(description="Concurrent requests (closed loop) or in-flight cap (poisson).")
    rate_rps: float | None = Field(description="Poisson mean arrival rate, requests/s; null for closed loop.")
    warmup_requests: int = Field(description="Warm-up requests sent before measuring.")
    measured_requests: int = Field(description="Measured requests sent.")
    max_tokens: int = Field(description="Output tokens requested per request.")
    num_ctx: int = Field(description="Context length per sequence.")
    temperature: float = Field(description="Sampling temperature.")
    seed: int = Field(description="Base seed; request i used seed + i.")
    ignore_eos: bool = Field(description="Whether exactly max_tokens were requested.")
    extra_body: str | None = Field(
        default=None, description="JSON of the engine-specific fields added to every request body; null when none."
    )
    prompt_set_hash: str = Field(description="sha256 of the JSON list of prompts.")
    config_hash: str = Field(description="sha256 of the canonical JSON of the whole validated config.")
    # Pricing keys (prices themselves stay in the price tables, so costs can be recomputed)
    hardware_key: str = Field(description="Key into the hardware price table.")
    site_key: str = Field(description="Key into the site table (electricity price, PUE).")
    ops_key: str = Field(description="Key into the ops-labour table.")
    utilisation: float = Field(description="Assumed fraction of the month serving at the measured rate.")
    # Tool provenance
    tool_version: str = Field(description="tcobench version.")
    git_revision: str | None = Field(description="git commit of tcobench's source, when known.")


class RequestRecord(StrictModel):
    """One row per request, warm-up and measured alike; a failed request is a row with its error."""

    run_id: str = Field(description="Run this request belongs to.")
    date: str = Field(pattern=DATE_PATTERN, description="UTC date the run started, YYYY-MM-DD (partition key).")
    host: str = Field(pattern=HOST_PATTERN, description="Measured host (partition key).")
    phase: Phase = Field(description="warmup or measure.")
    request_index: int = Field(description="0-based index within its phase.")
    prompt_index: int = Field(description="Index into the workload's prompt list.")
    seed: int = Field(description="Seed sent with the request.")
    start_ns: int = Field(description="Request sent, ns since the Unix epoch (UTC).")
    ttft_ns: int | None = Field(description="Time to first content token: first content chunk - start, ns.")
    e2e_ns: int | None = Field(
        description="End-to-end latency: end of the response stream (or the failure) - start, ns."
    )
    decode_ns: int | None = Field(description="Last content chunk - first content chunk, ns.")
    chunks: int = Field(description="Content-bearing stream chunks received.")
    itl_ns: list[int] = Field(description="Gaps between consecutive content chunks, ns (chunks - 1 values).")
    prompt_tokens: int | None = Field(description="Prompt tokens as counted by the server.")
    output_tokens: int | None = Field(description="Output tokens as counted by the server.")
    cached_tokens: int | None = Field(description="Prompt tokens served from the engine's cache, if reported.")
    token_count_source: str = Field(description="usage, server_counters, or none (no server count).")
    finish_reason: str | None = Field(description="finish_reason (OpenAI) or done_reason (Ollama).")
    server_load_ns: int | None = Field(description="Engine-reported model load time, ns (Ollama).")
    server_prompt_eval_count: int | None = Field(description="Engine-reported prompt tokens evaluated.")
    server_prompt_eval_ns: int | None = Field(
        description="Engine-reported prompt evaluation time, ns. Ollama: excludes cached prompt tokens."
    )
    server_eval_count: int | None = Field(description="Engine-reported generated tokens.")
    server_eval_ns: int | None = Field(description="Engine-reported generation (decode) time, ns.")
    server_total_ns: int | None = Field(description="Engine-reported total request time, ns (Ollama).")
    counter_note: str | None = Field(description="Caveat on the server counters, e.g. Ollama's cache rule.")
    http_status: int | None = Field(description="HTTP status of the response; null if none arrived.")
    error: str | None = Field(description="Why the request failed; null on success.")


class TelemetryRecord(StrictModel):
    """One row per device sample (samplers arrive with the nightly/telemetry work)."""

    run_id: str = Field(description="Run this sample belongs to.")
    date: str = Field(pattern=DATE_PATTERN, description="UTC date the run started, YYYY-MM-DD (partition key).")
    host: str = Field(pattern=HOST_PATTERN, description="Measured host (partition key).")
    ts_ns: int = Field(description="Sample time, ns since the Unix epoch (UTC).")
    phase: str = Field(description="idle, warmup or measure.")
    source: str = Field(description="nvml, amdsmi, nvidia-smi, amd-smi or rapl.")
    device_index: int = Field(description="Device index on the host.")
    device_uuid: str | None = Field(description="Device UUID, when the source reports one.")
    power_mw: int | None = Field(description="Power draw, mW.")
    energy_mj: int | None = Field(description="Cumulative energy counter, mJ.")
    util_pct: float | None = Field(description="Device utilisation, percent.")
    mem_used_bytes: int | None = Field(description="Device memory used, bytes.")
    sm_clock_mhz: int | None = Field(description="Core/SM clock, MHz.")
    temperature_c: float | None = Field(description="Device temperature, degrees Celsius.")
    power_limit_mw: int | None = Field(description="Enforced power limit, mW.")
