"""Ollama's ``GET /api/ps`` (docs/api.md, "List Running Models").

Answer: ``{"models": [{"name", "model", "size", "size_vram", "digest", "details", "expires_at", ...}]}`` with
``size`` (bytes the loaded model takes) and ``size_vram`` (bytes of it in accelerator memory; less than ``size``
means part of it runs on the CPU). Ollama exposes no queue depth, running count or KV-cache use: its runs have
memory rows only.
"""

from __future__ import annotations

from typing import Any

import httpx

from tcobench.schemas import EngineMetricsKind, EngineQuantity
from tcobench.tasks.host.engine_metrics.base import Sample, Scraper, ScraperUnavailable, get_ok, register

__all__ = ["OllamaScraper", "ps_samples"]


def ps_samples(answer: Any) -> list[Sample]:
    """Per loaded model of an /api/ps answer: its size and the part of it in VRAM, bytes."""
    if not isinstance(answer, dict) or not isinstance(answer.get("models"), list):
        raise ValueError("/api/ps answered no 'models' list")
    samples = []
    for model in answer["models"]:
        labels = {"model": str(model.get("name") or model.get("model"))}
        if isinstance(model.get("size"), int):
            samples.append(Sample("/api/ps size", EngineQuantity.model_size_bytes, float(model["size"]), labels))
        if isinstance(model.get("size_vram"), int):
            samples.append(
                Sample("/api/ps size_vram", EngineQuantity.model_vram_bytes, float(model["size_vram"]), labels)
            )
    return samples


@register(EngineMetricsKind.ollama, source="ollama /api/ps")
class OllamaScraper(Scraper):
    def __init__(self, client: httpx.Client, base_url: str) -> None:
        self.client, self.url = client, f"{base_url}/api/ps"
        try:
            ps_samples(get_ok(client, self.url).json())
        except ValueError as exc:
            raise ScraperUnavailable(f"GET {self.url}: {exc} (not Ollama)") from exc

    def read(self) -> list[Sample]:
        response = self.client.get(self.url)
        response.raise_for_status()
        return ps_samples(response.json())
