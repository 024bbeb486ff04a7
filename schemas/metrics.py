"""metrics: the metric catalogue, one declaration per column of the views that tasks/store/rows.py types.

Each entry names a column once: its unit, whether higher or lower is better, the views whose rows carry it (the
view that computes it first), its Python type as tasks/store/rows.py declares it, and its formula in one line (the
view's header comment has it in full). tests/unit/test_metric_catalogue.py checks rows.py's TypedDicts, the
views' columns and header comments, docs/formulas.md's catalogue tables and the CLI's and report's table headers
against it; ``python -m tcobench.schemas.metrics`` prints the docs tables.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["HEADER_OF", "HIGHER", "LOWER", "METRICS", "Metric", "catalogue_markdown", "metric", "view_columns"]

Better = Literal["higher", "lower"]
HIGHER: Better = "higher"
LOWER: Better = "lower"

# a view whose header comment defers to another view's header for its formulas (tco selects tco_scenarios' rows)
HEADER_OF: Mapping[str, str] = {"tco": "tco_scenarios", "nightly_trend": "trend_runs"}


class Metric(BaseModel):
    """One column of the views, declared once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="the column's name, the same in every view that carries it")
    views: tuple[str, ...] = Field(min_length=1, description="the views whose rows carry it, the computing one first")
    python_type: str = Field(description="its Python type as tasks/store/rows.py declares it, e.g. 'float | None'")
    unit: str = Field(description="its unit ('' for a name, an id, a flag or a label)")
    better: Better | None = Field(description="whether higher or lower is better (None: neither)")
    formula: str = Field(description="how it is computed, in one line (the view's header has it in full)")
    label: str | None = Field(default=None, description="how the CLI's and the report's tables name it")
    symbol: str | None = Field(default=None, description="its unit as those tables print it, e.g. 'ms'")
    type_in: tuple[tuple[str, str], ...] = Field(default=(), description="(view, Python type) where it differs")

    def type_of(self, view: str) -> str:
        """The column's Python type in ``view``."""
        return dict(self.type_in).get(view, self.python_type)


def _metric(
    name: str,
    views: tuple[str, ...],
    python_type: str,
    unit: str,
    better: Better | None,
    formula: str,
    **more: object,
) -> Metric:
    return Metric.model_validate(
        {
            "name": name,
            "views": views,
            "python_type": python_type,
            "unit": unit,
            "better": better,
            "formula": formula,
            **more,
        }
    )


METRICS: tuple[Metric, ...] = (
    _metric(
        "run_id",
        ("run_summary", "tco", "tco_sources", "record_card", "nightly_trend"),
        "str",
        "",
        None,
        "runs.run_id: the run's id",
    ),
    _metric(
        "batch_id",
        ("run_summary", "tco", "record_card", "nightly_trend"),
        "str",
        "",
        None,
        "runs.batch_id: the nightly batch (one tcobench nightly or run invocation)",
    ),
    _metric(
        "host",
        ("run_summary", "tco", "record_card", "nightly_trend", "cost_at_latency_target"),
        "str",
        "",
        None,
        "runs.host: the host the run measured",
    ),
    _metric(
        "date",
        ("run_summary", "tco", "record_card", "nightly_trend"),
        "str",
        "",
        None,
        "runs.date: the UTC date the run started",
    ),
    _metric(
        "started",
        ("run_summary", "tco", "record_card", "nightly_trend"),
        "dt.datetime",
        "",
        None,
        "make_timestamp(runs.started_ns // 1000), UTC",
        label="started (UTC)",
    ),
    _metric(
        "engine_name",
        ("run_summary", "tco", "cost_at_latency_target"),
        "str",
        "",
        None,
        "runs.engine_name: the serving engine",
    ),
    _metric(
        "engine_version",
        ("run_summary", "tco", "record_card", "nightly_trend"),
        "str",
        "",
        None,
        "runs.engine_version: the engine's version",
    ),
    _metric(
        "model_name",
        ("run_summary", "tco", "record_card", "nightly_trend", "cost_at_latency_target"),
        "str",
        "",
        None,
        "runs.model_name: the model served",
    ),
    _metric(
        "workload",
        ("run_summary", "tco", "nightly_trend", "cost_at_latency_target"),
        "str",
        "",
        None,
        "runs.workload: the workload's name",
    ),
    _metric(
        "load_mode", ("run_summary", "tco"), "str", "", None, "runs.load_mode: closed loop or open (Poisson) arrivals"
    ),
    _metric(
        "concurrency",
        ("run_summary", "tco", "record_card", "nightly_trend", "cost_at_latency_target"),
        "int",
        "",
        None,
        "runs.concurrency: requests in flight the run asked for",
        type_in=(("cost_at_latency_target", "int | None"),),
    ),
    _metric(
        "status",
        ("run_summary", "tco", "nightly_trend"),
        "str",
        "",
        None,
        "runs.status: ok, partial, failed or interrupted",
    ),
    _metric(
        "concurrency_reached",
        ("run_summary",),
        "int | None",
        "requests",
        None,
        "runs.concurrency_reached: the most requests in flight at once",
    ),
    _metric("n", ("run_summary",), "int", "requests", None, "measured requests"),
    _metric("errors", ("run_summary",), "int", "requests", LOWER, "measured requests that are not ok"),
    _metric("ok", ("run_summary",), "int", "requests", HIGHER, "ok measured requests"),
    _metric(
        "ttft_p50_ms",
        ("run_summary", "nightly_trend"),
        "float | None",
        "ms",
        LOWER,
        "quantile_cont(ttft_ns, 0.50) / 1e6 over ok requests",
        label="TTFT p50",
        symbol="ms",
    ),
    _metric(
        "ttft_p90_ms",
        ("run_summary", "cost_at_latency_target"),
        "float | None",
        "ms",
        LOWER,
        "quantile_cont(ttft_ns, 0.90) / 1e6 over ok requests",
        label="TTFT p90",
        symbol="ms",
    ),
    _metric(
        "ttft_p99_ms",
        ("run_summary",),
        "float | None",
        "ms",
        LOWER,
        "quantile_cont(ttft_ns, 0.99) / 1e6 over ok requests",
        label="TTFT p99",
        symbol="ms",
    ),
    _metric(
        "itl_p50_ms",
        ("run_summary",),
        "float | None",
        "ms",
        LOWER,
        "quantile_cont(gap, 0.50) / 1e6 over every gap of every ok request",
        label="ITL p50",
        symbol="ms",
    ),
    _metric(
        "itl_p90_ms",
        ("run_summary",),
        "float | None",
        "ms",
        LOWER,
        "quantile_cont(gap, 0.90) / 1e6 over every gap of every ok request",
        label="ITL p90",
        symbol="ms",
    ),
    _metric(
        "itl_p99_ms",
        ("run_summary",),
        "float | None",
        "ms",
        LOWER,
        "quantile_cont(gap, 0.99) / 1e6 over every gap of every ok request",
        label="ITL p99",
        symbol="ms",
    ),
    _metric(
        "e2e_p50_ms",
        ("run_summary",),
        "float | None",
        "ms",
        LOWER,
        "quantile_cont(e2e_ns, 0.50) / 1e6 over ok requests",
        label="e2e p50",
        symbol="ms",
    ),
    _metric(
        "e2e_p90_ms",
        ("run_summary",),
        "float | None",
        "ms",
        LOWER,
        "quantile_cont(e2e_ns, 0.90) / 1e6 over ok requests",
        label="e2e p90",
        symbol="ms",
    ),
    _metric(
        "e2e_p99_ms",
        ("run_summary",),
        "float | None",
        "ms",
        LOWER,
        "quantile_cont(e2e_ns, 0.99) / 1e6 over ok requests",
        label="e2e p99",
        symbol="ms",
    ),
    _metric(
        "tpot_mean_ms",
        ("run_summary",),
        "float | None",
        "ms per output token",
        LOWER,
        "avg(tpot_ns) / 1e6 over ok requests",
        label="TPOT mean",
        symbol="ms",
    ),
    _metric(
        "req_decode_tok_s_mean",
        ("run_summary",),
        "float | None",
        "tokens/s",
        HIGHER,
        "avg(decode_tok_s) over ok requests (client clock)",
        label="decode tok/s per request, mean",
        symbol="tok/s",
    ),
    _metric(
        "req_decode_tok_s_p50",
        ("run_summary", "nightly_trend"),
        "float | None",
        "tokens/s",
        HIGHER,
        "quantile_cont(decode_tok_s, 0.5) over ok requests (client clock)",
        label="decode tok/s per request",
        symbol="tok/s",
    ),
    _metric(
        "server_decode_tok_s_mean",
        ("run_summary",),
        "float | None",
        "tokens/s",
        HIGHER,
        "avg(server_decode_tok_s) over ok requests (engine clock)",
        label="engine-reported decode tok/s, mean",
        symbol="tok/s",
    ),
    _metric(
        "server_decode_tok_s_p50",
        ("run_summary",),
        "float | None",
        "tokens/s",
        HIGHER,
        "quantile_cont(server_decode_tok_s, 0.5) over ok requests (engine clock)",
    ),
    _metric(
        "prompt_tokens",
        ("run_summary",),
        "int | None",
        "tokens",
        None,
        "sum(prompt_tokens) over ok requests (NULL if never counted)",
    ),
    _metric(
        "output_tokens",
        ("run_summary",),
        "int | None",
        "tokens",
        None,
        "sum(output_tokens) over ok requests (NULL if never counted)",
    ),
    _metric("measure_s", ("run_summary",), "float | None", "s", None, "(measure_end_ns - measure_start_ns) / 1e9"),
    _metric(
        "input_tokens_spec",
        ("run_summary",),
        "str | None",
        "",
        None,
        "runs.input_tokens_spec: the requested prompt lengths (NULL: not shaped)",
    ),
    _metric(
        "output_tokens_spec",
        ("run_summary", "nightly_trend"),
        "str | None",
        "",
        None,
        "runs.output_tokens_spec: the requested output lengths (NULL: not shaped)",
    ),
    _metric(
        "isl_mean",
        ("run_summary",),
        "float | None",
        "tokens",
        None,
        "avg(prompt_tokens) over ok requests, as the server counted",
    ),
    _metric(
        "isl_p50",
        ("run_summary",),
        "float | None",
        "tokens",
        None,
        "quantile_cont(prompt_tokens, 0.5) over ok requests",
    ),
    _metric(
        "isl_p99",
        ("run_summary",),
        "float | None",
        "tokens",
        None,
        "quantile_cont(prompt_tokens, 0.99) over ok requests",
    ),
    _metric(
        "osl_mean",
        ("run_summary",),
        "float | None",
        "tokens",
        None,
        "avg(output_tokens) over ok requests, as the server counted",
    ),
    _metric(
        "osl_p50",
        ("run_summary",),
        "float | None",
        "tokens",
        None,
        "quantile_cont(output_tokens, 0.5) over ok requests",
    ),
    _metric(
        "osl_p99",
        ("run_summary",),
        "float | None",
        "tokens",
        None,
        "quantile_cont(output_tokens, 0.99) over ok requests",
    ),
    _metric(
        "requested_isl_mean",
        ("run_summary",),
        "float | None",
        "tokens",
        None,
        "avg(requested_input_tokens) over measured requests",
    ),
    _metric(
        "requested_osl_mean",
        ("run_summary",),
        "float | None",
        "tokens",
        None,
        "avg(requested_output_tokens) over measured requests",
    ),
    _metric(
        "in_flight_at_stop",
        ("run_summary",),
        "int | None",
        "requests",
        None,
        "measured requests in flight when a timed run ended",
    ),
    _metric("stop_rule", ("run_summary",), "str | None", "", None, "runs.stop_rule: what ended the measurement"),
    _metric(
        "client_saturated",
        ("run_summary",),
        "bool | None",
        "",
        None,
        "runs.client_saturated: the client itself was a limit (NULL: not checked)",
    ),
    _metric(
        "client_check_note",
        ("run_summary",),
        "str | None",
        "",
        None,
        "runs.client_check_note: why the client self-check flagged the run",
    ),
    _metric(
        "token_count_source",
        ("run_summary",),
        "str | None",
        "",
        None,
        "the distinct sources of the ok requests' token counts, comma-separated",
        label="token counts from",
    ),
    _metric(
        "cached_tokens",
        ("run_summary",),
        "int | None",
        "tokens",
        None,
        "sum(cached_tokens): prompt tokens served from the engine's cache",
    ),
    _metric(
        "steady_start_ns", ("run_summary",), "int | None", "ns", None, "the steady window's start (view steady_window)"
    ),
    _metric(
        "steady_end_ns", ("run_summary",), "int | None", "ns", None, "the steady window's end (view steady_window)"
    ),
    _metric(
        "steady_share",
        ("run_summary",),
        "float | None",
        "fraction",
        HIGHER,
        "the steady window's share of the measured window",
    ),
    _metric("short_steady", ("run_summary",), "bool | None", "", None, "steady_share < 0.5"),
    _metric(
        "steady_output_tok_s",
        ("run_summary",),
        "float | None",
        "tokens/s",
        HIGHER,
        "output tokens inside the steady window / its length",
    ),
    _metric(
        "steady_tpot_p50_ms",
        ("run_summary",),
        "float | None",
        "ms per output token",
        LOWER,
        "quantile_cont(tpot_ns, 0.5) / 1e6 over the requests decoding in the steady window",
    ),
    _metric(
        "steady_tpot_p90_ms",
        ("run_summary",),
        "float | None",
        "ms per output token",
        LOWER,
        "quantile_cont(tpot_ns, 0.9) / 1e6 over the requests decoding in the steady window",
    ),
    _metric(
        "steady_interactivity",
        ("run_summary",),
        "float | None",
        "tokens/s per user",
        HIGHER,
        "1000 / steady_tpot_p50_ms",
    ),
    _metric(
        "steady_interactivity_p90",
        ("run_summary",),
        "float | None",
        "tokens/s per user",
        HIGHER,
        "1000 / steady_tpot_p90_ms",
    ),
    _metric(
        "output_tok_s",
        ("run_summary", "tco", "nightly_trend", "cost_at_latency_target"),
        "float | None",
        "tokens/s",
        HIGHER,
        "output_tokens / measure_s, aggregate over the run",
        label="output tok/s",
        symbol="tok/s",
    ),
    _metric(
        "total_tok_s",
        ("run_summary", "tco"),
        "float | None",
        "tokens/s",
        HIGHER,
        "(prompt_tokens + output_tokens) / measure_s, aggregate over the run",
        label="total tok/s",
        symbol="tok/s",
    ),
    _metric(
        "tpot_p50_ms",
        ("run_summary",),
        "float | None",
        "ms per output token",
        LOWER,
        "quantile_cont(tpot_ns, 0.50) / 1e6 over ok requests",
        label="TPOT p50",
        symbol="ms",
    ),
    _metric(
        "tpot_p90_ms",
        ("run_summary", "cost_at_latency_target"),
        "float | None",
        "ms per output token",
        LOWER,
        "quantile_cont(tpot_ns, 0.90) / 1e6 over ok requests",
        label="TPOT p90",
        symbol="ms",
    ),
    _metric(
        "tpot_p99_ms",
        ("run_summary",),
        "float | None",
        "ms per output token",
        LOWER,
        "quantile_cont(tpot_ns, 0.99) / 1e6 over ok requests",
        label="TPOT p99",
        symbol="ms",
    ),
    _metric("cached_share", ("run_summary",), "float | None", "fraction", HIGHER, "cached_tokens / prompt_tokens"),
    _metric(
        "gpus_counted",
        ("run_summary",),
        "int",
        "GPUs",
        None,
        "runs.gpus_given when > 0 (1 when 0: the CPU), else runs.gpu_count when > 0, else runs.declared_gpu_count "
        "when > 0, else 1",
    ),
    _metric(
        "gpus_counted_source",
        ("run_summary",),
        "str",
        "",
        None,
        "'gpus_given' | 'gpu_count' | 'declared_gpu_count' | 'cpu': which gave gpus_counted",
    ),
    _metric(
        "config_id",
        ("run_summary",),
        "str",
        "",
        None,
        "runs.config_id; before configurations 'legacy-' || md5(engine_name | engine_version | model_name | "
        "gpus_counted)[:8]",
    ),
    _metric("interactivity", ("run_summary",), "float | None", "tokens/s per user", HIGHER, "1000 / tpot_p50_ms"),
    _metric("interactivity_p90", ("run_summary",), "float | None", "tokens/s per user", HIGHER, "1000 / tpot_p90_ms"),
    _metric(
        "output_tok_s_per_gpu",
        ("run_summary",),
        "float | None",
        "tokens/s per GPU",
        HIGHER,
        "output_tok_s / gpus_counted",
    ),
    _metric(
        "steady_output_tok_s_per_gpu",
        ("run_summary",),
        "float | None",
        "tokens/s per GPU",
        HIGHER,
        "steady_output_tok_s / gpus_counted",
    ),
    _metric(
        "hardware_key",
        ("tco", "record_card", "nightly_trend", "cost_at_latency_target"),
        "str",
        "",
        None,
        "runs.hardware_key: the price table's [hardware] key",
    ),
    _metric("site_key", ("tco",), "str", "", None, "runs.site_key: the price table's [site] key"),
    _metric("ops_key", ("tco",), "str", "", None, "runs.ops_key: the price table's [ops] key"),
    _metric("utilisation", ("tco",), "float", "", None, "runs.utilisation: the fraction of the month serving"),
    _metric("hours_per_month", ("tco",), "float", "h", None, "730 = 8760 h / 12"),
    _metric("gpu_vendor", ("tco", "record_card"), "str | None", "", None, "runs.gpu_vendor: the accelerator's vendor"),
    _metric(
        "gpu_name",
        ("tco", "nightly_trend", "cost_at_latency_target"),
        "str | None",
        "",
        None,
        "runs.gpu_name: the accelerator's model",
    ),
    _metric(
        "gpu_count",
        ("tco", "record_card"),
        "int | None",
        "",
        None,
        "runs.gpu_count: accelerators the engine used (NULL or 0 on a CPU host)",
    ),
    _metric(
        "accelerators", ("tco",), "int | None", "GPUs", None, "hardware.accelerators: accelerators per [hardware] row"
    ),
    _metric(
        "units",
        ("tco",),
        "float",
        "rows",
        None,
        "gpu_count / accelerators when both > 0, else 1: hardware rows the run used",
    ),
    _metric("gpus_used", ("tco",), "int | None", "GPUs", None, "gpu_count when > 0, else the row's accelerators"),
    _metric("purchase_usd", ("tco",), "float | None", "USD", LOWER, "hardware.purchase_usd"),
    _metric("server_share_usd", ("tco",), "float | None", "USD", LOWER, "hardware.server_share_usd"),
    _metric("lifetime_months", ("tco",), "int | None", "months", None, "hardware.lifetime_months"),
    _metric("load_watts", ("tco",), "float | None", "W", LOWER, "hardware.load_watts (price table)"),
    _metric("idle_watts", ("tco",), "float | None", "W", LOWER, "hardware.idle_watts (price table)"),
    _metric("energy_valid", ("tco",), "bool", "", None, "energy.valid: the telemetry covers the measurement window"),
    _metric("measured_w", ("tco",), "float | None", "W", LOWER, "energy.mean_w over the measurement window"),
    _metric("measured_idle_w", ("tco",), "float | None", "W", LOWER, "energy.idle_w"),
    _metric(
        "measured_j_per_output_token",
        ("tco",),
        "float | None",
        "J/token",
        LOWER,
        "energy.j_per_output_token: energy of the window / output tokens",
    ),
    _metric(
        "load_w_used", ("tco",), "float | None", "W", LOWER, "energy.mean_w when energy.valid, else load_watts * units"
    ),
    _metric(
        "idle_w_used", ("tco",), "float | None", "W", LOWER, "energy.idle_w when energy.valid, else idle_watts * units"
    ),
    _metric(
        "power_w", ("tco",), "float | None", "W", LOWER, "utilisation * load_w_used + (1 - utilisation) * idle_w_used"
    ),
    _metric(
        "power_basis", ("tco",), "str", "", None, "measured (telemetry) or an estimate from the price table's watts"
    ),
    _metric("pue", ("tco",), "float | None", "facility W / IT W", LOWER, "site.pue"),
    _metric("kwh_usd", ("tco",), "float | None", "USD/kWh", LOWER, "site.kwh_usd"),
    _metric("ops_hours_per_month", ("tco",), "float | None", "h", LOWER, "ops.hours_per_host_month"),
    _metric("hourly_usd", ("tco",), "float | None", "USD/h", LOWER, "ops.hourly_usd"),
    _metric(
        "adaptation_days", ("tco", "record_card"), "float | None", "engineer days", LOWER, "hardware.adaptation_days"
    ),
    _metric("daily_usd", ("tco",), "float | None", "USD/day", LOWER, "ops.daily_usd"),
    _metric(
        "hardware_usd_month",
        ("tco",),
        "float | None",
        "USD/month",
        LOWER,
        "(purchase_usd + server_share_usd) * units / lifetime_months",
    ),
    _metric("energy_kwh_month", ("tco",), "float | None", "kWh/month", LOWER, "power_w * pue * hours_per_month / 1000"),
    _metric("power_usd_month", ("tco",), "float | None", "USD/month", LOWER, "energy_kwh_month * kwh_usd"),
    _metric(
        "ops_usd_month", ("tco",), "float | None", "USD/month", LOWER, "ops_hours_per_month * hourly_usd (per host)"
    ),
    _metric(
        "adaptation_usd_month",
        ("tco",),
        "float | None",
        "USD/month",
        LOWER,
        "adaptation_days * daily_usd / lifetime_months",
    ),
    _metric("total_usd_month", ("tco",), "float | None", "USD/month", LOWER, "capital + power + ops + adaptation"),
    _metric(
        "output_tokens_month",
        ("tco",),
        "float | None",
        "tokens/month",
        HIGHER,
        "output_tok_s * 3600 * hours_per_month * utilisation",
    ),
    _metric(
        "total_tokens_month",
        ("tco",),
        "float | None",
        "tokens/month",
        HIGHER,
        "total_tok_s * 3600 * hours_per_month * utilisation",
    ),
    _metric(
        "usd_per_m_output_tokens",
        ("tco", "nightly_trend", "cost_at_latency_target"),
        "float | None",
        "USD per 1M tokens",
        LOWER,
        "total_usd_month / output_tokens_month * 1e6",
        label="per 1M output tokens",
    ),
    _metric(
        "usd_per_m_total_tokens",
        ("tco",),
        "float | None",
        "USD per 1M tokens",
        LOWER,
        "total_usd_month / total_tokens_month * 1e6",
        label="per 1M total tokens",
    ),
    _metric(
        "output_tokens_per_usd", ("tco",), "float | None", "tokens/USD", HIGHER, "output_tokens_month / total_usd_month"
    ),
    _metric(
        "total_tokens_per_usd", ("tco",), "float | None", "tokens/USD", HIGHER, "total_tokens_month / total_usd_month"
    ),
    _metric("term", ("tco_sources",), "str", "", None, "'hardware' | 'site' | 'ops'"),
    _metric("key", ("tco_sources",), "str", "", None, "the price-table key stored on the run"),
    _metric(
        "source",
        ("tco_sources",),
        "str | None",
        "",
        None,
        "where the price comes from (NULL: key not in the price table)",
    ),
    _metric("as_of", ("tco_sources",), "dt.date | None", "", None, "the date the price was true"),
    _metric(
        "gpu_model",
        ("record_card",),
        "str",
        "",
        None,
        "runs.gpu_name, else 'CPU: ' || host_cpu, or 'not detected' (client host facts)",
    ),
    _metric(
        "gpu_source",
        ("record_card",),
        "str | None",
        "",
        None,
        "'detected' (a GPU sampler where the engine runs) or 'declared' (the inventory's)",
    ),
    _metric(
        "declared_vendor", ("record_card",), "str | None", "", None, "runs.declared_vendor: the inventory's vendor"
    ),
    _metric(
        "declared_gpu_model",
        ("record_card",),
        "str | None",
        "",
        None,
        "runs.declared_gpu_model: the inventory's GPU model",
    ),
    _metric(
        "declared_gpu_count",
        ("record_card",),
        "int | None",
        "",
        None,
        "runs.declared_gpu_count: the inventory's GPU count",
    ),
    _metric(
        "identity_warning",
        ("record_card",),
        "str | None",
        "",
        None,
        "runs.identity_warning: detected and declared identity disagree",
    ),
    _metric(
        "host_facts_source",
        ("record_card",),
        "str | None",
        "",
        None,
        "runs.host_facts_source: whose host facts: the engine's host or the client's",
    ),
    _metric("engine_label", ("record_card",), "str | None", "", None, "runs.engine_label: the engine's label"),
    _metric(
        "driver_version",
        ("record_card", "nightly_trend"),
        "str | None",
        "",
        None,
        "runs.driver_version: the GPU driver's version",
    ),
    _metric("cuda_version", ("record_card",), "str | None", "", None, "runs.cuda_version: CUDA's version"),
    _metric("rocm_version", ("record_card",), "str | None", "", None, "runs.rocm_version: ROCm's version"),
    _metric("host_os", ("record_card",), "str", "", None, "runs.host_os: the host's OS"),
    _metric("host_kernel", ("record_card",), "str", "", None, "runs.host_kernel: the host's kernel"),
    _metric("host_cpu", ("record_card",), "str", "", None, "runs.host_cpu: the host's CPU model"),
    _metric("host_cpu_count", ("record_card",), "int", "", None, "runs.host_cpu_count: the host's CPU count"),
    _metric("host_mem_gib", ("record_card",), "float", "GiB", None, "host_mem_bytes / 2^30"),
    _metric("engine", ("record_card",), "str", "", None, "runs.engine_name"),
    _metric(
        "model_digest",
        ("record_card", "nightly_trend"),
        "str | None",
        "",
        None,
        "runs.model_digest: the model file's digest",
    ),
    _metric(
        "synthetic_model",
        ("record_card",),
        "bool",
        "",
        None,
        "runs.synthetic_model: the model is a synthetic test model",
    ),
    _metric("num_ctx", ("record_card",), "int", "", None, "runs.num_ctx: the context length"),
    _metric(
        "prompt_set_hash",
        ("record_card", "nightly_trend", "cost_at_latency_target"),
        "str",
        "",
        None,
        "runs.prompt_set_hash: the prompt set's hash",
    ),
    _metric("max_tokens", ("record_card",), "int", "", None, "runs.max_tokens: the output-token cap per request"),
    _metric(
        "mean_input_tokens",
        ("record_card",),
        "float | None",
        "tokens per request",
        None,
        "run_summary.prompt_tokens / ok",
    ),
    _metric("requests_ok", ("record_card",), "int", "requests", HIGHER, "run_summary.ok"),
    _metric("at_least_20", ("record_card",), "bool", "", None, "requests_ok >= 20"),
    _metric(
        "mean_tok_s",
        ("record_card",),
        "float | None",
        "tokens/s",
        HIGHER,
        "coalesce(server_decode_tok_s_mean, req_decode_tok_s_mean)",
    ),
    _metric(
        "p50_tok_s",
        ("record_card",),
        "float | None",
        "tokens/s",
        HIGHER,
        "coalesce(server_decode_tok_s_p50, req_decode_tok_s_p50)",
    ),
    _metric(
        "tok_s_source",
        ("record_card",),
        "str | None",
        "",
        None,
        "which clock mean_tok_s and p50_tok_s come from: engine or client",
    ),
    _metric("p50_latency_ms", ("record_card",), "float | None", "ms", LOWER, "run_summary.e2e_p50_ms"),
    _metric(
        "single_request_ms",
        ("record_card",),
        "float | None",
        "ms",
        LOWER,
        "e2e_p50_ms of the concurrency-1 run of the same batch",
    ),
    _metric("mean_power_w", ("record_card",), "float | None", "W", LOWER, "energy.mean_w (NULL without telemetry)"),
    _metric("peak_vram_gib", ("record_card",), "float | None", "GiB", LOWER, "energy.peak_vram_bytes / 2^30"),
    _metric(
        "electricity_usd_per_output_token",
        ("record_card",),
        "float | None",
        "USD/token",
        LOWER,
        "efficiency.electricity_usd_per_m_output_tokens / 1e6",
    ),
    _metric(
        "electricity_usd_per_m_output_tokens",
        ("record_card",),
        "float | None",
        "USD per 1M tokens",
        LOWER,
        "j_per_output_token * pue / 3.6e6 * kwh_usd * 1e6 (view efficiency)",
    ),
    _metric(
        "energy_basis", ("record_card",), "str | None", "", None, "efficiency.energy_basis: 'measured' or an estimate"
    ),
    _metric("image", ("record_card",), "str | None", "", None, "runs.image: the engine's container image"),
    _metric(
        "image_digest",
        ("record_card", "nightly_trend"),
        "str | None",
        "",
        None,
        "runs.image_digest: the image's digest",
    ),
    _metric("config_hash", ("record_card",), "str", "", None, "runs.config_hash: the config's hash"),
    _metric("tool_version", ("record_card",), "str", "", None, "runs.tool_version: tcobench's version"),
    _metric("git_revision", ("record_card",), "str | None", "", None, "runs.git_revision: tcobench's git revision"),
    _metric("series", ("nightly_trend",), "str", "", None, "trend_series(host, model_name, workload, concurrency)"),
    _metric("extra_body", ("nightly_trend",), "str | None", "", None, "runs.extra_body: extra request fields"),
    _metric(
        "tokenizer", ("nightly_trend",), "str | None", "", None, "runs.tokenizer: the tokenizer that counted tokens"
    ),
    _metric("night", ("nightly_trend",), "int", "", None, "1-based position of the run in its series, by started"),
    _metric(
        "prev_req_decode_tok_s_p50",
        ("nightly_trend",),
        "float | None",
        "tokens/s",
        HIGHER,
        "the previous run's req_decode_tok_s_p50",
    ),
    _metric(
        "decode_change_pct",
        ("nightly_trend",),
        "float | None",
        "%",
        HIGHER,
        "(req_decode_tok_s_p50 / prev_req_decode_tok_s_p50 - 1) * 100",
    ),
    _metric(
        "prior_mean_decode_tok_s_p50",
        ("nightly_trend",),
        "float | None",
        "tokens/s",
        HIGHER,
        "mean of req_decode_tok_s_p50 over up to 7 previous runs",
    ),
    _metric(
        "prior_sd_decode_tok_s_p50",
        ("nightly_trend",),
        "float | None",
        "tokens/s",
        None,
        "sample sd of req_decode_tok_s_p50 over up to 7 previous runs",
    ),
    _metric(
        "target",
        ("cost_at_latency_target",),
        "str",
        "",
        None,
        "the price table's [latency_target] name",
        label="target",
    ),
    _metric("target_ttft_p90_ms", ("cost_at_latency_target",), "float", "ms", None, "latency_target.ttft_p90_ms"),
    _metric(
        "target_tpot_p90_ms",
        ("cost_at_latency_target",),
        "float",
        "ms per output token",
        None,
        "latency_target.tpot_p90_ms",
    ),
    _metric("runs", ("cost_at_latency_target",), "int", "runs", None, "runs of the platform with a cost"),
    _metric("runs_meeting", ("cost_at_latency_target",), "int", "runs", HIGHER, "of them, runs meeting the target"),
    _metric(
        "best_run_id",
        ("cost_at_latency_target",),
        "str | None",
        "",
        None,
        "arg_max(run_id, output_tok_s) over runs meeting the target",
    ),
)
_BY_NAME = {m.name: m for m in METRICS}


def metric(name: str) -> Metric:
    """The catalogue's entry for a column; KeyError when it is not catalogued."""
    return _BY_NAME[name]


def view_columns(view: str) -> dict[str, str]:
    """Column -> Python type of every catalogued column of ``view``."""
    return {m.name: m.type_of(view) for m in METRICS if view in m.views}


def _cell(text: str) -> str:
    return text.replace("|", "\\|") or "-"


def catalogue_markdown() -> str:
    """The catalogue as docs/formulas.md's tables: one per computing view, a row per metric."""
    out: list[str] = []
    for view in dict.fromkeys(m.views[0] for m in METRICS):
        out += [f"### `{view}`", "", "| metric | unit | better | formula | also in |", "|---|---|---|---|---|"]
        for m in (m for m in METRICS if m.views[0] == view):
            also = ", ".join(f"`{v}`" for v in m.views[1:])
            out.append(f"| `{m.name}` | {_cell(m.unit)} | {m.better or '-'} | {_cell(m.formula)} | {also or '-'} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(catalogue_markdown())
