"""How long a run will take, from its plan and the engine's speed in warm-up: said before measuring.

The warm-up gives the engine's prefill rate (prompt tokens / TTFT) and decode rate (output tokens after the first /
decode time), server-counted where the server counts. A request of the plan's mean lengths then takes ``mean input
/ prefill + mean output / decode``. Requests are taken one after another (the CPU engine gains little from parallel
slots; a GPU gains more, so there the figure is an upper bound), so:

- a counted level: (warm-up + measured requests) x that time;
- a timed level: warm-up x that time + max(duration, min_requests x that time) + the requests in flight at the end
  (concurrency, at most the plan's reach) x that time;
- a replay: warm-up + max(last offset + in flight at the end, its requests), at least warm-up + last offset + one
  request (``replay_floor_seconds``); the whole run: the sum over its levels (docs/run-behaviour.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tcobench.schemas import LengthDist, LengthKind, RequestRecord, TraceRequest, WorkloadConfig
from tcobench.tasks.engine.sizing import reachable_concurrency

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "LONG_RUN_S",
    "NightEstimate",
    "Speed",
    "mean_length",
    "night_estimate",
    "plan_seconds",
    "replay_floor_seconds",
    "warmup_speed",
]

LONG_RUN_S = 30 * 60  # longer than this on the embedded CPU engine: the user confirms (--yes) or shortens the run


@dataclass(frozen=True)
class Speed:
    """The engine's speed in warm-up."""

    prefill_tok_s: float | None
    decode_tok_s: float | None
    request_s: float  # mean end-to-end time of a warm-up request
    prompt_tokens: float | None  # mean prompt tokens of the warm-up requests

    def text(self) -> str:
        parts = [f"{self.request_s:.1f} s per warm-up request"]
        if self.prefill_tok_s:
            parts.append(f"prefill {self.prefill_tok_s:,.0f} tok/s")
        if self.decode_tok_s:
            parts.append(f"decode {self.decode_tok_s:,.1f} tok/s")
        return ", ".join(parts)


def warmup_speed(records: Sequence[RequestRecord]) -> Speed | None:
    """The speed of the ok warm-up requests; None when none succeeded."""
    ok = [r for r in records if r.error is None and r.e2e_ns]
    if not ok:
        return None
    prefill = [(r.prompt_tokens, r.ttft_ns) for r in ok if r.prompt_tokens and r.ttft_ns]
    decode = [((r.output_tokens or 0) - 1, r.decode_ns) for r in ok if (r.output_tokens or 0) > 1 and r.decode_ns]
    rate = [
        sum(t for t, _ in pairs) * 1e9 / sum(ns for _, ns in pairs) if pairs else None for pairs in (prefill, decode)
    ]
    prompts = [r.prompt_tokens for r in ok if r.prompt_tokens]
    mean_e2e = sum(r.e2e_ns or 0 for r in ok) / len(ok) / 1e9
    return Speed(rate[0], rate[1], mean_e2e, sum(prompts) / len(prompts) if prompts else None)


def mean_length(dist: LengthDist) -> float:
    """The mean of a length distribution (normal and lognormal: their mean, clamping aside)."""
    if dist.kind is LengthKind.fixed:
        return float(dist.value or 1)
    if dist.kind is LengthKind.uniform:
        return (dist.lower + dist.upper) / 2
    return float(dist.mean or 1)


def _request_s(workload: WorkloadConfig, speed: Speed, trace: Sequence[TraceRequest] = ()) -> float:
    if speed.prefill_tok_s is None or speed.decode_tok_s is None:
        return speed.request_s
    prompt = mean_length(workload.input_tokens) if workload.input_tokens is not None else speed.prompt_tokens or 0
    output = mean_length(workload.output_tokens) if workload.output_tokens is not None else workload.max_tokens
    inputs = [r.input_tokens for r in trace if r.input_tokens is not None]
    outputs = [r.output_tokens for r in trace if r.output_tokens is not None]
    prompt = sum(inputs) / len(inputs) if inputs else prompt
    output = sum(outputs) / len(outputs) if outputs else output
    return prompt / speed.prefill_tok_s + output / speed.decode_tok_s


def plan_seconds(workload: WorkloadConfig, speed: Speed, trace: Sequence[TraceRequest] = ()) -> float:
    """Seconds the whole plan takes at ``speed`` (module doc): an upper bound where parallel requests gain.
    ``trace``: the replayed requests (``workload.trace``, its window, on the replay's clock)."""
    each = _request_s(workload, speed, trace) * workload.turns
    reach = reachable_concurrency(workload)
    total = 0.0
    for level in workload.concurrency:
        warm = workload.warmup_requests * each
        if trace:
            tail = min(level, len(trace)) * each
            total += warm + max(trace[-1].at_ns / 1e9 + tail, len(trace) * each)
        elif workload.duration_s is None:
            total += warm + workload.requests * each
        else:
            tail = min(level, reach) * each
            total += warm + max(workload.duration_s, workload.min_requests * each) + tail
    return total


def replay_floor_seconds(workload: WorkloadConfig, speed: Speed, trace: Sequence[TraceRequest]) -> float:
    """Seconds a replay takes when the engine keeps up with the trace: per level, its warm-up, the trace's span
    (the last request's offset, on the replay's clock) and one request. The least a replay can last."""
    each = _request_s(workload, speed, trace) * workload.turns
    span = trace[-1].at_ns / 1e9 if trace else 0.0
    return len(workload.concurrency) * (workload.warmup_requests * each + span + each)


@dataclass(frozen=True)
class NightEstimate:
    """How long a night will take, from the cells' last nights (view cell_durations)."""

    seconds: float | None  # the busiest host's measured cells, summed (hosts run in parallel); None: none measured
    known: int  # cells with a night of an ok run before
    unknown: int  # cells never measured (not in the estimate)

    def text(self) -> str:
        if self.seconds is None:
            return f"no estimate: none of the {self.unknown} cells was measured before"
        minutes = round(self.seconds / 60)
        when = f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{max(minutes, 1)} min"
        left = f"; {self.unknown} cell(s) never measured are not in it" if self.unknown else ""
        return f"about {when}, from the last night of {self.known} cell(s){left}"


def night_estimate(con: duckdb.DuckDBPyConnection | None, cells: Sequence[tuple[str, str]]) -> NightEstimate:
    """A night of ``cells`` ((host, cell label)): per host the sum of its cells' last durations (view
    cell_durations, the last night with an ok run), the night the longest host; ``con`` None: no history."""
    labels = sorted({label for _, label in cells})
    found: dict[str, float] = {}
    if con is not None and labels:
        rows = con.execute("SELECT * FROM last_cell_durations($cells)", {"cells": labels}).fetchall()
        found = {str(cell): float(seconds) for cell, seconds in rows if seconds is not None}
    per_host: dict[str, float] = defaultdict(float)
    for host, label in cells:
        if label in found:
            per_host[host] += found[label]
    known = sum(label in found for _, label in cells)
    return NightEstimate(max(per_host.values()) if per_host else None, known, len(cells) - known)
