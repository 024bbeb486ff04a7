"""The identity of the measured platform, told truthfully: what was detected where the engine runs, what was only
declared (the nightly inventory), and where the two disagree.

``host_identity`` (detected where the engine runs, or says it describes the client), ``declared_columns``
(the nightly inventory's) and ``reconcile`` (the gpu_* columns and every declared/detected disagreement).

Design notes: docs/dev/architecture/hosts-and-engines.md#tasks-identity.
"""

from __future__ import annotations

import re
from typing import Any

from tcobench.schemas import BenchmarkConfig, GpuSource, GpuVendor, HostFactsSource, RunRecord
from tcobench.tasks.engine import RunningEngine, engine_runs_elsewhere
from tcobench.tasks.host.hostinfo import collect_host_facts

__all__ = ["declared_columns", "host_identity", "reconcile"]


def host_identity(config: BenchmarkConfig, engine: RunningEngine | None = None) -> dict[str, Any]:
    """The host_* columns of a run row, with where they were read (host_facts_source): the engine's own machine's
    facts when its launcher read them there (``engine.host_facts``: a remote Docker daemon), else this machine's."""
    here = collect_host_facts()
    if engine is not None and engine.host_facts:
        return {**here, **engine.host_facts}
    source = HostFactsSource.client if engine_runs_elsewhere(config) else HostFactsSource.engine_host
    return {**here, "host_facts_source": source.value}


def declared_columns(config: BenchmarkConfig) -> dict[str, Any]:
    """The declared_* columns (null without a declaration)."""
    d = config.declared
    if d is None:
        return {"declared_vendor": None, "declared_gpu_model": None, "declared_gpu_count": None}
    return {"declared_vendor": d.vendor, "declared_gpu_model": d.gpu_model, "declared_gpu_count": d.gpu_count}


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _disagreements(run: RunRecord) -> list[str]:
    """How the detected gpu_* columns differ from the declared ones (both must be known to differ)."""
    found: list[str] = []
    if run.declared_vendor is not None and run.declared_vendor != run.gpu_vendor:
        found.append(f"vendor declared {run.declared_vendor.value}, detected {run.gpu_vendor}")
    model = run.declared_gpu_model
    if model and run.gpu_name and _squash(model) not in _squash(run.gpu_name):
        found.append(f"GPU model declared {model!r}, detected {run.gpu_name!r}")
    count = run.declared_gpu_count
    if count and run.gpu_count is not None and run.gpu_count != count:
        found.append(f"GPU count declared {count}, detected {run.gpu_count}")
    return found


def reconcile(run: RunRecord) -> RunRecord:
    """The run row with gpu_source, the declared hardware where nothing was detected, and identity_warning."""
    if run.gpu_vendor is not None:  # a GPU sampler named it, where the engine runs
        found = _disagreements(run)
        warning = "declared and detected hardware differ: " + "; ".join(found) if found else None
        return run.model_copy(update={"gpu_source": GpuSource.detected.value, "identity_warning": warning})
    if run.declared_vendor in (None, GpuVendor.cpu):
        return run.model_copy(update={"gpu_source": None, "identity_warning": None})
    declared = {
        "gpu_vendor": run.declared_vendor,
        "gpu_name": run.declared_gpu_model,
        "gpu_count": run.declared_gpu_count,
    }
    return run.model_copy(update={**declared, "gpu_source": GpuSource.declared.value, "identity_warning": None})
