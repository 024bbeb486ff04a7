"""Builders of valid records with overridable fields, shared by the unit tests (plain functions, no fixtures)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from tcobench.schemas import (
    HardwarePrice,
    OpsPrice,
    Phase,
    PriceTable,
    RequestRecord,
    RunRecord,
    RunStatus,
    SitePrice,
)

__all__ = ["T0_NS", "make_prices", "make_request", "make_run"]

T0_NS = 1_700_000_000_000_000_000  # 2023-11-14T22:13:20Z


def make_run(**overrides: Any) -> RunRecord:
    fields: dict[str, Any] = {
        "run_id": "run0",
        "batch_id": "batch0",
        "date": "2023-11-14",
        "host": "testhost",
        "started_ns": T0_NS,
        "finished_ns": T0_NS + 20_000_000_000,
        "measure_start_ns": T0_NS + 5_000_000_000,
        "measure_end_ns": T0_NS + 15_000_000_000,
        "status": RunStatus.ok,
        "error": None,
        "host_os": "Linux 6.1.0 (Debian 12)",
        "host_kernel": "6.1.0",
        "host_arch": "x86_64",
        "host_cpu": "Test CPU",
        "host_cpu_count": 2,
        "host_mem_bytes": 8 * 2**30,
        "python_version": "3.11.9",
        "engine_kind": "embedded",
        "engine_name": "llama.cpp",
        "engine_version": "b1234",
        "engine_url": "http://127.0.0.1:8080",
        "protocol": "openai",
        "api": "/v1/completions",
        "model_name": "test-model",
        "model_digest": None,
        "workload": "test-workload",
        "load_mode": "closed",
        "concurrency": 1,
        "rate_rps": None,
        "warmup_requests": 1,
        "measured_requests": 3,
        "max_tokens": 64,
        "num_ctx": 2048,
        "temperature": 0.0,
        "seed": 42,
        "ignore_eos": False,
        "prompt_set_hash": "0" * 64,
        "config_hash": "1" * 64,
        "hardware_key": "test-hw",
        "site_key": "test-site",
        "ops_key": "test-ops",
        "utilisation": 0.5,
        "tool_version": "0.1.0",
        "git_revision": None,
    }
    fields.update(overrides)
    return RunRecord.model_validate(fields)


def make_request(**overrides: Any) -> RequestRecord:
    fields: dict[str, Any] = {
        "run_id": "run0",
        "date": "2023-11-14",
        "host": "testhost",
        "phase": Phase.measure,
        "request_index": 0,
        "prompt_index": 0,
        "seed": 42,
        "start_ns": T0_NS + 5_000_000_000,
        "ttft_ns": 100_000_000,
        "e2e_ns": 1_100_000_000,
        "decode_ns": 1_000_000_000,
        "chunks": 2,
        "itl_ns": [10_000_000],
        "prompt_tokens": 10,
        "output_tokens": 11,
        "cached_tokens": None,
        "token_count_source": "usage",
        "finish_reason": "length",
        "server_load_ns": None,
        "server_prompt_eval_count": None,
        "server_prompt_eval_ns": None,
        "server_eval_count": None,
        "server_eval_ns": None,
        "server_total_ns": None,
        "counter_note": None,
        "http_status": 200,
        "error": None,
    }
    fields.update(overrides)
    return RequestRecord.model_validate(fields)


def make_prices(
    hardware: dict[str, Any] | None = None, site: dict[str, Any] | None = None, ops: dict[str, Any] | None = None
) -> PriceTable:
    """A one-row-per-section table keyed test-hw / test-site / test-ops, fields overridable."""
    sourced = {"source": "test fixture", "as_of": dt.date(2026, 1, 1)}
    hw = {
        "description": "test platform",
        "vendor": "nvidia",
        "accelerators": 1,
        "purchase_usd": 20_000.0,
        "server_share_usd": 4_000.0,
        "lifetime_months": 48,
        "load_watts": 1_000.0,
        "idle_watts": 200.0,
        "adaptation_days": 6.0,
        **sourced,
        **(hardware or {}),
    }
    st = {"description": "test site", "kwh_usd": 0.10, "pue": 1.5, **sourced, **(site or {})}
    op = {
        "description": "test ops",
        "hours_per_host_month": 2.0,
        "hourly_usd": 100.0,
        "daily_usd": 800.0,
        **sourced,
        **(ops or {}),
    }
    return PriceTable(
        hardware={"test-hw": HardwarePrice(**hw)},
        site={"test-site": SitePrice(**st)},
        ops={"test-ops": OpsPrice(**op)},
    )
