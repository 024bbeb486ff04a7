"""The tests' door to the one mock server (bench/mock_engine.py): bench/ is not a package, so it goes on sys.path
here, once, and the fakes (openai_stub, ollama_replay, faults/fakes, hook_server) import it from this module."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from mock_engine import Fault, Options, Reply, Request, Running, mock_engine, start  # noqa: E402

__all__ = ["Fault", "Options", "Reply", "Request", "Running", "mock_engine", "start"]
