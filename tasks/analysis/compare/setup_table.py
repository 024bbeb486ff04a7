"""setup_table: every difference between two sides' setups, one row per setting (compare and the report show it).

What is read, per run (view runs): engine name, version and image digest; each engine setting (engine_settings'
JSON keys, host-local paths left out: batch and parallel limits, KV-cache type, flash attention, context length,
speculative decoding, quantisation, as the engine recipe recorded them); model digest and file (model_name); GPU
driver, CUDA and ROCm versions; client placement; GPU power limit. A row lists each side's distinct values; only
settings whose values differ between the sides are returned. The model and workload-shape differences that refuse
a comparison are candidates.COMPARABLE's; this table lists everything, refused or not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from tcobench.tasks.store.rows import IDS, arrow_of, id_list, listed

__all__ = ["SETUP_COLUMNS", "SetupDifference", "setup_differences"]

# label -> column of view runs
SETUP_COLUMNS = {
    "engine": "engine_name",
    "engine version": "engine_version",
    "engine image": "image",
    "engine image digest": "image_digest",
    "context length (num_ctx)": "num_ctx",
    "model digest": "model_digest",
    "model (file or name)": "model_name",
    "driver version": "driver_version",
    "CUDA version": "cuda_version",
    "ROCm version": "rocm_version",
    "client placement": "client_placement",
    "GPU power limit (mW)": "gpu_power_limit_mw",
    "GPU": "gpu_name",
}
# each distinct combination once per side (macro run_setups: engine_settings and SETUP_COLUMNS' columns), both sides
# in one statement
_SQL = (
    f"SELECT 'a' AS _side, * FROM run_setups({IDS}) "
    f"UNION ALL BY NAME SELECT 'b' AS _side, * FROM run_setups({listed('b_ids')})"
)


@dataclass(frozen=True)
class SetupDifference:
    setting: str
    a: tuple[str, ...]  # side A's distinct values ("-": not recorded)
    b: tuple[str, ...]


def _text(value: Any) -> str:
    if value is None:
        return "-"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _settings(text: str | None) -> dict[str, str]:
    """engine_settings' keys as 'engine setting KEY' -> value text, host-local paths (KEY ending path/dir) out."""
    try:
        data = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {"engine settings": text or "-"}
    if not isinstance(data, dict):
        return {"engine settings": _text(data)}
    return {f"engine setting {k}": _text(v) for k, v in data.items() if not k.lower().endswith(("path", "_dir"))}


def _values(
    con: duckdb.DuckDBPyConnection, a_ids: Sequence[str], b_ids: Sequence[str]
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Each side's values by label."""
    found: dict[str, dict[str, set[str]]] = {"a": {}, "b": {}}
    for row in arrow_of(con, _SQL, {"ids": id_list(a_ids), "b_ids": id_list(b_ids)}).to_pylist():
        side = found[row["_side"]]
        for label, column in SETUP_COLUMNS.items():
            side.setdefault(label, set()).add(_text(row[column]))
        for label, value in _settings(row["engine_settings"]).items():
            side.setdefault(label, set()).add(value)
    return found["a"], found["b"]


def setup_differences(
    con: duckdb.DuckDBPyConnection, a_ids: Sequence[str], b_ids: Sequence[str]
) -> tuple[SetupDifference, ...]:
    """One SetupDifference per setting whose values are not the same on both sides (a setting one side lacks is
    '-' there), in SETUP_COLUMNS order, then the engine settings by key."""
    a, b = _values(con, a_ids, b_ids)
    labels = list(SETUP_COLUMNS) + sorted((set(a) | set(b)) - set(SETUP_COLUMNS))
    rows = []
    for label in labels:
        a_vals, b_vals = a.get(label, {"-"}), b.get(label, {"-"})
        if a_vals != b_vals or len(a_vals) > 1:
            rows.append(SetupDifference(label, tuple(sorted(a_vals)), tuple(sorted(b_vals))))
    return tuple(rows)
