"""Stored records: one model per table. Raw units only (ns, tokens, bytes, mW, mJ).

The Arrow/Parquet schemas are derived from these models by ``schemas.arrow``; nothing else
defines a column. Timestamps are integers (ns since the Unix epoch, UTC) so that every
duration is an exact integer difference.
"""

from __future__ import annotations

from pydantic import Field

from tcobench.schemas.base import FailureClass, GpuVendor, Phase, RunStatus, StrictModel

__all__ = ["DATE_PATTERN", "HOST_PATTERN", "ClientProcessCheck", "RequestRecord", "RunRecord", "TelemetryRecord"]

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
    status: RunStatus = Field(
        description="ok, partial (some requests failed), failed, or interrupted (stopped early by a signal or its "
        "deadline: only the requests that finished are stored)."
    )
    error: str | None = Field(description="Why the run failed, is partial or was interrupted; null when ok.")
    failure_class: FailureClass | None = Field(
        default=None,
        description="Why a run that is not ok failed, as the rules of tcobench/data/failure_classes.toml decide when "
        "the run is recorded: platform, engine, harness, infrastructure or unknown; null when ok and in rows stored "
        "before failure classes.",
    )
    failure_rule: str | None = Field(
        default=None, description="The rule of that file that decided failure_class; null when none did (unknown)."
    )
    cell: str | None = Field(
        default=None, description="Nightly cell label host/engine/model/workload; null outside a nightly."
    )
    # Host facts (where they were read: host_facts_source)
    host_os: str = Field(description="Operating system and release, e.g. 'Linux 6.1.0 (Debian 12)'.")
    host_kernel: str = Field(description="Kernel release (uname -r).")
    host_arch: str = Field(description="Machine architecture (uname -m).")
    host_cpu: str = Field(description="CPU model name.")
    host_cpu_count: int | None = Field(description="Logical CPUs visible to tcobench; null in imported runs.")
    host_mem_bytes: int | None = Field(description="Total memory of the host, bytes; null in imported runs.")
    python_version: str = Field(description="Python running tcobench.")
    host_facts_source: str | None = Field(
        default=None,
        description="Where host_os/kernel/arch/cpu/mem were read: engine-host (on the machine the engine runs on: "
        "embedded, loopback or same-host endpoint, local container, fleet worker) or client (the engine runs "
        "elsewhere: these describe the load generator's machine, not the platform); null in older rows.",
    )
    # Engine and model
    engine_kind: str = Field(description="embedded, endpoint or container.")
    engine_name: str = Field(description="Engine product, e.g. llama.cpp, ollama, vllm, or 'unknown'.")
    engine_version: str = Field(description="Engine version/build as reported by the engine itself.")
    engine_detected_from: str | None = Field(
        default=None,
        description="What engine_name and engine_version were read from (e.g. '/v1/models owned_by=vllm; version "
        "/version'); null where tcobench started the engine itself or in older rows.",
    )
    engine_url: str = Field(description="Base URL the requests went to.")
    engine_label: str | None = Field(
        default=None, description="The engine's label in the nightly matrix (its `name`); null outside a nightly."
    )
    client_placement: str | None = Field(
        default=None,
        description="Where the load generator ran relative to the engine: loopback, same-host-container or "
        "network; null when no engine was reached.",
    )
    rtt_p50_ns: int | None = Field(
        default=None,
        description="Median round trip of small health requests to the engine before the runs, ns; measured when "
        "client_placement is not loopback, else null.",
    )
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
    # The serving configuration (schemas/serving.py): what changes what the engine does, and the GPUs it was given
    config_id: str | None = Field(
        default=None,
        description="Short stable id of the serving configuration: the first 12 hex digits of the sha256 of "
        "serving_config; null in rows stored before configurations (views fall back to the engine, its version, "
        "the model and the GPU count).",
    )
    serving_config: str | None = Field(
        default=None, description="Canonical JSON of the serving configuration (schemas.ServingConfig)."
    )
    dtype: str | None = Field(default=None, description="The weights' dtype or quantisation the engine was given.")
    tensor_parallel: int | None = Field(default=None, description="Tensor parallel size (GPUs one model spans).")
    pipeline_parallel: int | None = Field(default=None, description="Pipeline parallel size.")
    data_parallel: int | None = Field(default=None, description="Data parallel size (model copies).")
    max_num_seqs: int | None = Field(
        default=None, description="Batch limit: sequences decoded at once (vLLM max_num_seqs, llama.cpp slots)."
    )
    max_batched_tokens: int | None = Field(default=None, description="Batch limit: tokens per engine step.")
    kv_cache_dtype: str | None = Field(default=None, description="KV-cache dtype the engine was given.")
    speculative: str | None = Field(default=None, description="Speculative decoding settings (JSON), if any.")
    gpus_given: int | None = Field(
        default=None,
        description="GPUs handed to the engine (its device list, TP x PP x DP, or the matrix's declared gpus); 0: "
        "none (the CPU); null where unknown (the host's count is used).",
    )
    gpus_given_source: str | None = Field(
        default=None,
        description="Where gpus_given came from: device_list, count, parallel, declared, host or cpu "
        "(schemas.GpusSource).",
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
    gpu_firmware: str | None = Field(
        default=None,
        description="Firmware (VBIOS) version of the first accelerator, where its sampler reads one (NVML, nvidia-smi, "
        "amdsmi); null otherwise, and in rows stored before it was read.",
    )
    gpu_source: str | None = Field(
        default=None,
        description="Where gpu_vendor/gpu_name/gpu_count come from: detected (a GPU sampler where the engine "
        "runs) or declared (the inventory's, when nothing was detected); null when neither names an accelerator.",
    )
    declared_vendor: GpuVendor | None = Field(
        default=None, description="Vendor the inventory declares for the host (cpu, nvidia, amd); null: none."
    )
    declared_gpu_model: str | None = Field(default=None, description="Accelerator model the inventory declares.")
    declared_gpu_count: int | None = Field(default=None, description="Accelerator count the inventory declares.")
    identity_warning: str | None = Field(
        default=None, description="Declared and detected hardware disagree (vendor, model or count): how."
    )
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
    load_mode: str = Field(description="closed, poisson or replay (constant: an imported guidellm constant-rate run).")
    concurrency: int = Field(description="Concurrent requests (closed loop) or in-flight cap (poisson), as configured.")
    concurrency_reached: int | None = Field(
        default=None,
        description="The most requests that were in flight at once over the run (warm-up and measured, from their "
        "send and end times); below concurrency when the plan could not reach it (tasks/load/limits.py); null in "
        "older rows.",
    )
    rate_rps: float | None = Field(description="Poisson mean arrival rate, requests/s; null for closed loop.")
    time_scale: float | None = Field(
        default=None,
        description="A replayed trace's time scale: every recorded offset was multiplied by it (0.5: twice as fast, "
        "the trace's rate doubled); null for closed and Poisson loads, and in replay rows stored before it.",
    )
    warmup_requests: int = Field(description="Warm-up requests sent before measuring.")
    measured_requests: int = Field(description="Measured requests sent.")
    max_tokens: int | None = Field(
        description="Output tokens requested per request; null where an imported file does not say."
    )
    num_ctx: int | None = Field(description="Context length per sequence; null where an imported file does not say.")
    temperature: float | None = Field(
        description="Sampling temperature; null where an imported file does not say (the server's default)."
    )
    seed: int | None = Field(
        description="Base seed; request i used seed + i (imported: the tool's sampling seed; null where unsaid)."
    )
    ignore_eos: bool = Field(description="Whether exactly max_tokens were requested.")
    extra_body: str | None = Field(
        default=None, description="JSON of the engine-specific fields added to every request body; null when none."
    )
    prompt_set_hash: str = Field(
        description="sha256 of the JSON list of prompts; for synthetic prompts of the corpus, the shape and "
        "tokenizer; for a dataset, of the file's bytes."
    )
    preset: str | None = Field(default=None, description="Named workload preset the run started from.")
    profile: str | None = Field(default=None, description="Run profile the workload asked for (claim); null: none.")
    claim_grade: bool | None = Field(
        default=None,
        description="Under the claim profile: whether the run's settings met its minimums (false: see claim_note); "
        "null without the profile. The stored rows are judged again by `tcobench compare` whatever the profile.",
    )
    claim_note: str | None = Field(
        default=None, description="Why a claim-profile run's settings fall short (duration, requests, warm-up)."
    )
    prompt_source: str | None = Field(
        default=None,
        description="Where prompts came from: prompts (the list), synthetic (corpus), dataset or trace (a replay).",
    )
    input_tokens_spec: str | None = Field(
        default=None, description="Requested input length per request (synthetic): e.g. 512 or normal:1024,128,1-1536."
    )
    output_tokens_spec: str | None = Field(
        default=None, description="Requested output length per request, e.g. 128 or uniform:64-256; null: max_tokens."
    )
    dataset_path: str | None = Field(
        default=None, description="Dataset file the requests came from, or the replayed trace (prompt_source trace)."
    )
    dataset_records: int | None = Field(
        default=None, description="Records in that dataset file, or the replayed trace's requests (its window)."
    )
    shared_prefix_tokens: int | None = Field(
        default=None, description="Tokens of the system prompt every request shares (0: none)."
    )
    turns: int | None = Field(default=None, description="Turns per conversation (1: single requests).")
    tokenizer: str | None = Field(
        default=None, description="Tokenizer that built the prompts and counted tokens the server did not count."
    )
    prompt_overhead_tokens: int | None = Field(
        default=None,
        description="Tokens the server adds to a prompt's own (BOS, chat template), subtracted when "
        "building synthetic prompts.",
    )
    prompt_overhead_source: str | None = Field(
        default=None, description="How that overhead was found: probe (a request's usage), tokenizer, or none."
    )
    output_len_enforced: bool | None = Field(
        default=None,
        description="True when every ok measured request got exactly its requested output tokens; "
        "false when the engine could not be made to (see output_len_note); null when no length was requested.",
    )
    output_len_note: str | None = Field(default=None, description="How output length was enforced, or why not.")
    duration_s: float | None = Field(default=None, description="Requested measurement duration, s (timed runs).")
    min_requests: int | None = Field(default=None, description="Smallest request count of a timed run.")
    stop_rule: str | None = Field(
        default=None,
        description="What ended the measurement: requests (the count), duration, min_requests (the "
        "duration passed first), or interrupted.",
    )
    # The client's self-check over the measured phase (tasks/load/selfcheck.py): one list item per client process
    client_procs: int | None = Field(default=None, description="Client worker processes that sent the requests.")
    client_wall_ns: list[int] | None = Field(
        default=None, description="Per client process: wall time of its measured phase, ns."
    )
    client_cpu_ns: list[int] | None = Field(
        default=None,
        description="Per client process: CPU time (user + system) of its event-loop thread in its measured phase, ns.",
    )
    client_loop_lag_p50_ns: list[int] | None = Field(
        default=None,
        description="Per client process: median event-loop lag (a timer's wake-up minus when it was due, sampled "
        "every 10 ms), ns.",
    )
    client_loop_lag_p99_ns: list[int] | None = Field(
        default=None, description="Per client process: 99th percentile of that event-loop lag, ns."
    )
    client_own_lag_p99_ns: list[int] | None = Field(
        default=None,
        description="Per client process: 99th percentile of the loop's own lag: each lag sample less the loop "
        "thread's run-queue wait over that sample (time another process held the core), ns.",
    )
    client_lag_samples: list[int] | None = Field(
        default=None, description="Per client process: event-loop lag samples taken."
    )
    client_saturated: bool | None = Field(
        default=None,
        description="The client itself was a limit: a process's own loop lag p99 over the threshold or its CPU at "
        "95% of its core (docs/dev/performance.md); the run's timings are then not trustworthy. Null: not checked.",
    )
    client_check_note: str | None = Field(
        default=None, description="Why the client was flagged saturated (the process, figure and threshold)."
    )
    slo_ttft_ms: float | None = Field(default=None, description="SLO target: time to first token, ms.")
    slo_tpot_ms: float | None = Field(default=None, description="SLO target: time per output token, ms.")
    slo_itl_ms: float | None = Field(default=None, description="SLO target: the request's slo_quantile gap, ms.")
    slo_quantile: float | None = Field(
        default=None, description="Fraction of requests that must meet every target for the run to meet its SLO."
    )
    sweep_margin: float | None = Field(
        default=None, description="Self-stopping sweep: smallest relative throughput gain to go to the next level."
    )
    sweep_stop_on_slo: bool | None = Field(default=None, description="Self-stopping sweep: stop when the SLO breaks.")
    config_hash: str = Field(description="sha256 of the canonical JSON of the whole validated config.")
    # Pricing keys (prices themselves stay in the price tables, so costs can be recomputed)
    hardware_key: str = Field(
        description="Key into the hardware price table (a nightly: the inventory's declared `hardware` of the host)."
    )
    site_key: str = Field(description="Key into the site table (electricity price, PUE).")
    ops_key: str = Field(description="Key into the ops-labour table.")
    utilisation: float = Field(description="Assumed fraction of the month serving at the measured rate.")
    # Tool provenance
    tool_version: str = Field(description="tcobench version.")
    git_revision: str | None = Field(description="git commit of tcobench's source, when known.")
    source: str | None = Field(
        default=None,
        description="Where the run's figures come from: null, measured by tcobench, or 'imported:<tool> <version>' "
        "(`tcobench import`: vllm-bench, aiperf or guidellm; 'unknown' where neither the file nor --tool-version "
        "says the version).",
    )
    source_sha256: str | None = Field(
        default=None, description="sha256 of the imported file's bytes; null in measured runs."
    )
    source_file: str | None = Field(
        default=None, description="Path of the imported file as given; null in measured runs."
    )
    source_summary: str | None = Field(
        default=None,
        description="JSON of the imported file's own summary figures (by its names) and of what the file lacks "
        "(notes); null in measured runs.",
    )


class RequestRecord(StrictModel):
    """One row per request, warm-up and measured alike; a failed request is a row with its error."""

    run_id: str = Field(description="Run this request belongs to.")
    date: str = Field(pattern=DATE_PATTERN, description="UTC date the run started, YYYY-MM-DD (partition key).")
    host: str = Field(pattern=HOST_PATTERN, description="Measured host (partition key).")
    phase: Phase = Field(description="warmup or measure.")
    request_index: int = Field(description="0-based index within its phase.")
    prompt_index: int = Field(
        description="Index into the workload's prompt list, dataset record (0-based line), or synthetic corpus window."
    )
    seed: int | None = Field(description="Seed sent with the request; null in imported requests (not recorded).")
    conversation: int | None = Field(default=None, description="Conversation index (multi-turn workloads).")
    turn: int | None = Field(default=None, description="0-based turn within the conversation (multi-turn workloads).")
    prompt_sha256: str | None = Field(default=None, description="sha256 of the prompt (text or messages JSON) sent.")
    requested_input_tokens: int | None = Field(
        default=None, description="Prompt tokens asked for (synthetic prompts; history included); null: not shaped."
    )
    requested_output_tokens: int | None = Field(default=None, description="Output tokens asked for (max_tokens).")
    in_flight_at_stop: bool | None = Field(
        default=None,
        description="Sent before a timed run's end, finished after it (counted once, flagged); null in "
        "rows written before timed runs existed.",
    )
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
    token_count_source: str = Field(
        description="usage, server_counters, tokenizer (the server counted nothing: counted by the run's tokenizer), "
        "imported (the count of the tool whose file was imported) or none."
    )
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
    send_lateness_ns: int | None = Field(
        default=None,
        description="Open loop (poisson, replay): first send minus the request's scheduled arrival time, ns (waiting "
        "for a free slot under the in-flight cap included); null in a closed loop and for later turns of a "
        "conversation.",
    )
    scheduled_ns: int | None = Field(
        default=None,
        description="Open loop (poisson, replay): when the request was due, ns since the Unix epoch (UTC; a replay: "
        "the run's start plus the trace's recorded offset times the time scale); null in a closed loop, for later "
        "turns of a conversation and in older rows.",
    )
    sent_ns: int | None = Field(
        default=None,
        description="Open loop (poisson, replay): when its first attempt was sent, ns since the Unix epoch (UTC); "
        "sent_ns - scheduled_ns is the send lag (send_lateness_ns); null where scheduled_ns is.",
    )
    client_proc: int | None = Field(default=None, description="Client worker process (0-based) that sent it.")
    retries: int = Field(
        default=0,
        description="Times the request was sent again after HTTP 429/503 with Retry-After; its timings are those of "
        "the last attempt.",
    )
    error: str | None = Field(description="Why the request failed; null on success.")
    output_sha256: str | None = Field(
        default=None,
        description="sha256 of the whole output text (UTF-8), stored at temperature 0 for answer parity; null "
        "otherwise, on failure and in older rows.",
    )
    output_prefix: str | None = Field(
        default=None,
        description="The first 64 characters of the output text, stored at temperature 0 (compare: the share of "
        "identical prefixes); null otherwise, on failure and in older rows.",
    )


class ClientProcessCheck(StrictModel):
    """One client process's self-check over its measured phase (not a table: the run row keeps it per process)."""

    wall_ns: int = Field(description="Wall time of the measured phase, ns.")
    cpu_ns: int = Field(description="CPU time of the event-loop thread (user + system) in that time, ns.")
    lag_p50_ns: int | None = Field(description="Median event-loop lag, ns; null without samples.")
    lag_p99_ns: int | None = Field(description="99th percentile event-loop lag, ns; null without samples.")
    own_lag_p99_ns: int | None = Field(
        description="99th percentile of the loop's own lag (each sample less the thread's run-queue wait), ns."
    )
    lag_samples: int = Field(description="Event-loop lag samples taken.")


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
