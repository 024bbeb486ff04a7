"""rows: the rows tcobench's Python code reads from the SQL views, typed (one TypedDict per view).

Each TypedDict lists its view's columns (tcobench/sql) with the Python type DuckDB returns for them through Arrow
(VARCHAR -> str, BIGINT -> int, DOUBLE -> float, BOOLEAN -> bool, DATE -> date, TIMESTAMP -> datetime); ``| None``
where the column can be NULL. ``VIEW_ROWS`` maps a view to its TypedDict, and tests/unit/tasks/store/test_rows.py checks
every one against the view, so a column added to a view must be added here too, and to the metric catalogue
(schemas/metrics.py; tests/unit/test_metric_catalogue.py checks these TypedDicts against it). ``fetch_rows``
runs a query and returns its rows as a TypedDict, checking that the query's columns are the TypedDict's keys.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypedDict, TypeVar, cast

import duckdb
import pyarrow as pa

__all__ = [
    "IDS",
    "VIEW_ROWS",
    "CostAtLatencyTargetRow",
    "NightlyTrendRow",
    "RecordCardRow",
    "RunIdentityRow",
    "RunRow",
    "RunSummaryRow",
    "TcoRow",
    "TcoSourcesRow",
    "arrow_of",
    "collection_paused",
    "dates_between",
    "fetch_rows",
    "id_list",
    "listed",
    "typed_rows",
]

_SEPARATOR = "\x1f"  # ASCII unit separator: never in a run id (id_list refuses one that has it)


def listed(param: str) -> str:
    """SQL: the list of texts bound to ``$param`` with id_list."""
    return f"string_split(${param}, chr({ord(_SEPARATOR)}))"


IDS = listed("ids")  # SQL: the list of run ids bound to $ids with id_list


def dates_between(dates: tuple[str, str] | None) -> tuple[str, dict[str, object]]:
    """The SQL condition `` AND date BETWEEN $first AND $last`` and its parameters for runs' first and last date
    (requests carry their run's date: the store then skips other dates' files); ("", {}) for None."""
    if dates is None:
        return "", {}
    return " AND date BETWEEN $first AND $last", {"first": dates[0], "last": dates[1]}


def id_list(ids: Iterable[str]) -> str:
    """Run ids as one text parameter (``$ids``) that SQL splits back into a list (``IDS``).

    DuckDB's Python binding converts a list parameter value by value and looks pandas up for each value; where
    pandas is not installed every lookup searches the import path again, far slower than the same ids as one text
    (docs/dev/performance.md#id-list-parameter)."""
    values = list(ids)
    bad = next((v for v in values if _SEPARATOR in v), None)
    if bad is not None:
        raise ValueError(f"run id {bad!r} contains the unit separator U+001F")
    return _SEPARATOR.join(values)


class RunIdentityRow(TypedDict):
    """The identity columns run_summary starts with (copied from runs), and tco after it."""

    run_id: str
    batch_id: str
    host: str
    date: str
    started: dt.datetime
    engine_name: str
    engine_version: str
    model_name: str
    workload: str
    load_mode: str
    concurrency: int
    status: str


class RunRow(TypedDict):
    """Which run and where it ran: the view runs' columns that queries joining runs select first."""

    run_id: str
    batch_id: str
    date: str
    host: str
    gpu_vendor: str | None
    gpu_name: str | None


class RunSummaryRow(RunIdentityRow):
    """View run_summary (tcobench/sql/run/run_summary.sql): one row per run."""

    concurrency_reached: int | None  # the most requests in flight at once; NULL: stored before it was recorded
    n: int
    errors: int
    ok: int
    ttft_p50_ms: float | None
    ttft_p90_ms: float | None
    ttft_p99_ms: float | None
    itl_p50_ms: float | None
    itl_p90_ms: float | None
    itl_p99_ms: float | None
    e2e_p50_ms: float | None
    e2e_p90_ms: float | None
    e2e_p99_ms: float | None
    tpot_mean_ms: float | None
    req_decode_tok_s_mean: float | None
    req_decode_tok_s_p50: float | None
    server_decode_tok_s_mean: float | None
    server_decode_tok_s_p50: float | None
    prompt_tokens: int | None
    output_tokens: int | None
    measure_s: float | None
    input_tokens_spec: str | None
    output_tokens_spec: str | None
    isl_mean: float | None
    isl_p50: float | None
    isl_p99: float | None
    osl_mean: float | None
    osl_p50: float | None
    osl_p99: float | None
    requested_isl_mean: float | None
    requested_osl_mean: float | None
    in_flight_at_stop: int | None
    stop_rule: str | None
    client_saturated: bool | None
    client_check_note: str | None
    token_count_source: str | None
    cached_tokens: int | None
    # the steady state (view steady_window)
    steady_start_ns: int | None
    steady_end_ns: int | None
    steady_share: float | None
    short_steady: bool | None
    steady_output_tok_s: float | None
    steady_tpot_p50_ms: float | None
    steady_tpot_p90_ms: float | None
    steady_interactivity: float | None
    steady_interactivity_p90: float | None
    output_tok_s: float | None
    total_tok_s: float | None
    tpot_p50_ms: float | None
    tpot_p90_ms: float | None
    tpot_p99_ms: float | None
    cached_share: float | None
    gpus_counted: int
    gpus_counted_source: str
    config_id: str
    interactivity: float | None
    interactivity_p90: float | None
    output_tok_s_per_gpu: float | None
    steady_output_tok_s_per_gpu: float | None


class TcoRow(RunIdentityRow):
    """View tco (tcobench/sql/cost/tco.sql): one row per run, owned basis; NULL prices for keys not in the table."""

    hardware_key: str
    site_key: str
    ops_key: str
    utilisation: float
    hours_per_month: float
    gpu_vendor: str | None
    gpu_name: str | None
    gpu_count: int | None
    accelerators: int | None
    units: float
    gpus_used: int | None
    purchase_usd: float | None
    server_share_usd: float | None
    lifetime_months: int | None
    load_watts: float | None
    idle_watts: float | None
    energy_valid: bool
    measured_w: float | None
    measured_idle_w: float | None
    measured_j_per_output_token: float | None
    load_w_used: float | None
    idle_w_used: float | None
    power_w: float | None
    power_basis: str
    pue: float | None
    kwh_usd: float | None
    ops_hours_per_month: float | None
    hourly_usd: float | None
    adaptation_days: float | None
    daily_usd: float | None
    output_tok_s: float | None
    total_tok_s: float | None
    hardware_usd_month: float | None
    energy_kwh_month: float | None
    power_usd_month: float | None
    ops_usd_month: float | None
    adaptation_usd_month: float | None
    total_usd_month: float | None
    output_tokens_month: float | None
    total_tokens_month: float | None
    usd_per_m_output_tokens: float | None
    usd_per_m_total_tokens: float | None
    output_tokens_per_usd: float | None
    total_tokens_per_usd: float | None


class TcoSourcesRow(TypedDict):
    """View tco_sources (tcobench/sql/cost/tco_sources.sql): one row per run and cost term."""

    run_id: str
    term: str
    key: str
    source: str | None
    as_of: dt.date | None


class RecordCardRow(TypedDict):
    """View record_card (tcobench/sql/report/record_card.sql): one row per run."""

    run_id: str
    batch_id: str
    date: str
    host: str
    started: dt.datetime
    gpu_model: str
    gpu_vendor: str | None
    gpu_count: int | None
    gpu_source: str | None
    declared_vendor: str | None
    declared_gpu_model: str | None
    declared_gpu_count: int | None
    identity_warning: str | None
    host_facts_source: str | None
    engine_label: str | None
    driver_version: str | None
    cuda_version: str | None
    rocm_version: str | None
    host_os: str
    host_kernel: str
    host_cpu: str
    host_cpu_count: int
    host_mem_gib: float
    engine: str
    engine_version: str
    model_name: str
    model_digest: str | None
    synthetic_model: bool
    num_ctx: int
    prompt_set_hash: str
    max_tokens: int
    concurrency: int
    mean_input_tokens: float | None
    requests_ok: int
    at_least_20: bool
    mean_tok_s: float | None
    p50_tok_s: float | None
    tok_s_source: str | None
    p50_latency_ms: float | None
    single_request_ms: float | None
    mean_power_w: float | None
    peak_vram_gib: float | None
    adaptation_days: float | None
    electricity_usd_per_output_token: float | None
    electricity_usd_per_m_output_tokens: float | None
    energy_basis: str | None
    hardware_key: str
    image: str | None
    image_digest: str | None
    config_hash: str
    tool_version: str
    git_revision: str | None


class NightlyTrendRow(TypedDict):
    """View nightly_trend (tcobench/sql/trend/nightly_trend.sql): one row per run in its series. View trend_runs
    (trend/trend_runs.sql) is it without usd_per_m_output_tokens; history reads that with None for the cost."""

    series: str
    host: str
    model_name: str
    workload: str
    concurrency: int
    run_id: str
    batch_id: str
    date: str
    started: dt.datetime
    status: str
    gpu_name: str | None
    hardware_key: str
    engine_version: str
    driver_version: str | None
    image_digest: str | None
    model_digest: str | None
    prompt_set_hash: str
    extra_body: str | None
    output_tokens_spec: str | None
    tokenizer: str | None
    output_tok_s: float | None
    req_decode_tok_s_p50: float | None
    ttft_p50_ms: float | None
    usd_per_m_output_tokens: float | None
    night: int
    prev_req_decode_tok_s_p50: float | None
    decode_change_pct: float | None
    prior_mean_decode_tok_s_p50: float | None
    prior_sd_decode_tok_s_p50: float | None


class CostAtLatencyTargetRow(TypedDict):
    """View cost_at_latency_target (tcobench/sql/cost/cost_at_latency_target.sql)."""

    target: str
    target_ttft_p90_ms: float
    target_tpot_p90_ms: float
    host: str
    hardware_key: str
    gpu_name: str | None
    engine_name: str
    model_name: str
    workload: str
    prompt_set_hash: str
    runs: int
    runs_meeting: int
    best_run_id: str | None
    concurrency: int | None
    output_tok_s: float | None
    ttft_p90_ms: float | None
    tpot_p90_ms: float | None
    usd_per_m_output_tokens: float | None


VIEW_ROWS: Mapping[str, type[Any]] = {
    "run_summary": RunSummaryRow,
    "tco": TcoRow,
    "tco_sources": TcoSourcesRow,
    "record_card": RecordCardRow,
    "nightly_trend": NightlyTrendRow,
    "cost_at_latency_target": CostAtLatencyTargetRow,
}

Row = TypeVar("Row", bound=Mapping[str, Any])


def typed_rows(table: pa.Table, row: type[Row]) -> list[Row]:
    """The rows of an Arrow table as ``row`` (a TypedDict); TypeError when a column is not one of the row's keys
    or a required key is not a column (a bug: the query and the TypedDict disagree)."""
    keys: frozenset[str] = getattr(row, "__required_keys__", frozenset()) | getattr(
        row, "__optional_keys__", frozenset()
    )
    required: frozenset[str] = getattr(row, "__required_keys__", frozenset())
    missing = sorted(required - set(table.schema.names))
    extra = sorted(set(table.schema.names) - keys)
    if missing or extra:
        raise TypeError(
            f"columns do not match {row.__name__}: missing {missing}, not in it {extra} (tasks/store/rows.py)"
        )
    return cast(list[Row], table.to_pylist())


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for a block that builds many row objects and no reference cycles
    (compare, history, report over a year's store: tens of thousands of row dicts, points and samples, each allocation
    burst setting off collections of the whole heap: docs/dev/performance.md#gc-paused). Reference counting still frees
    everything; the previous state comes back afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def arrow_of(con: duckdb.DuckDBPyConnection, sql: str, params: Mapping[str, object] | None = None) -> pa.Table:
    """The result of ``sql`` (``$name`` parameters from ``params``) as an Arrow table. With parameters it is
    executed as a statement: a relation (``con.sql(sql, params=...)``) materialises its result first and is then
    scanned again, slower (docs/dev/performance.md#arrow-of-statement)."""
    if not params:
        return con.sql(sql).to_arrow_table()
    return con.execute(sql, dict(params)).fetch_arrow_table()


def fetch_rows(
    con: duckdb.DuckDBPyConnection, sql: str, row: type[Row], params: Mapping[str, object] | None = None
) -> list[Row]:
    """The rows of ``sql`` (``$name`` parameters from ``params``) as ``row``; see typed_rows."""
    return typed_rows(arrow_of(con, sql, params), row)
