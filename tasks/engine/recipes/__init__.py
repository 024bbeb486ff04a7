"""What each engine image needs to run as a container, one module per ``schemas.ContainerEngine``."""

from __future__ import annotations

from tcobench.tasks.engine.recipes import llama_cpp, ollama, sglang, vllm  # noqa: F401  (importing registers the recipes)
from tcobench.tasks.engine.recipes.base import ContainerPlan, Recipe, recipe_for

__all__ = ["ContainerPlan", "Recipe", "recipe_for"]
