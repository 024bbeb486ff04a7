"""Recorded traffic: trace file formats, how a trace is read (window, time scale, order), one request of a trace,
the rows of each published format, and the stored traffic profile of a trace (``tcobench trace stats``).

Pure data. How a file is streamed and checked is ``tasks.workload.read_trace``'s business.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tcobench.schemas.base import StrictModel
from tcobench.schemas.flags import Flag

__all__ = [
    "MOONCAKE_BLOCK_TOKENS",
    "AzureRow",
    "MooncakeRow",
    "TcobenchTraceRow",
    "TraceConfig",
    "TraceFormat",
    "TraceMessage",
    "TraceRequest",
    "TraceStatsRecord",
]

# Tokens per `hash_ids` block of a Mooncake trace. Sources: kvcache-ai/Mooncake FAST25-release/README.md (its sample
# request of input_length 6955 has 14 hash ids, ceil(6955 / 512)); ai-dynamo/dynamo benchmarks/data_generator/
# README.md ("the block_size (the page size of the KV cache) is assumed to be 512", --block-size default 512).
MOONCAKE_BLOCK_TOKENS = 512
_set = object.__setattr__  # TraceRequest.checked sets a frozen model's slots as model_construct does


class TraceFormat(StrEnum):
    """Layout of a trace file (``--trace-format``; left out: detected from the file's first line)."""

    mooncake = "mooncake"  # JSONL: timestamp (ms), input_length, output_length, hash_ids (kvcache-ai/Mooncake)
    azure = "azure"  # CSV: TIMESTAMP, ContextTokens, GeneratedTokens (Azure/AzurePublicDataset LLM inference traces)
    tcobench = "tcobench"  # JSONL: timestamp (ms) and prompt or messages, optionally output_tokens


class TraceConfig(StrictModel):
    """Which requests of a trace file are read, and on what clock (``tcobench trace stats``; ``tcobench run --trace``
    replays them, workload.trace)."""

    path: Annotated[
        Path, Flag("Replay a trace file (Mooncake, Azure or tcobench JSONL) at its timestamps.", name="trace")
    ] = Field(description="The trace file.")
    format: Annotated[
        TraceFormat | None,
        Flag(r"mooncake, azure or tcobench \[detected from the first line].", name="trace_format", cli_type=str | None),
    ] = Field(default=None, description="Its format; None: detected from the first line.")
    sort: Annotated[
        bool,
        Flag(
            "Replay the trace in timestamp order (else a timestamp going backwards is an error).",
            decls=("--sort/--no-sort",),
            show_default=False,
        ),
    ] = Field(
        default=False,
        description="Read the requests in timestamp order (an index of 24 bytes per request); without it a "
        "timestamp earlier than the one before is an error.",
    )
    window_s: Annotated[
        tuple[float, float] | None,
        Flag(
            "START,END: replay only the requests this many seconds after the first one.",
            name="trace_window",
            cli_type=str | None,
        ),
    ] = Field(
        default=None,
        description="[START, END) in seconds of the recorded trace from its first request: only these are read. "
        "TOML: [START, END]; command line: START,END.",
    )
    time_scale: Annotated[float, Flag("Multiply every recorded offset (0.5: replay twice as fast) [1].")] = Field(
        default=1.0, gt=0, description="Multiplies every recorded offset: 0.5 replays twice as fast."
    )
    max_requests: Annotated[
        int | None, Flag("A trace (or window) with more requests than this is refused [no limit].")
    ] = Field(default=None, gt=0, description="More requests than this (after the window) is an error; None: no limit.")

    @field_validator("window_s", mode="before")
    @classmethod
    def _window_text(cls, value: Any) -> Any:
        """The command line's ``START,END`` (and a TOML list) as a pair of numbers."""
        if isinstance(value, list):
            return tuple(value)
        if not isinstance(value, str):
            return value
        parts = value.split(",")
        try:
            if len(parts) != 2:
                raise ValueError
            return (float(parts[0]), float(parts[1]))
        except ValueError:
            raise ValueError(f"trace window {value!r}: give START,END in seconds, e.g. 0,3600") from None

    @field_validator("format", mode="before")
    @classmethod
    def _format_text(cls, value: Any) -> Any:
        """The format as text (TOML, the command line): strict mode wants the enum."""
        formats = {f.value: f for f in TraceFormat}
        if isinstance(value, str) and value in formats:
            return formats[value]
        return value

    @model_validator(mode="after")
    def _window_in_order(self) -> TraceConfig:
        if self.window_s is not None:
            start, end = self.window_s
            if not 0 <= start < end:
                raise ValueError(f"trace window {start:g},{end:g}: needs 0 <= START < END (seconds)")
        return self


class TraceMessage(StrictModel):
    """One chat message of a tcobench trace line."""

    role: str = Field(pattern="^(system|user|assistant|tool|developer)$", description="Who speaks.")
    content: str = Field(description="What is said.")


class TraceRequest(StrictModel):
    """One request of a trace, on the replay's clock: what the readers of every format yield."""

    line: int = Field(gt=0, description="1-based line of the trace file the request was read from.")
    at_ns: int = Field(
        ge=0,
        description="When to send it: ns after the first request read (the window's start when one is given), "
        "the recorded offset times the time scale.",
    )
    input_tokens: int | None = Field(
        default=None, ge=0, description="Prompt length, tokens (Mooncake, Azure); None when the trace has text."
    )
    output_tokens: int | None = Field(default=None, ge=0, description="Output length, tokens; None: not recorded.")
    hash_ids: tuple[int, ...] = Field(
        default=(), description="Prefix block ids (Mooncake): equal ids, equal blocks of MOONCAKE_BLOCK_TOKENS tokens."
    )
    prompt: str | None = Field(default=None, description="The prompt text (tcobench format).")
    messages: tuple[TraceMessage, ...] | None = Field(default=None, description="Chat messages (tcobench format).")

    @classmethod
    def checked(
        cls,
        line: int,
        at_ns: int,
        input_tokens: int | None,
        output_tokens: int | None,
        hash_ids: tuple[int, ...],
        prompt: str | None,
        messages: tuple[TraceMessage, ...] | None,
    ) -> TraceRequest:
        """A request of values a format's row model has validated already, not validated again: what
        ``model_construct`` does without its loop over the fields, the reader's largest cost per trace line
        (docs/dev/bench-log/2026-12-07-trace-parse.md). tests/unit/schemas/test_trace.py checks it equals a
        validated one."""
        request = cls.__new__(cls)
        values = {
            "line": line,
            "at_ns": at_ns,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "hash_ids": hash_ids,
            "prompt": prompt,
            "messages": messages,
        }
        _set(request, "__dict__", values)
        _set(request, "__pydantic_fields_set__", set(_REQUEST_FIELDS))  # a copy of a frozenset: no hashing per key
        _set(request, "__pydantic_extra__", None)
        _set(request, "__pydantic_private__", None)
        return request


_REQUEST_FIELDS = frozenset(TraceRequest.model_fields)  # every field is set by checked


class _TraceRow(BaseModel):
    """A line of a published format: extra fields are left alone (a later release may add some)."""

    model_config = ConfigDict(extra="ignore", strict=False, frozen=True)


class MooncakeRow(_TraceRow):
    """A line of a Mooncake trace (kvcache-ai/Mooncake FAST25-release/README.md)."""

    timestamp: float = Field(description="Arrival, ms since the trace's first request.")
    input_length: int = Field(ge=0, strict=True, description="Input tokens.")
    output_length: int = Field(ge=0, strict=True, description="Output tokens.")
    hash_ids: tuple[int, ...] = Field(default=(), description="Remapped hashes of the input's blocks, in order.")


class AzureRow(_TraceRow):
    """A row of an Azure LLM inference trace (Azure/AzurePublicDataset AzureLLMInferenceDataset2023.md, Schema)."""

    TIMESTAMP: str = Field(description="Invocation time, e.g. 2023-11-16 18:15:46.6805900 (UTC).")
    ContextTokens: int = Field(ge=0, description="Number of context tokens.")
    GeneratedTokens: int = Field(ge=0, description="Number of generated tokens.")


class TcobenchTraceRow(_TraceRow):
    """A line of a tcobench trace: your own traffic with its arrival times (docs/traces.md)."""

    timestamp: float = Field(description="Arrival, ms (any origin: offsets are taken from the first request).")
    prompt: str | None = Field(default=None, description="The prompt text.")
    messages: tuple[TraceMessage, ...] | None = Field(default=None, min_length=1, description="Chat messages.")
    output_tokens: int | None = Field(default=None, ge=0, strict=True, description="Output length, tokens.")

    @staticmethod
    def one_of(prompt: str | None, messages: tuple[TraceMessage, ...] | None) -> None:
        """A line has a prompt or messages, not both and not neither: ValueError otherwise (the trace reader applies
        it to rows validated as dicts)."""
        if (prompt is None) == (messages is None):
            raise ValueError('needs "prompt" (string) or "messages" (list of {"role", "content"}), one of them')

    @model_validator(mode="after")
    def _prompt_or_messages(self) -> TcobenchTraceRow:
        self.one_of(self.prompt, self.messages)
        return self


class TraceStatsRecord(StrictModel):
    """The traffic profile of one trace file (table ``trace_stats``): one row per `tcobench trace stats`."""

    stats_id: str = Field(description="Unique id of this row (UUID4 hex).")
    date: str = Field(description="UTC date the profile was taken, YYYY-MM-DD.")
    ts_ns: int = Field(description="When it was taken, ns since the Unix epoch (UTC).")
    path: str = Field(description="The trace file, as given.")
    sha256: str = Field(description="sha256 of the file's bytes.")
    format: str = Field(description="mooncake, azure or tcobench.")
    time_scale: float = Field(description="Offsets were multiplied by this.")
    window_start_s: float | None = Field(description="Window start, s of the recorded trace; None: whole trace.")
    window_end_s: float | None = Field(description="Window end, s of the recorded trace; None: whole trace.")
    requests: int = Field(description="Requests read.")
    duration_ns: int = Field(description="Last request's offset minus the first's, ns (after the time scale).")
    minutes: int = Field(description="Minutes the per-minute figures are taken over (every minute, empty ones too).")
    request_rate_mean: float = Field(description="Requests per minute, mean over the minutes.")
    request_rate_p95: float = Field(description="Requests per minute, 95th percentile over the minutes.")
    request_rate_peak: float = Field(description="Requests per minute, busiest minute.")
    token_rate_mean: float | None = Field(description="Input + output tokens per minute, mean.")
    token_rate_p95: float | None = Field(description="Input + output tokens per minute, 95th percentile.")
    token_rate_peak: float | None = Field(description="Input + output tokens per minute, busiest minute.")
    output_rate_mean: float | None = Field(description="Output tokens per minute, mean.")
    output_rate_p95: float | None = Field(description="Output tokens per minute, 95th percentile.")
    output_rate_peak: float | None = Field(description="Output tokens per minute, busiest minute.")
    input_p50: float | None = Field(description="Input length, tokens, median.")
    input_p90: float | None = Field(description="Input length, tokens, 90th percentile.")
    input_p99: float | None = Field(description="Input length, tokens, 99th percentile.")
    input_max: int | None = Field(description="Input length, tokens, largest.")
    output_p50: float | None = Field(description="Output length, tokens, median.")
    output_p90: float | None = Field(description="Output length, tokens, 90th percentile.")
    output_p99: float | None = Field(description="Output length, tokens, 99th percentile.")
    output_max: int | None = Field(description="Output length, tokens, largest.")
    prefix_shared_share: float | None = Field(
        description="Input tokens in hash_ids blocks seen in an earlier request, over all input tokens; None: the "
        "format records no blocks."
    )
    tool_version: str = Field(description="tcobench version.")
