"""Run profiles and the accuracy workload: defaults a workload table gets before it is validated.

``profile = "claim"`` (``--profile claim`` on `run` and `nightly`) sets what a claim needs (docs/claim-grade.md),
as defaults only: a field the file, preset or command line sets keeps its value. A value below the profile's
minimum is warned about on start and the run is stored with ``claim_grade = false`` and the reason
(``claim_shortfalls``); nothing is silently raised.

``accuracy = N`` makes the workload the N bundled exact-answer questions of tasks/workload/accuracy.py (seed: the
workload's seed), named ``accuracy-N-seedS``, at temperature 0, one request per question.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tcobench.errors import ConfigError
from tcobench.schemas import WorkloadConfig
from tcobench.tasks.workload.accuracy import accuracy_name, questions

__all__ = [
    "CLAIM_MIN_DURATION_S",
    "CLAIM_MIN_REQUESTS",
    "CLAIM_WARMUP_PER_STREAM",
    "PROFILES",
    "apply_profile",
    "claim_shortfalls",
]

CLAIM_MIN_DURATION_S = 600.0  # MLPerf Inference: every scenario runs at least 600 s
CLAIM_MIN_REQUESTS = 1000  # measured requests per level (docs/claim-grade.md: the p90 sample rule)
CLAIM_WARMUP_PER_STREAM = 2  # warm-up requests per stream: every slot has served and its caches are warm
PROFILES = ("default", "claim")
_ACCURACY_MAX_TOKENS = 8  # an exact answer is one short number


def _claim_defaults(workload: dict[str, Any]) -> dict[str, Any]:
    levels = workload.get("concurrency") or [1]
    top = max(int(c) for c in (levels if isinstance(levels, list | tuple) else [levels]))
    defaults = {
        "duration_s": CLAIM_MIN_DURATION_S,
        "min_requests": CLAIM_MIN_REQUESTS,
        "warmup_requests": CLAIM_WARMUP_PER_STREAM * top,
    }
    return {**defaults, **workload}


def _accuracy(workload: dict[str, Any], where: str) -> dict[str, Any]:
    n, seed = workload["accuracy"], workload.get("seed", WorkloadConfig.model_fields["seed"].default)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ConfigError(f"{where}: workload.accuracy: {n!r} is not a positive number of questions")
    if not isinstance(seed, int):
        raise ConfigError(f"{where}: workload.seed: {seed!r} is not an integer")
    asked = questions(n, seed)
    made = {
        "prompts": [q.prompt for q in asked],
        "name": accuracy_name(n, seed),
        "requests": n,
        "temperature": 0.0,
        "max_tokens": _ACCURACY_MAX_TOKENS,
    }
    for key in ("input_tokens", "dataset", "output_tokens"):
        if workload.get(key) is not None:
            raise ConfigError(f"{where}: workload.accuracy asks the bundled questions; drop workload.{key}")
    return {**workload, **{k: v for k, v in made.items() if k in ("prompts", "name") or k not in workload}}


def apply_profile(workload: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``workload`` with its profile's defaults and, with ``accuracy``, the bundled questions; a ConfigError names
    an unknown profile and lists the valid ones."""
    data = dict(workload)
    name = data.get("profile")
    if name is not None and name not in PROFILES:
        raise ConfigError(f"{where}: workload.profile: unknown profile {name!r} (profiles: {', '.join(PROFILES)})")
    if name == "claim":
        data = _claim_defaults(data)
    if data.get("accuracy") is not None:
        data = _accuracy(data, where)
    return data


def claim_shortfalls(workload: WorkloadConfig, concurrency: int) -> list[str]:
    """Why a run of ``workload`` at ``concurrency`` falls short of the claim profile (empty: it does not, or the
    profile is not claim)."""
    if workload.profile != "claim":
        return []
    found = []
    if workload.duration_s is None or workload.duration_s < CLAIM_MIN_DURATION_S:
        have = "none" if workload.duration_s is None else f"{workload.duration_s:g} s"
        found.append(f"duration {have} < {CLAIM_MIN_DURATION_S:g} s")
    requests = workload.min_requests if workload.duration_s is not None else workload.requests
    if requests < CLAIM_MIN_REQUESTS:
        found.append(f"measured requests {requests} < {CLAIM_MIN_REQUESTS}")
    if workload.warmup_requests < CLAIM_WARMUP_PER_STREAM * concurrency:
        found.append(f"warm-up {workload.warmup_requests} < {CLAIM_WARMUP_PER_STREAM} x concurrency {concurrency}")
    return found
