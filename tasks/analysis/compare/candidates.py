"""candidates: the runs a comparison may take, read from the views, and each side's figures.

``load_runs`` reads every run that did not fail with what a selection matches, what must agree on both sides
(``COMPARABLE``) and its cost on one basis (view ``cost_basis``); ``night_weighted`` gives a side's figures: the
night-weighted mean (SQL macro ``night_weighted_mean``, as in view ``platform_cost``) of view ``cost_basis``'
tokens per USD, tok/s and monthly cost terms. ``load_priced`` reads the same runs' tokens per USD alone, on several
bases at once (the report's cost whiskers).
"""

from __future__ import annotations

import functools
import ipaddress
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal, TypedDict
from urllib.parse import urlsplit

import duckdb

from tcobench.errors import ConfigError, QueryError
from tcobench.schemas import CostBasis
from tcobench.schemas.units import usd_per_m
from tcobench.tasks.analysis.compare.bootstrap import RunSample, TokenCount, load_samples
from tcobench.tasks.analysis.compare.selection import Selection, date_bounds, level_bounds, workload_bounds
from tcobench.tasks.store.query import define_needed
from tcobench.tasks.store.rows import IDS, RunRow, arrow_of, fetch_rows, id_list, listed, typed_rows

__all__ = [
    "CANDIDATE_MACROS",
    "CANDIDATE_MACROS_WHEN_CALLED",
    "COMPARABLE",
    "SHAPE_COLUMNS",
    "CandidateRun",
    "CostTermName",
    "PricedRun",
    "SideFigures",
    "any_slo",
    "comparison_differences",
    "goodput_of",
    "left_out_runs",
    "load_priced",
    "load_runs",
    "load_selected",
    "night_weighted",
    "night_weighted_sides",
    "priced",
    "samples_of",
    "shape_differences",
]

CostTermName = Literal["capital", "power", "ops", "adaptation"]


class CandidateRun(RunRow):
    """A run that did not fail, with what selections match, what must agree, and its cost on one basis."""

    driver_version: str | None
    hardware_key: str
    site_key: str
    ops_key: str
    engine_name: str
    engine_label: str | None
    gpu_source: str | None
    engine_version: str
    engine_settings: str | None
    model_name: str
    model_digest: str | None
    synthetic_model: bool
    workload: str
    prompt_set_hash: str
    max_tokens: int | None
    ignore_eos: bool
    temperature: float | None
    extra_body: str | None
    load_mode: str
    rate_rps: float | None
    num_ctx: int | None
    concurrency: int
    output_tokens_spec: str | None
    engine_url: str | None
    client_placement: str | None
    # achieved shape (view run_summary): mean prompt / output tokens as the server counted them
    isl_mean: float | None
    osl_mean: float | None
    client_saturated: bool | None  # the load generator was a limit in this run (tasks/load/selfcheck.py)
    # the serving configuration (schemas/serving.py; config_id and gpus_counted from view run_summary)
    config_id: str
    serving_config: str | None
    tensor_parallel: int | None
    max_num_seqs: int | None
    source: str | None  # null: measured by tcobench; imported:<tool> <version> (`tcobench import`)
    gpus_counted: int
    # cost on the basis asked for (view cost_basis; NULL where the run has no price there)
    output_tokens_per_usd: float | None
    total_tokens_per_usd: float | None
    has_cost_basis: bool  # cost_basis has the run's row on that basis (its columns below are the row's)
    basis_output_tok_s: float | None  # cost_basis.output_tok_s
    total_tok_s: float | None
    total_usd_month: float | None
    capital_usd_month: float | None
    power_usd_month: float | None
    ops_usd_month: float | None
    adaptation_usd_month: float | None
    downtime_usd_month: float | None  # NULL: not enough history, or no rate (cost_basis.downtime_basis)
    gco2e_per_m_output_tokens: float | None  # NULL: energy not measured, or no grid intensity
    # why a run has no cost
    output_tok_s: float | None
    has_hardware_price: bool
    has_site_price: bool
    has_ops_price: bool
    energy_valid: bool


# label -> how to read it from a run row; runs compared must agree on every one of these: the model, the workload's
# shape and where the load generator ran (a network hop is in every latency). The engine, its version and settings
# (context length included) may differ between platforms: compare lists them (setup_table.py) and refuses nothing.
COMPARABLE: dict[str, Callable[[CandidateRun], object]] = {
    "workload (prompt_set_hash)": lambda r: r["prompt_set_hash"],
    "max_tokens": lambda r: r["max_tokens"],
    "ignore_eos": lambda r: r["ignore_eos"],
    "temperature": lambda r: r["temperature"],
    "extra_body (engine request fields)": lambda r: r["extra_body"],
    "load_mode": lambda r: r["load_mode"],
    "rate_rps": lambda r: r["rate_rps"],
    "model (digest, or name where no digest)": lambda r: r["model_digest"] or f"name:{r['model_name']}",
    "synthetic_model": lambda r: r["synthetic_model"],
    "output lengths (output_tokens_spec)": lambda r: r["output_tokens_spec"],
    "client_placement (where the load generator ran)": lambda r: _placement(r),
}
# achieved shape (run_summary column) -> label; both sides must agree within the shape tolerance
SHAPE_COLUMNS: dict[Literal["isl_mean", "osl_mean"], str] = {
    "isl_mean": "achieved ISL mean",
    "osl_mean": "achieved OSL mean",
}


def _placement(row: CandidateRun) -> str:
    """The run's client placement; for a row stored before placement was recorded, inferred from its engine URL
    (a loopback host: loopback, anything else: network), as the measuring code then behaved."""
    recorded = row["client_placement"]
    return str(recorded) if recorded else _placement_of_url(str(row["engine_url"] or ""))


# comparison_differences reads every run's settings; they repeat a few values (a quarter: 3,600 runs, 20 hosts)
@functools.lru_cache(maxsize=1024)
def _placement_of_url(url: str) -> str:
    host = urlsplit(url).hostname or ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    return "loopback" if loopback else "network"


# the macros (tcobench/sql/macros) this module calls on every path: a connection for it names them in its needs
CANDIDATE_MACROS = ("candidate_runs", "any_slo", "side_figures")
# those it calls only on some paths (no priced run, a side that matches none, runs with an SLO, the report's priced
# runs): defined when called (query.define_needed), not on every connection
CANDIDATE_MACROS_WHEN_CALLED = ("left_out_runs", "priced_runs", "priced_bases", "side_goodput")
_RUNS_SQL = (
    "SELECT * FROM candidate_runs($basis, levels := $levels, "
    f"workloads := {listed('workloads')}, first_date := $first, last_date := $last)"
)


def _check_basis(con: duckdb.DuckDBPyConnection, basis: CostBasis) -> None:
    define_needed(con, ["priced_bases"])
    bases = [b for (b,) in con.execute("SELECT * FROM priced_bases()").fetchall()]
    if str(basis) not in bases and bases:
        priced = ", ".join(CostBasis.parse(b).option for b in bases)  # the values --basis takes
        raise ConfigError(f"cost basis {basis.option!r} has no priced run (priced: {priced})")


def load_runs(
    con: duckdb.DuckDBPyConnection,
    basis: CostBasis,
    dates: tuple[str | None, str | None] = (None, None),
    levels: Collection[int] | None = None,
    workloads: Collection[str] | None = None,
) -> list[CandidateRun]:
    """Every run that did not fail, with its cost columns on ``basis`` (NULL where it has no price there);
    ``dates``: only runs whose date (as text, as selections compare it) lies from the first to the last (None:
    unbounded); ``levels``: only runs at these concurrency levels; ``workloads``: only runs of these workloads (lower
    case, as selections compare them). A basis no run of
    the store is priced on is a ConfigError (checked over the whole store when none of these runs is priced on
    it)."""
    params = {
        "basis": str(basis),
        "levels": sorted(int(c) for c in levels) if levels is not None else None,
        "workloads": id_list(sorted(workloads)) if workloads is not None else None,
        "first": dates[0],
        "last": dates[1],
    }
    rows = fetch_rows(con, _RUNS_SQL, CandidateRun, params)
    if not any(r["has_cost_basis"] for r in rows):
        _check_basis(con, basis)
    return rows


def load_selected(con: duckdb.DuckDBPyConnection, basis: CostBasis, *selections: Selection) -> list[CandidateRun]:
    """``load_runs`` of the runs any of ``selections`` can match: the dates, concurrency levels and workloads their
    terms bound (selection.date_bounds, level_bounds, workload_bounds), applied in the query, so the other runs are
    neither read nor typed. A superset: each selection still picks its own runs (selection.pick)."""
    levels, workloads = level_bounds(*selections), workload_bounds(*selections)
    return load_runs(con, basis, date_bounds(*selections), levels=levels, workloads=workloads)


def left_out_runs(con: duckdb.DuckDBPyConnection) -> list[dict[str, object]]:
    """The stored runs ``load_runs`` leaves out (failed, interrupted), with their ``status``: what a selection that
    matches no candidate says it left out (selection.pick)."""
    define_needed(con, ["left_out_runs"])
    rows: list[dict[str, object]] = con.execute("SELECT * FROM left_out_runs()").fetch_arrow_table().to_pylist()
    return rows


class PricedRun(TypedDict):
    """A run's tokens per USD on one cost basis (``load_priced``): what ``samples_of`` needs of a run, and its
    concurrency. A CandidateRun has these keys too."""

    run_id: str
    batch_id: str
    date: str
    concurrency: int
    output_tokens_per_usd: float | None
    total_tokens_per_usd: float | None


def load_priced(
    con: duckdb.DuckDBPyConnection, bases: Sequence[CostBasis], ids: Sequence[str] | None = None
) -> dict[str, list[PricedRun]]:
    """Per basis (by its name), the runs (all, or ``ids``) ``load_runs`` reads on it that have a cost there, oldest
    first, with only their tokens per USD: in one query, of views runs and cost_basis alone (not view tco, slower for
    every CandidateRun column: docs/dev/performance.md#priced-runs; the
    same runs and figures as load_runs: tests/unit/tasks/analysis/test_compare.py). A basis no run is priced on is a
    ConfigError."""
    define_needed(con, ["priced_runs"])
    names = [str(b) for b in bases]
    sql = f"SELECT * FROM priced_runs($bases, ids := {IDS})"
    params: dict[str, object] = {"bases": names, "ids": id_list(ids) if ids is not None else None}
    table = arrow_of(con, sql, params)
    found: dict[str, list[PricedRun]] = {name: [] for name in names}
    # each basis's rows in the query's order (split in Python: a filter per basis would import pyarrow.compute)
    rows = typed_rows(table.drop_columns(["_basis"]), PricedRun)
    for name, row in zip(table.column("_basis").to_pylist(), rows, strict=True):
        found[name].append(row)
    for name, basis in zip(names, bases, strict=True):
        if not found[name]:
            _check_basis(con, basis)
    return found


@dataclass(frozen=True)
class SideFigures:
    """Night-weighted means (SQL table macro night_weighted) of view cost_basis' columns over one side's runs."""

    output_tokens_per_usd: float
    total_tokens_per_usd: float
    output_tok_s: float
    total_tok_s: float
    total_usd_month: float
    capital_usd_month: float
    power_usd_month: float
    ops_usd_month: float
    adaptation_usd_month: float
    # beside the cost, never in total_usd_month nor a term (docs/cost-model.md#downtime, #carbon); NaN: none
    downtime_usd_month: float
    gco2e_per_m_output_tokens: float

    def tokens_per_usd(self, tokens: TokenCount) -> float:
        return self.output_tokens_per_usd if tokens == "output" else self.total_tokens_per_usd

    def tok_s(self, tokens: TokenCount) -> float:
        return self.output_tok_s if tokens == "output" else self.total_tok_s

    def term_usd_month(self, term: CostTermName) -> float:
        return {
            "capital": self.capital_usd_month,
            "power": self.power_usd_month,
            "ops": self.ops_usd_month,
            "adaptation": self.adaptation_usd_month,
        }[term]


_SIDE_KEYS = {"output_tok_s": "basis_output_tok_s"}  # SideFigures field -> CandidateRun key, where they differ


def night_weighted(con: duckdb.DuckDBPyConnection, rows: Sequence[CandidateRun]) -> SideFigures:
    """The night-weighted mean of each SideFigures column of view cost_basis over these runs (``night_weighted_sides``
    of one side)."""
    return night_weighted_sides(con, [rows])[0]


def night_weighted_sides(con: duckdb.DuckDBPyConnection, sides: Sequence[Sequence[CandidateRun]]) -> list[SideFigures]:
    """Per side (a list of runs), the night-weighted mean of each SideFigures column of view cost_basis over its runs
    (their cost_basis rows, as ``load_runs`` read them; SQL table macro night_weighted, the rule of macro
    night_weighted_mean as in view platform_cost); a column with no value is NaN. Every side in one query (macro
    side_figures), over the rows already read: view cost_basis is not computed again."""
    names = list(SideFigures.__dataclass_fields__)
    # (key, value, night) rows, key "side column"; those the macro leaves out (a NULL value or night) are left out
    # here. Bound as three texts, not a registered table: DuckDB scans a numpy table through numpy.ma and an Arrow
    # one through pyarrow.dataset, imports that are a fixed cost of a small store's compare
    # (docs/dev/performance.md#small-store)
    long = [
        (f"{i} {n}", repr(float(value)), r["batch_id"])
        for i, rows in enumerate(sides)
        for n in names
        for r in rows
        if r["has_cost_basis"]
        and (value := r[_SIDE_KEYS.get(n, n)]) is not None  # type: ignore[literal-required]
        and r["batch_id"] is not None
    ]
    means: dict[str, object] = {}
    if long:
        keys, figures, nights = (id_list(column) for column in zip(*long, strict=True))
        found = con.execute(
            "SELECT * FROM side_figures($keys, $figures, $nights)", {"keys": keys, "figures": figures, "nights": nights}
        )
        means = dict(found.fetchall())
    return [
        SideFigures(*(math.nan if (m := means.get(f"{i} {n}")) is None else float(m) for n in names))  # type: ignore[arg-type]
        for i in range(len(sides))
    ]


def _short(value: object) -> str:
    text = "null" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def comparison_differences(a_rows: Sequence[CandidateRun], b_rows: Sequence[CandidateRun]) -> list[str]:
    """'field: A {...} vs B {...}' for every COMPARABLE field that is not one value across both sides."""
    found = []
    for label, read in COMPARABLE.items():
        a_vals = {_short(v) for v in {read(r) for r in a_rows}}  # each value once: runs repeat a few
        b_vals = {_short(v) for v in {read(r) for r in b_rows}}
        if len(a_vals | b_vals) > 1:
            found.append(f"{label}: A {{{', '.join(sorted(a_vals))}}} vs B {{{', '.join(sorted(b_vals))}}}")
    return found


def _side_mean(rows: Sequence[CandidateRun], column: Literal["isl_mean", "osl_mean"]) -> float | None:
    values = [float(v) for r in rows if (v := r[column]) is not None]
    return sum(values) / len(values) if values else None


def shape_differences(a_rows: Sequence[CandidateRun], b_rows: Sequence[CandidateRun], tolerance: float) -> list[str]:
    """'concurrency C: achieved ISL mean A x vs B y (+d%)' where a side's mean over its runs of a SHAPE_COLUMNS
    column differs from the other side's by more than ``tolerance`` (relative to B); levels without counts pass."""
    found = []
    for level in sorted({r["concurrency"] for r in a_rows} & {r["concurrency"] for r in b_rows}):
        for column, label in SHAPE_COLUMNS.items():
            a = _side_mean([r for r in a_rows if r["concurrency"] == level], column)
            b = _side_mean([r for r in b_rows if r["concurrency"] == level], column)
            if a is None or b is None or b == 0 or abs(a / b - 1) <= tolerance:
                continue
            found.append(f"concurrency {level}: {label} A {a:,.1f} vs B {b:,.1f} ({a / b - 1:+.1%})")
    return found


def any_slo(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> bool:
    """Whether any of these runs has an SLO target (view slo_targets)."""
    found = con.execute(f"SELECT * FROM any_slo({IDS})", {"ids": id_list(run_ids)}).fetchone()
    return bool(found and found[0])


def goodput_of(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str], basis: CostBasis) -> tuple[float, float]:
    """(night-weighted fraction of requests within the SLO, cost per 1M good output tokens) of these runs on
    ``basis`` (view goodput; macro night_weighted_mean); NaN where no run has an SLO or no token was good."""
    if not any_slo(con, run_ids):  # no run has a target: nothing to judge (view goodput reads every request)
        return math.nan, math.nan
    define_needed(con, ["side_goodput"])
    row = con.execute(
        f"SELECT * FROM side_goodput($basis, {IDS})", {"basis": str(basis), "ids": id_list(run_ids)}
    ).fetchone()
    fraction, per_usd = row if row is not None else (None, None)
    return (math.nan if fraction is None else float(fraction), math.nan if not per_usd else usd_per_m(float(per_usd)))


def _why_unpriced(row: CandidateRun, basis: CostBasis) -> str:
    if not row["has_hardware_price"]:
        return f"hardware key {row['hardware_key']!r} is not in the price table"
    if not row["has_site_price"]:
        return f"site key {row['site_key']!r} is not in the price table"
    if not row["has_ops_price"]:
        return f"ops key {row['ops_key']!r} is not in the price table"
    if row["output_tok_s"] is None:
        return "no measured tokens"
    return f"no [rental] row prices hardware {row['hardware_key']!r} as {str(basis)!r}"


def priced(rows: list[CandidateRun], label: str, basis: CostBasis, notes: list[str]) -> list[CandidateRun]:
    """The rows with a cost; a note for those without one, a QueryError when none has one."""
    kept = [r for r in rows if r["output_tokens_per_usd"] is not None]
    reasons = sorted({_why_unpriced(r, basis) for r in rows if r["output_tokens_per_usd"] is None})
    if not kept:
        raise QueryError(f"selection {label}: no run has a cost on the {basis} basis: {'; '.join(reasons)}")
    if reasons:
        notes.append(f"{len(rows) - len(kept)} run(s) of {label} left out, without a cost: {'; '.join(reasons)}")
    return kept


def samples_of(
    con: duckdb.DuckDBPyConnection,
    rows: Sequence[PricedRun],
    tokens: TokenCount,
    known: dict[str, RunSample] | None = None,
) -> list[RunSample]:
    """The bootstrap's RunSample of each priced run (its night, tokens per USD on the loaded basis, requests).
    ``known``: samples loaded before for the same ``tokens`` (any basis), by run id: their requests are reused,
    and those loaded now are added."""
    seen = known if known is not None else {}
    per_usd = [
        (r["run_id"], r["batch_id"], r["output_tokens_per_usd"] if tokens == "output" else r["total_tokens_per_usd"])
        for r in rows
    ]
    runs = [(run_id, night, float(v)) for run_id, night, v in per_usd if v is not None]
    todo = [run for run in runs if run[0] not in seen]
    if todo:
        dates = (min(r["date"] for r in rows), max(r["date"] for r in rows))
        seen.update((s.run_id, s) for s in load_samples(con, todo, tokens, dates))
    # a new RunSample per run, not dataclasses.replace (slower, and a year's report makes many:
    # docs/dev/performance.md#run-sample-replace)
    return [
        RunSample(run_id, night, v, s.tokens, s.e2e_s, s.moments) for run_id, night, v in runs for s in (seen[run_id],)
    ]
