"""Shapes of synthetic models: random weights, real architecture dimensions (no download needed)."""

from __future__ import annotations

from pydantic import Field, model_validator

from tcobench.schemas.base import StrictModel

__all__ = ["SHAPES", "ModelShape"]


class ModelShape(StrictModel):
    """Dimensions of a Llama-architecture decoder (what decode speed depends on, not the weight values)."""

    name: str = Field(min_length=1, description="Label, e.g. llama-8b.")
    n_embd: int = Field(gt=0, description="Hidden size.")
    n_layer: int = Field(gt=0, description="Transformer blocks.")
    n_head: int = Field(gt=0, description="Attention heads.")
    n_head_kv: int = Field(gt=0, description="Key/value heads (grouped-query attention).")
    n_ff: int = Field(gt=0, description="Feed-forward hidden size.")
    context_length: int = Field(default=8192, gt=0, description="Trained context length written to the file.")

    @model_validator(mode="after")
    def _heads_divide(self) -> ModelShape:
        if self.n_embd % self.n_head or self.n_head % self.n_head_kv:
            raise ValueError("n_embd must be divisible by n_head, and n_head by n_head_kv")
        return self


SHAPES: dict[str, ModelShape] = {
    # Public configs: Llama-3.2-1B/3B, Llama-3.1-8B/70B (hidden, layers, heads, kv heads, ffn).
    "llama-1b": ModelShape(name="llama-1b", n_embd=2048, n_layer=16, n_head=32, n_head_kv=8, n_ff=8192),
    "llama-3b": ModelShape(name="llama-3b", n_embd=3072, n_layer=28, n_head=24, n_head_kv=8, n_ff=8192),
    "llama-8b": ModelShape(name="llama-8b", n_embd=4096, n_layer=32, n_head=32, n_head_kv=8, n_ff=14336),
    "llama-70b": ModelShape(name="llama-70b", n_embd=8192, n_layer=80, n_head=64, n_head_kv=8, n_ff=28672),
    # Tiny, for tests and smoke runs on a laptop.
    "tiny": ModelShape(name="tiny", n_embd=256, n_layer=2, n_head=4, n_head_kv=2, n_ff=512, context_length=2048),
}
