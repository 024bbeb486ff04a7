"""keys: the hashes a run row stores to name what it measured (prompt_set_hash, config_hash), in a module of their
own so that a reader of the store (`tcobench plan`, which finds the replays of a trace by them) does not import the
workload plan's tokenizers, corpus and HTTP client with them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["replay_set_key", "sha256_json"]


def sha256_json(value: Any) -> str:
    """sha256 of the canonical JSON of ``value`` (sorted keys, no spaces): what run rows store as
    prompt_set_hash (of ``WorkloadPlan.prompt_set_key``) and config_hash."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def replay_set_key(trace_sha256: str, window_s: tuple[float, float] | None, seed: int) -> dict[str, Any]:
    """The prompt set of a replayed trace: the trace file's sha256, its window (None: the whole file) and the
    workload seed. Its ``sha256_json`` is the run row's prompt_set_hash, so `tcobench plan` finds the replays of
    a trace from the file alone (tasks/analysis/compare/plan.py)."""
    return {"trace_sha256": trace_sha256, "window": window_s, "seed": seed}
