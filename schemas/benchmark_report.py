"""What `tcobench export --format benchmark-report` writes: llm-d's ``benchmark_report`` schema, version 0.2.

The schema is llm-d-benchmark's pydantic model (github.com/llm-d/llm-d-benchmark,
llmdbenchmark/analysis/benchmark_report/schema_v0_2.py; not on PyPI). These models are the part of it tcobench fills,
with the same field names and nesting, closed like it (``extra="forbid"``); tests/unit/tasks/export validates every
exported document against the JSON Schema of the vendored upstream model. A figure tcobench does not have is left out
(``None``, dropped from the document), never filled in. Units are the schema's (``Units``): ms, ms/token, tokens/s,
queries/s, count.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from tcobench.schemas.base import StrictModel

__all__ = [
    "BENCHMARK_REPORT_VERSION",
    "BrAccelerator",
    "BrAggregate",
    "BrComponent",
    "BrComponentMetadata",
    "BrEngine",
    "BrGeneric",
    "BrHost",
    "BrLatency",
    "BrLoad",
    "BrLoadMetadata",
    "BrLoadStandardized",
    "BrModel",
    "BrNative",
    "BrParallelism",
    "BrRequestPerformance",
    "BrRequests",
    "BrResults",
    "BrRun",
    "BrRunTime",
    "BrScenario",
    "BrSequenceLength",
    "BrStatistics",
    "BrThroughput",
    "BenchmarkReport",
    "BrUnits",
]

BENCHMARK_REPORT_VERSION: Literal["0.2"] = "0.2"


class BrUnits(StrEnum):
    """The schema's units that tcobench's figures are written in (upstream ``base.Units``)."""

    quantity = "count"  # a count of tokens (upstream Units.COUNT)
    ms = "ms"
    ms_per_token = "ms/token"
    tokens_per_s = "tokens/s"
    queries_per_s = "queries/s"


class BrStatistics(StrictModel):
    """A distribution (upstream ``Statistics``): its mean is required, every other figure optional."""

    units: BrUnits = Field(description="Units of every figure here.")
    mean: float = Field(description="Mean.")
    stddev: float | None = Field(default=None, ge=0, description="Sample standard deviation.")
    min: float | None = Field(default=None, description="Minimum.")
    p50: float | None = Field(default=None, description="Median.")
    p90: float | None = Field(default=None, description="90th percentile.")
    p99: float | None = Field(default=None, description="99th percentile.")
    max: float | None = Field(default=None, description="Maximum.")


class BrRequests(StrictModel):
    """Request counts and lengths (upstream ``AggregateRequests``)."""

    total: int = Field(ge=0, description="Measured requests sent (run_summary.n).")
    failures: int | None = Field(default=None, ge=0, description="Measured requests that failed (run_summary.errors).")
    incomplete: int | None = Field(
        default=None, ge=0, description="Requests in flight when a timed run ended (run_summary.in_flight_at_stop)."
    )
    input_length: BrStatistics | None = Field(default=None, description="Prompt tokens per ok request, count.")
    output_length: BrStatistics | None = Field(default=None, description="Output tokens per ok request, count.")


class BrLatency(StrictModel):
    """Latency distributions over the ok requests (upstream ``AggregateLatency``)."""

    time_to_first_token: BrStatistics | None = Field(default=None, description="TTFT, ms.")
    time_per_output_token: BrStatistics | None = Field(
        default=None, description="TPOT: decode time / (output tokens - 1) per request, ms/token."
    )
    inter_token_latency: BrStatistics | None = Field(
        default=None, description="ITL: gaps between content chunks, over all gaps, ms/token."
    )
    request_latency: BrStatistics | None = Field(default=None, description="End-to-end latency, ms.")


class BrThroughput(StrictModel):
    """Aggregate rates over the measured window (upstream ``AggregateThroughput``): the mean is the run's rate."""

    input_token_rate: BrStatistics | None = Field(default=None, description="Prompt tokens / measure_s, tokens/s.")
    output_token_rate: BrStatistics | None = Field(default=None, description="run_summary.output_tok_s, tokens/s.")
    total_token_rate: BrStatistics | None = Field(default=None, description="run_summary.total_tok_s, tokens/s.")
    request_rate: BrStatistics | None = Field(default=None, description="Ok requests / measure_s, queries/s.")


class BrAggregate(StrictModel):
    """Upstream ``AggregateRequestPerformance``."""

    requests: BrRequests | None = Field(default=None, description="Request counts and lengths.")
    latency: BrLatency | None = Field(default=None, description="Latency distributions.")
    throughput: BrThroughput | None = Field(default=None, description="Rates.")


class BrRequestPerformance(StrictModel):
    """Upstream ``RequestPerformance``: tcobench writes the aggregate only."""

    aggregate: BrAggregate | None = Field(default=None, description="Aggregate figures of the run.")


class BrResults(StrictModel):
    """Upstream ``Results``."""

    request_performance: BrRequestPerformance | None = Field(default=None, description="Request-level figures.")


class BrRunTime(StrictModel):
    """Upstream ``RunTime``."""

    start: dt.datetime | None = Field(default=None, description="Run start, UTC (runs.started_ns).")
    end: dt.datetime | None = Field(default=None, description="Run end, UTC (runs.finished_ns).")
    duration: str | None = Field(default=None, description="ISO-8601 duration, end - start.")


class BrRun(StrictModel):
    """Upstream ``Run``."""

    uid: str = Field(description="runs.run_id.")
    eid: str | None = Field(default=None, description="runs.batch_id: the runs of one invocation or night.")
    time: BrRunTime | None = Field(default=None, description="When the run ran.")
    description: str | None = Field(default=None, description="What ran where, and its status.")
    keywords: list[str] | None = Field(default=None, description="host, engine, model, workload, status as key:value.")


class BrComponentMetadata(StrictModel):
    """Upstream ``ComponentMetadata``."""

    schema_version: str = Field(default="0.0.1", description="Component schema version.")
    label: str = Field(description="Unique name of the component in this report.")
    cfg_id: str = Field(description="A hash of the component's configuration.")
    description: str | None = Field(default=None, description="What the component is.")


class BrParallelism(StrictModel):
    """Upstream ``InferenceEngineParallelism``: the sizes the run row has; absent ones take upstream's default 1."""

    tp: int | None = Field(default=None, ge=0, description="runs.tensor_parallel.")
    dp: int | None = Field(default=None, ge=0, description="runs.data_parallel.")
    pp: int | None = Field(default=None, ge=1, description="runs.pipeline_parallel.")


class BrAccelerator(StrictModel):
    """Upstream ``InferenceEngineAccelerator``."""

    model: str = Field(description="runs.gpu_name.")
    count: int = Field(ge=0, description="run_summary.gpus_counted (else runs.gpu_count).")
    parallelism: BrParallelism = Field(description="Parallel sizes.")


class BrModel(StrictModel):
    """Upstream ``InferenceEngineModel``."""

    name: str = Field(description="runs.model_name.")


class BrEngine(StrictModel):
    """Upstream ``InferenceEngine`` (kind inference_engine): a run whose accelerator is known."""

    kind: Literal["inference_engine"] = Field(default="inference_engine", description="Component kind.")
    tool: str = Field(description="runs.engine_name.")
    tool_version: str = Field(description="runs.engine_version.")
    role: Literal["replica"] = Field(default="replica", description="tcobench measures one serving instance.")
    replicas: int = Field(default=1, ge=1, description="One instance.")
    model: BrModel = Field(description="The model served.")
    accelerator: BrAccelerator = Field(description="The accelerators it used.")


class BrGeneric(StrictModel):
    """Upstream ``Generic`` (kind generic): the engine of a run on a CPU host (no accelerator to name)."""

    kind: Literal["generic"] = Field(default="generic", description="Component kind.")
    tool: str = Field(description="runs.engine_name.")
    tool_version: str = Field(description="runs.engine_version.")
    model_name: str | None = Field(default=None, description="runs.model_name.")


class BrHost(StrictModel):
    """Upstream ``Generic`` (kind generic, extra fields allowed there): the measured host's facts from the run row."""

    kind: Literal["generic"] = Field(default="generic", description="Component kind.")
    tool: Literal["host"] = Field(default="host", description="This component is the host.")
    tool_version: str = Field(description="runs.host_os.")
    hardware_key: str = Field(description="runs.hardware_key: the price table's hardware row.")
    host_kernel: str = Field(description="runs.host_kernel.")
    host_arch: str = Field(description="runs.host_arch.")
    host_cpu: str = Field(description="runs.host_cpu.")
    host_cpu_count: int = Field(description="runs.host_cpu_count.")
    host_mem_bytes: int = Field(description="runs.host_mem_bytes, bytes.")
    gpu_vendor: str | None = Field(default=None, description="runs.gpu_vendor.")
    gpu_name: str | None = Field(default=None, description="runs.gpu_name.")
    gpu_count: int | None = Field(default=None, description="runs.gpu_count.")
    driver_version: str | None = Field(default=None, description="runs.driver_version.")
    cuda_version: str | None = Field(default=None, description="runs.cuda_version.")
    rocm_version: str | None = Field(default=None, description="runs.rocm_version.")


class BrNative(StrictModel):
    """Upstream ``ComponentNative`` / ``LoadNative``: the tool's own configuration, as it stored it."""

    config: dict[str, Any] | None = Field(default=None, description="Configuration, in the tool's own terms.")


class BrComponent(StrictModel):
    """Upstream ``Component``."""

    metadata: BrComponentMetadata = Field(description="Which component.")
    standardized: BrEngine | BrGeneric | BrHost = Field(description="Standardized details.")
    native: BrNative = Field(description="Native details.")


class BrSequenceLength(StrictModel):
    """Upstream ``SequenceLength``."""

    distribution: Literal["fixed", "other"] = Field(description="fixed: asked exactly; other: the measured mean.")
    value: float = Field(ge=0, description="Tokens.")
    min: int | None = Field(default=None, ge=0, description="Smallest, tokens.")
    max: int | None = Field(default=None, ge=1, description="Largest, tokens.")


class BrLoadStandardized(StrictModel):
    """Upstream ``LoadStandardized``."""

    tool: Literal["tcobench"] = Field(default="tcobench", description="The load generator.")
    tool_version: str = Field(description="runs.tool_version.")
    parallelism: int = Field(default=1, ge=1, description="runs.client_procs (client processes), else 1.")
    source: Literal["random", "sampled", "unknown"] = Field(description="How prompts were made (runs.prompt_source).")
    input_seq_len: BrSequenceLength = Field(description="Prompt tokens served (measured).")
    output_seq_len: BrSequenceLength | None = Field(
        default=None, description="Output tokens, when enforced (runs.ignore_eos: max_tokens exactly)."
    )
    rate_qps: float | None = Field(default=None, gt=0, description="runs.rate_rps (Poisson load).")
    concurrency: int | None = Field(default=None, ge=1, description="runs.concurrency.")


class BrLoadMetadata(StrictModel):
    """Upstream ``LoadMetadata``."""

    schema_version: str = Field(default="0.0.1", description="Load schema version.")
    cfg_id: str | None = Field(default=None, description="runs.prompt_set_hash: the prompts sent.")
    description: str | None = Field(default=None, description="runs.workload.")


class BrLoad(StrictModel):
    """Upstream ``Load``."""

    metadata: BrLoadMetadata = Field(description="Which workload.")
    standardized: BrLoadStandardized = Field(description="Standardized details.")
    native: BrNative = Field(description="The whole tcobench run row, raw units (the provenance an importer needs).")


class BrScenario(StrictModel):
    """Upstream ``Scenario``."""

    stack: list[BrComponent] | None = Field(default=None, description="Engine and host.")
    load: BrLoad | None = Field(default=None, description="The workload (absent: the run served no ok request).")


class BenchmarkReport(StrictModel):
    """One run as llm-d's ``benchmark_report`` v0.2 (upstream ``BenchmarkReportV02``)."""

    version: Literal["0.2"] = Field(default=BENCHMARK_REPORT_VERSION, description="Schema version.")
    run: BrRun = Field(description="Which run.")
    scenario: BrScenario | None = Field(default=None, description="Stack and workload.")
    results: BrResults = Field(description="The run's figures.")
