"""vLLM's ``GET /metrics`` (Prometheus text).

Names from vLLM's source, vllm-project/vllm ``vllm/v1/metrics/loggers.py`` (class ``PrometheusStatLogger``) and its
docs (``docs/design/metrics.md``, ``docs/usage/metrics.md``): gauges ``vllm:num_requests_running`` ("Number of
requests in model execution batches"), ``vllm:num_requests_waiting`` ("Number of requests waiting to be
processed") and ``vllm:kv_cache_usage_perc`` ("KV-cache usage. 1 means 100 percent usage": a fraction, despite the
name; called ``vllm:gpu_cache_usage_perc`` before, and deprecated since, v0.10); counters ``vllm:num_preemptions``,
``vllm:prompt_tokens`` and ``vllm:generation_tokens``, exposed by prometheus_client as ``<name>_total``. Every
series carries the labels ``model_name`` and ``engine`` (the engine index under data parallelism).
"""

from __future__ import annotations

import httpx

from tcobench.schemas import EngineMetricsKind, EngineQuantity
from tcobench.tasks.host.engine_metrics.base import Sample, Scraper, ScraperUnavailable, get_ok, register
from tcobench.tasks.host.engine_metrics.prometheus import parse_prometheus

__all__ = ["METRICS", "VllmScraper", "vllm_samples"]

_LEGACY_KV = "vllm:gpu_cache_usage_perc"
METRICS: dict[str, EngineQuantity] = {
    "vllm:num_requests_running": EngineQuantity.requests_running,
    "vllm:num_requests_waiting": EngineQuantity.requests_waiting,
    "vllm:kv_cache_usage_perc": EngineQuantity.kv_cache_used_ratio,
    _LEGACY_KV: EngineQuantity.kv_cache_used_ratio,
    "vllm:num_preemptions_total": EngineQuantity.preemptions_total,
    "vllm:prompt_tokens_total": EngineQuantity.prompt_tokens_total,
    "vllm:generation_tokens_total": EngineQuantity.generation_tokens_total,
}


def vllm_samples(text: str) -> list[Sample]:
    """The charted samples of a vLLM /metrics answer; the deprecated KV gauge only where the current one is absent."""
    samples = parse_prometheus(text, METRICS)
    if any(s.metric == "vllm:kv_cache_usage_perc" for s in samples):
        samples = [s for s in samples if s.metric != _LEGACY_KV]
    return samples


@register(EngineMetricsKind.vllm, source="vllm /metrics")
class VllmScraper(Scraper):
    def __init__(self, client: httpx.Client, base_url: str) -> None:
        self.client, self.url = client, f"{base_url}/metrics"
        if "vllm:" not in get_ok(client, self.url).text:
            raise ScraperUnavailable(f"GET {self.url} has no vllm: metrics (not vLLM)")

    def read(self) -> list[Sample]:
        response = self.client.get(self.url)
        response.raise_for_status()
        return vllm_samples(response.text)
