"""Prometheus text exposition format (what llama.cpp's and vLLM's /metrics answer) -> samples.

Parsed with ``prometheus_client.parser`` (the reference client's own parser). A counter family ``x`` exposes its
value as the sample ``x_total`` (and, from prometheus_client, ``x_created``); only the sample names in ``names``
are kept, so histograms, ``_created`` and metrics tcobench does not chart are skipped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from prometheus_client.parser import text_string_to_metric_families

from tcobench.schemas import EngineQuantity

from .base import Sample

__all__ = ["parse_prometheus"]


def parse_prometheus(text: str, names: Mapping[str, EngineQuantity]) -> list[Sample]:
    """The samples of ``text`` whose name is a key of ``names``; ValueError on text that is not the format."""
    samples = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            quantity = names.get(sample.name)
            if quantity is None or math.isnan(sample.value):
                continue
            samples.append(Sample(sample.name, quantity, float(sample.value), dict(sample.labels) or None))
    return samples
