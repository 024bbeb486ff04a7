"""Trace file formats, one module per format, each registered under its ``TraceFormat`` (``LAYOUTS``).

Importing the package registers every format; ``tasks.workload.read_trace`` streams a file through one of them.
"""

from __future__ import annotations

from tcobench.tasks.workload.traces import azure, jsonl, mooncake
from tcobench.tasks.workload.traces.base import LAYOUTS, Parsed, TraceLayout

__all__ = ["LAYOUTS", "Parsed", "TraceLayout", "azure", "jsonl", "mooncake"]
