"""The engine's own view of its load: samples scraped from its metrics endpoint while a run is measured.

One row per (scrape instant, metric, label set), in the engine's own units and names; ``quantity`` says which
tcobench quantity the metric is, so views can read every engine the same way. Which engine names map to which
quantity is written once, in ``tasks.host.engine_metrics`` (one module per engine).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from tcobench.schemas.base import StrictModel
from tcobench.schemas.records import DATE_PATTERN, HOST_PATTERN

__all__ = ["EngineMetricRecord", "EngineMetricsKind", "EngineQuantity"]


class EngineMetricsKind(StrEnum):
    """Where engine-side metrics come from (one scraper module per engine); ``auto`` probes, ``none`` skips."""

    auto = "auto"
    llama_cpp = "llama.cpp"  # llama-server --metrics: GET /metrics (Prometheus text) and GET /slots (JSON)
    vllm = "vllm"  # vLLM: GET /metrics (Prometheus text)
    ollama = "ollama"  # Ollama: GET /api/ps (JSON)
    none = "none"


class EngineQuantity(StrEnum):
    """What a scraped metric measures, whatever the engine calls it. Units in the comments."""

    requests_running = "requests_running"  # requests the engine is decoding/prefilling now (count)
    requests_waiting = "requests_waiting"  # requests queued inside the engine, not yet scheduled (count)
    kv_cache_used_ratio = "kv_cache_used_ratio"  # fraction of KV-cache in use, 0..1, as the engine reports it
    kv_cache_tokens = "kv_cache_tokens"  # tokens held in a sequence's KV-cache (count; per llama.cpp slot)
    kv_cache_capacity_tokens = "kv_cache_capacity_tokens"  # KV-cache capacity (tokens; per llama.cpp slot)
    preemptions_total = "preemptions_total"  # requests preempted since the engine started (counter)
    prompt_tokens_total = "prompt_tokens_total"  # prompt tokens processed since start (counter)
    generation_tokens_total = "generation_tokens_total"  # tokens generated since start (counter)
    model_size_bytes = "model_size_bytes"  # a loaded model's size (bytes; Ollama /api/ps)
    model_vram_bytes = "model_vram_bytes"  # the part of it in accelerator memory (bytes; Ollama /api/ps)


class EngineMetricRecord(StrictModel):
    """One value the engine reported about itself at one instant (table engine_metrics)."""

    run_id: str = Field(description="Run this sample belongs to.")
    date: str = Field(pattern=DATE_PATTERN, description="UTC date the run started, YYYY-MM-DD (partition key).")
    host: str = Field(pattern=HOST_PATTERN, description="Measured host (partition key).")
    ts_ns: int = Field(description="Scrape time (request sent), ns since the Unix epoch (UTC).")
    source: str = Field(description="Engine and endpoint scraped, e.g. 'llama.cpp /metrics', 'ollama /api/ps'.")
    metric: str = Field(description="The engine's own name for the value, e.g. 'vllm:num_requests_waiting'.")
    labels: str | None = Field(
        description="The sample's labels as JSON (Prometheus labels, {'slot': id}, {'model': name}); null if none."
    )
    quantity: EngineQuantity = Field(description="What the value measures (tcobench's name, units above).")
    value: float = Field(description="The value as the engine reported it, in the engine's units.")
