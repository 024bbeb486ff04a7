"""Wire-protocol adapters, one module per ``schemas.Protocol`` value."""

from __future__ import annotations

from tcobench.tasks.load.protocols import ollama, openai  # noqa: F401  (importing registers the adapters)
from tcobench.tasks.load.protocols.base import Adapter, EngineInfo, LineEvent, ServerCounters, adapter_for

__all__ = ["Adapter", "EngineInfo", "LineEvent", "ServerCounters", "adapter_for"]
