"""How big an engine is started: its parallel slots and its context, from the plan, capped by what the machine holds.

- slots: the highest concurrency the plan can actually reach (a level above the run's request count never has more
  requests in flight than that count), capped by the memory the context of one slot needs;
- context per slot: the longest request of the plan (prompt, every turn, and the largest output) where the plan
  knows it (synthetic prompts), else ``workload.num_ctx``;
- memory: the KV cache's bytes per token (from the model's GGUF metadata, f16 keys and values) times the context
  must stay within ``MEMORY_SHARE`` of the memory available now, less the model file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcobench.schemas import WorkloadConfig

__all__ = ["MEMORY_SHARE", "Sizing", "available_memory", "kv_bytes_per_token", "plan_sizing", "reachable_concurrency"]

MEMORY_SHARE = 0.5  # of the available memory, for the KV cache: the model, the client and the rest need the other


@dataclass(frozen=True)
class Sizing:
    """Slots and context of an engine, and why they are what they are."""

    slots: int
    per_slot: int  # tokens of context per slot
    asked_slots: int  # the concurrency the plan reaches
    kv_bytes: int | None = None  # KV cache bytes per token, when the model says
    budget_bytes: int | None = None  # memory the KV cache may take

    @property
    def context(self) -> int:
        return self.slots * self.per_slot

    def text(self) -> str:
        """One line for the user."""
        line = f"engine sizing: {self.slots} slot(s) x {self.per_slot:,} tokens = {self.context:,}-token context"
        if self.kv_bytes is not None:
            line += f" (KV cache about {self.kv_bytes * self.context / 2**30:.2f} GiB)"
        if self.slots < self.asked_slots:
            line += (
                f"; capped from {self.asked_slots} slots by memory ({(self.budget_bytes or 0) / 2**30:.1f} GiB "
                f"for the KV cache): levels above {self.slots} queue in the engine"
            )
        return line


def reachable_concurrency(workload: WorkloadConfig) -> int:
    """The most requests the plan can have in flight: the highest level, at most the request count of a counted
    run (warm-up runs at the same level)."""
    top = max(workload.concurrency)
    if workload.duration_s is None:
        top = min(top, max(workload.requests, workload.warmup_requests))
    return max(1, top)


def _per_slot(workload: WorkloadConfig) -> int:
    if workload.input_tokens is not None:
        return workload.longest_input + workload.longest_output
    return workload.num_ctx


def available_memory() -> int | None:
    """MemAvailable of /proc/meminfo, bytes; None where it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text("ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _first(value: Any) -> int | None:
    if isinstance(value, list):  # per-layer counts: the largest
        value = max((v for v in value if isinstance(v, int)), default=None)
    return value if isinstance(value, int) and value > 0 else None


def kv_bytes_per_token(meta: dict[str, Any]) -> int | None:
    """f16 K and V bytes per token over every layer, from GGUF metadata; None when a count is missing."""
    arch = meta.get("general.architecture")
    if not isinstance(arch, str):
        return None
    layers = _first(meta.get(f"{arch}.block_count"))
    heads = _first(meta.get(f"{arch}.attention.head_count"))
    kv_heads = _first(meta.get(f"{arch}.attention.head_count_kv")) or heads
    width = _first(meta.get(f"{arch}.embedding_length"))
    head_dim = width // heads if width and heads else None
    k_len = _first(meta.get(f"{arch}.attention.key_length")) or head_dim
    v_len = _first(meta.get(f"{arch}.attention.value_length")) or head_dim
    if not (layers and kv_heads and k_len and v_len):
        return None
    return layers * kv_heads * (k_len + v_len) * 2


def plan_sizing(
    workload: WorkloadConfig, kv_bytes: int | None = None, memory: int | None = None, model_bytes: int = 0
) -> Sizing:
    """The slots and context for ``workload`` (see the module doc); without ``kv_bytes`` or ``memory`` nothing caps."""
    asked, per_slot = reachable_concurrency(workload), _per_slot(workload)
    if kv_bytes is None or memory is None:
        return Sizing(asked, per_slot, asked, kv_bytes)
    budget = max(0, int((memory - model_bytes) * MEMORY_SHARE))
    fits = budget // (kv_bytes * per_slot)
    return Sizing(max(1, min(asked, fits)), per_slot, asked, kv_bytes, budget)
