"""Prometheus text exposition format (what llama.cpp's and vLLM's /metrics answer) -> samples.

Parsed with ``prometheus_client.parser`` (the reference client's own parser). A counter family ``x`` exposes its
value as the sample ``x_total`` (and, from prometheus_client, ``x_created``); only the sample names in ``names``
are kept, so histograms, ``_created`` and metrics tcobench does not chart are skipped.

Only the lines of the wanted families reach the parser: it is pure Python, and an engine's whole answer (vLLM's
histograms are most of it) parsed at the scrape rate kept the scraping thread busy for most of a level, in the
process that also sends the load, so scrapes landed late or not at all inside a short level
(docs/dev/performance.md#scrape-parse).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from prometheus_client.parser import text_string_to_metric_families

from tcobench.schemas import EngineQuantity
from tcobench.tasks.host.engine_metrics.base import Sample

__all__ = ["parse_prometheus"]

_NAME_ENDS = ("{", " ", "\t")


def _name(line: str) -> str:
    """The metric name a sample line starts with (up to its labels or its value)."""
    end = len(line)
    for stop in _NAME_ENDS:
        at = line.find(stop)
        if 0 <= at < end:
            end = at
    return line[:end]


def _wanted_lines(text: str, names: Mapping[str, EngineQuantity]) -> str:
    """The sample lines named in ``names``, with the HELP/TYPE lines of their families; '' if there is none."""
    families = set(names) | {n.removesuffix("_total") for n in names}
    kept, found = [], False
    for line in text.splitlines():
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE") and parts[2] in families:
                kept.append(line)
        elif _name(line) in names:
            kept.append(line)
            found = True
    return "\n".join(kept) + "\n" if found else ""


def parse_prometheus(text: str, names: Mapping[str, EngineQuantity]) -> list[Sample]:
    """The samples of ``text`` whose name is a key of ``names``; ValueError on text that is not the format.

    Text with none of the wanted samples is parsed whole, so an answer that is not the format still raises.
    """
    samples = []
    for family in text_string_to_metric_families(_wanted_lines(text, names) or text):
        for sample in family.samples:
            quantity = names.get(sample.name)
            if quantity is None or math.isnan(sample.value):
                continue
            samples.append(Sample(sample.name, quantity, float(sample.value), dict(sample.labels) or None))
    return samples
