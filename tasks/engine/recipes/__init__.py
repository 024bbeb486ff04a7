"""What each engine image needs to run as a container, one module per ``schemas.ContainerEngine``."""

from __future__ import annotations

from . import llama_cpp, ollama, sglang, vllm  # noqa: F401  (importing registers the recipes)
from .base import ContainerPlan, Recipe, recipe_for

__all__ = ["ContainerPlan", "Recipe", "recipe_for"]
