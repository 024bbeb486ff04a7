"""What `tcobench import` reads: the formats it knows, the labels given on the command line, and the runs a file
holds once parsed (before they become RunRecord and RequestRecord rows).

A parsed figure the file does not carry is None; the rows keep it NULL (nothing is made up).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from tcobench.schemas.base import GpuVendor, StrictModel
from tcobench.schemas.records import HOST_PATTERN

__all__ = ["ImportFormat", "ImportLabels", "ParsedFile", "ParsedRequest", "ParsedRun"]


class ImportFormat(StrEnum):
    """The result files `tcobench import --format` reads (one importer module each: tasks/imports/)."""

    vllm_bench = "vllm-bench"
    aiperf = "aiperf"
    guidellm = "guidellm"
    # a `tcobench export --format parquet` folder: runs measured by tcobench, taken back whole (tasks/imports/tables.py)
    parquet = "parquet"


class ImportLabels(StrictModel):
    """What a result file does not say about where it was measured, given on the command line."""

    host: str | None = Field(default=None, pattern=HOST_PATTERN, description="Name of the measured host.")
    hardware: str | None = Field(default=None, min_length=1, description="Price-table hardware key of that host.")
    gpus: int | None = Field(default=None, ge=0, description="GPUs the engine was given (0: a CPU host).")
    vendor: GpuVendor | None = Field(default=None, description="cpu, nvidia or amd.")
    gpu_model: str | None = Field(default=None, min_length=1, description="Accelerator model, e.g. H100.")
    engine: str | None = Field(default=None, min_length=1, description="Engine product, e.g. vllm, sglang.")
    engine_version: str | None = Field(default=None, min_length=1, description="Engine version.")
    model: str | None = Field(default=None, min_length=1, description="Model name, where the file has none.")
    tool_version: str | None = Field(
        default=None, min_length=1, description="Version of the tool that wrote the file, where the file has none."
    )
    site: str = Field(default="default", min_length=1, description="Price-table site key (electricity, PUE).")
    ops: str = Field(default="default", min_length=1, description="Price-table ops key (labour).")
    utilisation: float = Field(default=0.5, gt=0.0, le=1.0, description="Assumed utilisation, 0-1.")


class ParsedRequest(StrictModel):
    """One request of a file with per-request data; times in ns since the Unix epoch (UTC) or ns durations."""

    start_ns: int = Field(description="Request sent, ns since the Unix epoch.")
    ttft_ns: int | None = Field(default=None, description="Time to first token, ns.")
    e2e_ns: int | None = Field(default=None, description="End-to-end latency, ns.")
    itl_ns: list[int] = Field(default_factory=list, description="Gaps between tokens or chunks, ns.")
    prompt_tokens: int | None = Field(default=None, description="Prompt tokens.")
    output_tokens: int | None = Field(default=None, description="Output tokens.")
    error: str | None = Field(default=None, description="Why the request failed; None when it succeeded.")


class ParsedRun(StrictModel):
    """One benchmark of a file: a load level with its aggregates and, where the file has them, its requests."""

    started_ns: int = Field(description="Benchmark start, ns since the Unix epoch (UTC).")
    finished_ns: int = Field(description="Benchmark end, ns since the Unix epoch (UTC).")
    model: str | None = Field(default=None, description="Model the requests named.")
    api: str = Field(default="unknown", description="Endpoint path or backend the tool used.")
    url: str = Field(default="", description="Base URL the tool sent to, where the file says.")
    load_mode: str = Field(description="closed (a concurrency limit) or poisson (a request rate).")
    concurrency: int = Field(ge=1, description="Concurrency limit (or the requests in flight allowed).")
    rate_rps: float | None = Field(default=None, description="Request rate asked for, requests/s.")
    requests: int = Field(ge=0, description="Requests the tool counted.")
    failed: int = Field(default=0, ge=0, description="Requests that failed.")
    warmup_requests: int = Field(default=0, ge=0, description="Warm-up requests the tool sent first.")
    max_tokens: int | None = Field(default=None, description="Output tokens asked for per request.")
    ignore_eos: bool = Field(default=False, description="Whether exactly max_tokens were asked for.")
    temperature: float | None = Field(default=None, description="Sampling temperature; None: the server's.")
    seed: int | None = Field(default=None, description="Seed of the dataset sampling.")
    workload: str = Field(description="Workload label: the tool's dataset name and shape.")
    input_tokens_spec: str | None = Field(default=None, description="Requested input length, e.g. 128.")
    output_tokens_spec: str | None = Field(default=None, description="Requested output length, e.g. 32.")
    tokenizer: str | None = Field(default=None, description="Tokenizer the tool counted with.")
    per_request: list[ParsedRequest] = Field(default_factory=list, description="The requests, where the file has them.")
    aggregates: dict[str, float | None] = Field(
        default_factory=dict, description="The file's own summary figures, by its names (runs.source_summary)."
    )


class ParsedFile(StrictModel):
    """A parsed result file: the tool, its version (None when the file does not say) and its runs."""

    tool: str = Field(description="The tool that wrote the file: vllm-bench, aiperf or guidellm.")
    version: str | None = Field(description="The tool's version, where the file says it.")
    runs: list[ParsedRun] = Field(description="One entry per benchmark the file holds.")
    notes: list[str] = Field(default_factory=list, description="What the file lacks, in one line each.")
