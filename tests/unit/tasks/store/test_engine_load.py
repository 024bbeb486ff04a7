"""Views engine_samples and engine_load on hand-made engine_metrics rows, values worked by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tcobench.schemas import EngineMetricRecord, EngineQuantity
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect
from tcobench.tasks.store.store import write_results
from tests.unit.factories import T0_NS, make_request, make_run

S = 1_000_000_000  # make_run's measurement window: T0 + 5 s .. T0 + 15 s


def row(run_id: str, t_s: int, quantity: EngineQuantity, value: float, **labels: str) -> EngineMetricRecord:
    return EngineMetricRecord(
        run_id=run_id,
        date="2023-11-14",
        host="testhost",
        ts_ns=T0_NS + t_s * S,
        source="test /metrics",
        metric=f"engine:{quantity.value}",
        labels=json.dumps(labels) if labels else None,
        quantity=quantity,
        value=value,
    )


def load_rows(tmp_path: Path, runs: dict[str, list[EngineMetricRecord]]) -> dict[str, dict[str, Any]]:
    for run_id, samples in runs.items():
        write_results(tmp_path, make_run(run_id=run_id), [make_request(run_id=run_id)], [], samples)
    con = connect(tmp_path, load_prices(None), needs={"engine_load"})
    rows = con.sql("SELECT * FROM engine_load ORDER BY run_id").to_arrow_table().to_pylist()
    con.close()
    return {r["run_id"]: r for r in rows}


def llama_like() -> list[EngineMetricRecord]:
    Q = EngineQuantity
    out = []
    # scrapes at 4 s (before the window), 6, 10, 14 (inside) and 16 s (after)
    running = {4: 1, 6: 2, 10: 4, 14: 4, 16: 1}
    waiting = {4: 0, 6: 0, 10: 1, 14: 2, 16: 0}
    held = {4: (0, 0), 6: (10, 0), 10: (50, 30), 14: (100, 60), 16: (0, 0)}  # tokens in slot 0 and slot 1
    for t in running:
        out += [row("llama", t, Q.requests_running, running[t]), row("llama", t, Q.requests_waiting, waiting[t])]
        for slot in (0, 1):
            out.append(row("llama", t, Q.kv_cache_tokens, held[t][slot], slot=str(slot)))
            out.append(row("llama", t, Q.kv_cache_capacity_tokens, 100, slot=str(slot)))
    return out


def vllm_like() -> list[EngineMetricRecord]:
    Q = EngineQuantity
    out = []
    preempted = {3: 5, 4: 5, 6: 6, 10: 8, 14: 9, 16: 11, 17: 20}
    for t, count in preempted.items():
        for engine, (kv, running) in {"0": (0.9, 3), "1": (0.7, 5)}.items():
            out.append(row("vllm", t, Q.kv_cache_used_ratio, kv, engine=engine))
            out.append(row("vllm", t, Q.requests_running, running, engine=engine))
            out.append(row("vllm", t, Q.preemptions_total, count if engine == "0" else 0, engine=engine))
    return out


def test_queue_and_kv_from_llama_cpp_slots(tmp_path: Path) -> None:
    r = load_rows(tmp_path, {"llama": llama_like()})["llama"]
    assert r["samples"] == 3  # 6, 10 and 14 s
    assert abs(r["running_mean"] - 10 / 3) < 1e-9 and r["running_max"] == 4
    assert r["waiting_mean"] == 1.0 and r["waiting_max"] == 2  # (0 + 1 + 2) / 3
    # KV: (10 + 0) / 200 = 0.05, (50 + 30) / 200 = 0.4, (100 + 60) / 200 = 0.8 -> mean 1.25 / 3
    assert abs(r["kv_used_mean"] - 1.25 / 3) < 1e-9 and abs(r["kv_used_max"] - 0.8) < 1e-9
    assert r["preemptions"] is None and r["vram_share_min"] is None  # llama.cpp reports neither


def test_engine_ratio_averaged_over_engines_and_counter_bracketed(tmp_path: Path) -> None:
    r = load_rows(tmp_path, {"vllm": vllm_like()})["vllm"]
    assert abs(r["kv_used_mean"] - 0.8) < 1e-9  # mean of 0.9 and 0.7 at every scrape
    assert r["running_mean"] == 8.0  # 3 + 5 summed over engines
    # bracketing scrapes: the last at or before 5 s (4 s: 5) and the first at or after 15 s (16 s: 11) -> 6
    assert r["preemptions"] == 6.0
    assert r["waiting_mean"] is None


def test_model_vram_share_and_runs_without_samples(tmp_path: Path) -> None:
    Q = EngineQuantity
    ps = [
        row("ollama", t, q, v, model="m")
        for t in (4, 8, 12)
        for q, v in ((Q.model_size_bytes, 4e9), (Q.model_vram_bytes, 3e9 if t == 8 else 4e9))
    ]
    rows = load_rows(tmp_path, {"ollama": ps, "none": []})
    assert rows["ollama"]["vram_share_min"] == 0.75 and rows["ollama"]["samples"] == 2
    assert rows["ollama"]["running_mean"] is None
    assert "none" not in rows  # no engine_metrics rows, no engine_load row
