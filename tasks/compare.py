"""compare: cost efficiency of two selections of runs, with a bootstrap confidence interval and a verdict.

Cost efficiency is tokens per USD (view ``cost_basis``: output_tokens_per_usd or total_tokens_per_usd); the ratio is
A / B, which equals (cost per 1M tokens of B) / (cost per 1M tokens of A): "A is R times as cost-efficient".

A selection is ``key=value`` terms joined by commas (all must hold); ``|`` separates alternatives of one key:
``vendor=nvidia``, ``host=gpu-a|gpu-b,since=2026-11-01``, ``run=3f2a`` (run id prefix). Keys: see
``SELECTION_KEYS``. Runs are compared per concurrency level present in both selections; every other
setting that shapes the measurement (``COMPARABLE``) must be the same on both sides, or the comparison is
refused with the list of differences (``allow_different=True`` overrides that, and the differences are kept).

Point estimates of a selection (the same as view ``platform_cost``): the night-weighted mean (SQL macro
``night_weighted_mean``: the mean over nights, run dates, of the mean over that night's runs) of view
``cost_basis``' tokens per USD, tokens/s and monthly cost terms. Bootstrap (fixed seed): resample nights, runs
within each night, and ok requests within each run (view ``request_metrics``); a resampled run's tokens per
USD is its measured figure times (sum tokens* / sum e2e*) / (sum tokens / sum e2e) over the resampled requests
(a ratio estimator of its throughput), and a replicate weighs nights as ``night_weighted_mean`` does. The CI
is the percentile interval of the ratio over the resamples (tasks/quantile.py: the views' quantile rule).
"""

from __future__ import annotations

import ipaddress
import json
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import duckdb
import numpy as np

from tcobench.errors import ConfigError, QueryError
from tcobench.schemas import PriceTable

from .quantile import quantile
from .query import connect, describe_snapshot, freeze_views
from .store import StoreRef

__all__ = [
    "COMPARABLE",
    "SELECTION_KEYS",
    "Comparison",
    "CostTerm",
    "RunSample",
    "Selection",
    "Stratum",
    "bootstrap_efficiency",
    "compare",
    "compare_on",
    "comparison_differences",
    "load_candidates",
    "load_runs",
    "load_samples",
    "night_weighted",
    "parse_selection",
    "percentile_interval",
    "verdict",
]

# alias -> (run column, how a value matches)
SELECTION_KEYS: dict[str, tuple[str, str]] = {
    "vendor": ("gpu_vendor", "exact"),
    "gpu": ("gpu_name", "contains"),
    "host": ("host", "exact"),
    "hardware": ("hardware_key", "exact"),
    "site": ("site_key", "exact"),
    "engine": ("engine_name", "exact"),
    "engine_version": ("engine_version", "exact"),
    "driver": ("driver_version", "exact"),
    "model": ("model_name", "exact"),
    "workload": ("workload", "exact"),
    "concurrency": ("concurrency", "exact"),
    "date": ("date", "exact"),
    "since": ("date", "since"),
    "until": ("date", "until"),
    "run": ("run_id", "prefix"),
    "batch": ("batch_id", "prefix"),
}
# column names work as keys too (gpu_vendor=nvidia, hardware_key=..., run_id=..., batch_id=...)
_COLUMN_KEYS = {column: (column, mode) for column, mode in SELECTION_KEYS.values() if mode not in ("since", "until")}

# label -> how to read it from a run row; runs compared must agree on every one of these
COMPARABLE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "workload (prompt_set_hash)": lambda r: r["prompt_set_hash"],
    "max_tokens": lambda r: r["max_tokens"],
    "ignore_eos": lambda r: r["ignore_eos"],
    "temperature": lambda r: r["temperature"],
    "extra_body (engine request fields)": lambda r: r.get("extra_body"),
    "load_mode": lambda r: r["load_mode"],
    "rate_rps": lambda r: r["rate_rps"],
    "model (digest, or name where no digest)": lambda r: r["model_digest"] or f"name:{r['model_name']}",
    "synthetic_model": lambda r: r["synthetic_model"],
    "num_ctx (context length)": lambda r: r["num_ctx"],
    "engine": lambda r: r["engine_name"],
    "engine_version": lambda r: r["engine_version"],
    "engine_settings": lambda r: _settings_without_paths(r["engine_settings"]),
    "client_placement (where the load generator ran)": lambda r: _placement(r),
}
_TERMS = ("capital", "power", "ops", "adaptation")


def _placement(row: dict[str, Any]) -> str:
    """The run's client placement; for a row stored before placement was recorded, inferred from its engine URL
    (a loopback host: loopback, anything else: network), as the measuring code then behaved."""
    recorded = row.get("client_placement")
    if recorded:
        return str(recorded)
    host = urlsplit(str(row.get("engine_url") or "")).hostname or ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    return "loopback" if loopback else "network"


def _settings_without_paths(text: str | None) -> str:
    """Canonical engine settings less host-local locations (keys ending in path/dir): they name no setting."""
    try:
        data = json.loads(text or "{}")
    except json.JSONDecodeError:
        return text or ""
    if not isinstance(data, dict):
        return json.dumps(data, sort_keys=True)
    kept = {k: v for k, v in data.items() if not k.lower().endswith(("path", "_dir"))}
    return json.dumps(kept, sort_keys=True)


@dataclass(frozen=True)
class Selection:
    """A parsed selection: (key, column, match mode, alternatives) terms that must all hold."""

    text: str
    terms: tuple[tuple[str, str, str, tuple[str, ...]], ...]

    def matches(self, row: dict[str, Any]) -> bool:
        return all(_term_holds(row.get(column), mode, values) for _, column, mode, values in self.terms)


def _term_holds(actual: Any, mode: str, values: tuple[str, ...]) -> bool:
    if actual is None:
        return False
    text = str(actual)
    if mode == "exact":
        return any(text.lower() == v.lower() for v in values)
    if mode == "contains":
        return any(v.lower() in text.lower() for v in values)
    if mode == "prefix":
        return any(text.startswith(v) for v in values)
    if mode == "since":
        return any(text >= v for v in values)
    return any(text <= v for v in values)  # until


def parse_selection(text: str, label: str = "selection") -> Selection:
    """Parse ``key=value[|value...][,key=value...]``; a bad term is a one-line ConfigError naming the keys."""
    terms = []
    valid = ", ".join(sorted({*SELECTION_KEYS, *_COLUMN_KEYS}))
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        values = tuple(v.strip() for v in value.split("|") if v.strip())
        if not sep or not values:
            raise ConfigError(f"{label} {text!r}: term {part!r} is not key=value (keys: {valid})")
        spec = SELECTION_KEYS.get(key) or _COLUMN_KEYS.get(key)
        if spec is None:
            raise ConfigError(f"{label} {text!r}: unknown key {key!r} (keys: {valid})")
        terms.append((key, spec[0], spec[1], values))
    if not terms:
        raise ConfigError(f"{label} is empty: give key=value terms, e.g. vendor=nvidia (keys: {valid})")
    return Selection(text, tuple(terms))


@dataclass(frozen=True)
class RunSample:
    """One run's inputs to the bootstrap: its tokens per USD and its measured requests."""

    run_id: str
    night: str
    tokens_per_usd: float
    tokens: np.ndarray  # per ok measured request: tokens counted (output, or prompt + output)
    e2e_s: np.ndarray  # per ok measured request: end-to-end latency, s


def _run_replicates(sample: RunSample, resamples: int, rng: np.random.Generator) -> np.ndarray:
    n = len(sample.tokens)
    if n < 2 or sample.e2e_s.sum() <= 0:
        return np.full(resamples, sample.tokens_per_usd)
    idx = rng.integers(0, n, size=(resamples, n))
    rate = sample.tokens[idx].sum(axis=1) / sample.e2e_s[idx].sum(axis=1)
    result: np.ndarray = sample.tokens_per_usd * rate / (sample.tokens.sum() / sample.e2e_s.sum())
    return result


def bootstrap_efficiency(samples: Sequence[RunSample], resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``resamples`` bootstrap replicates of the night-weighted tokens per USD: nights, runs within nights and
    requests within runs are resampled; each replicate is the mean over its nights of each night's mean."""
    ordered = sorted(samples, key=lambda s: (s.night, s.run_id))
    nights: dict[str, list[np.ndarray]] = defaultdict(list)
    for s in ordered:
        nights[s.night].append(_run_replicates(s, resamples, rng))
    cols = np.arange(resamples)
    night_values = []
    for reps in nights.values():
        matrix = np.vstack(reps)  # runs x resamples
        pick = rng.integers(0, len(reps), size=(len(reps), resamples))
        night_values.append(matrix[pick, cols].mean(axis=0))
    per_night = np.vstack(night_values)  # nights x resamples
    pick = rng.integers(0, len(night_values), size=(len(night_values), resamples))
    result: np.ndarray = per_night[pick, cols].mean(axis=0)
    return result


def verdict(claim: float, lo: float, hi: float) -> str:
    """Where a claimed ratio lies against the interval: 'inside', 'above' or 'below'."""
    if claim > hi:
        return "above"
    if claim < lo:
        return "below"
    return "inside"


@dataclass(frozen=True)
class CostTerm:
    """One cost term of a stratum, per 1M tokens, on each side."""

    term: str
    a_usd_per_m: float
    b_usd_per_m: float

    @property
    def b_minus_a(self) -> float:
        return self.b_usd_per_m - self.a_usd_per_m


@dataclass(frozen=True)
class Stratum:
    """The comparison at one concurrency level."""

    concurrency: int
    a_runs: int
    b_runs: int
    a_nights: int
    b_nights: int
    a_tokens_per_usd: float
    b_tokens_per_usd: float
    a_tok_s: float
    b_tok_s: float
    a_usd_month: float
    b_usd_month: float
    ratio: float
    lo: float
    hi: float
    terms: tuple[CostTerm, ...]
    verdict: str | None

    @property
    def a_usd_per_m(self) -> float:
        return 1e6 / self.a_tokens_per_usd

    @property
    def b_usd_per_m(self) -> float:
        return 1e6 / self.b_tokens_per_usd

    def driver(self) -> CostTerm:
        """The cost term whose per-1M-token difference is the largest."""
        return max(self.terms, key=lambda t: abs(t.b_minus_a))


@dataclass(frozen=True)
class Comparison:
    a: Selection
    b: Selection
    basis: str
    tokens: str  # output or total
    confidence: float
    resamples: int
    seed: int
    claim: float | None
    strata: tuple[Stratum, ...]
    pooled: tuple[float, float, float] | None  # geometric mean over strata: ratio, lo, hi
    pooled_verdict: str | None
    differences: tuple[str, ...]  # non-empty only when compared despite differences
    notes: tuple[str, ...] = field(default_factory=tuple)
    a_desc: str = ""
    b_desc: str = ""
    snapshot: str = ""  # which store snapshot was read (query.describe_snapshot)


_RUNS_SQL = """
SELECT r.*, c.basis, c.capital_usd_month, c.power_usd_month, c.ops_usd_month, c.adaptation_usd_month,
       c.total_usd_month, c.output_tokens_per_usd, c.total_tokens_per_usd, t.output_tok_s, t.total_tok_s,
       t.purchase_usd IS NOT NULL AS has_hardware_price, t.pue IS NOT NULL AS has_site_price,
       t.ops_hours_per_month IS NOT NULL AS has_ops_price, t.energy_valid
FROM runs AS r
JOIN tco AS t ON t.run_id = r.run_id
LEFT JOIN cost_basis AS c ON c.run_id = r.run_id AND c.basis = $basis
WHERE r.status <> 'failed'
ORDER BY r.started_ns, r.run_id
"""


def _check_basis(con: duckdb.DuckDBPyConnection, basis: str) -> None:
    bases = [b for (b,) in con.execute("SELECT DISTINCT basis FROM cost_basis ORDER BY 1").fetchall()]
    if basis not in bases and bases:
        raise ConfigError(f"cost basis {basis!r} has no priced run (valid: {', '.join(bases)})")


def load_runs(con: duckdb.DuckDBPyConnection, basis: str) -> list[dict[str, Any]]:
    """Every run that did not fail, with its cost columns on ``basis`` (NULL where it has no price there)."""
    _check_basis(con, basis)
    rows: list[dict[str, Any]] = con.sql(_RUNS_SQL, params={"basis": basis}).to_arrow_table().to_pylist()
    return rows


def load_candidates(con: duckdb.DuckDBPyConnection, basis: str) -> list[dict[str, Any]]:
    """Runs with a cost on ``basis`` ('owned' or 'rented: <tier>'); unknown bases are a ConfigError."""
    return [r for r in load_runs(con, basis) if r["output_tokens_per_usd"] is not None]


def load_samples(con: duckdb.DuckDBPyConnection, runs: Sequence[dict[str, Any]], tokens: str) -> list[RunSample]:
    """RunSample per run row (tokens: 'output' or 'total'), from the ok requests of view request_metrics."""
    query = (
        f"SELECT run_id, {tokens}_tokens AS tokens, e2e_ns / 1e9 AS e2e_s FROM request_metrics "
        f"WHERE ok AND {tokens}_tokens IS NOT NULL AND e2e_ns > 0 AND list_contains($ids, run_id)"
    )
    found: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for run_id, n, secs in con.execute(query, {"ids": [r["run_id"] for r in runs]}).fetchall():
        found[run_id][0].append(float(n))
        found[run_id][1].append(float(secs))
    per_usd = f"{tokens}_tokens_per_usd"
    return [
        RunSample(
            r["run_id"], r["date"], float(r[per_usd]), np.array(found[r["run_id"]][0]), np.array(found[r["run_id"]][1])
        )
        for r in runs
    ]


# view cost_basis' columns that compare reports per side, each night-weighted (macro night_weighted_mean)
_NIGHT_WEIGHTED = ("output_tokens_per_usd", "total_tokens_per_usd", "output_tok_s", "total_tok_s", "total_usd_month",
                   *(f"{term}_usd_month" for term in _TERMS))  # fmt: skip


def night_weighted(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str], basis: str) -> dict[str, float]:
    """The night-weighted mean of each of view cost_basis' cost and rate columns over these runs on ``basis``
    (SQL macro night_weighted_mean, as in view platform_cost); a column with no value is NaN."""
    columns = ", ".join(f"night_weighted_mean(list(({c}, date))) AS {c}" for c in _NIGHT_WEIGHTED)
    sql = f"SELECT {columns} FROM cost_basis WHERE basis = $basis AND list_contains($ids, run_id)"
    row = con.execute(sql, {"basis": basis, "ids": list(run_ids)}).fetchone()
    assert row is not None, "an aggregate without GROUP BY returns one row"
    return {c: math.nan if v is None else float(v) for c, v in zip(_NIGHT_WEIGHTED, row, strict=True)}


def _short(value: Any) -> str:
    text = "null" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def comparison_differences(a_rows: Sequence[dict[str, Any]], b_rows: Sequence[dict[str, Any]]) -> list[str]:
    """'field: A {...} vs B {...}' for every COMPARABLE field that is not one value across both sides."""
    found = []
    for label, read in COMPARABLE.items():
        a_vals = {_short(read(r)) for r in a_rows}
        b_vals = {_short(read(r)) for r in b_rows}
        if len(a_vals | b_vals) > 1:
            found.append(f"{label}: A {{{', '.join(sorted(a_vals))}}} vs B {{{', '.join(sorted(b_vals))}}}")
    return found


def _terms(a: dict[str, float], b: dict[str, float], a_eff: float, b_eff: float) -> tuple[CostTerm, ...]:
    """Per-1M-token share of each monthly term: cost per 1M x term / total (night-weighted), as in platform_cost."""

    def split(side: dict[str, float], eff: float) -> dict[str, float]:
        return {t: 1e6 / eff * side[f"{t}_usd_month"] / side["total_usd_month"] for t in _TERMS}

    a_split, b_split = split(a, a_eff), split(b, b_eff)
    return tuple(CostTerm(t, a_split[t], b_split[t]) for t in _TERMS)


def _nights(rows: Sequence[dict[str, Any]]) -> int:
    return len({r["date"] for r in rows})


def _describe(rows: Sequence[dict[str, Any]]) -> str:
    def values(column: str) -> str:
        return ", ".join(sorted({str(r[column]) for r in rows if r[column] is not None})) or "-"

    return (
        f"{len(rows)} run(s) over {_nights(rows)} night(s); hosts {values('host')}; GPUs {values('gpu_name')}; "
        f"hardware {values('hardware_key')}; driver {values('driver_version')}"
    )


@dataclass(frozen=True)
class _Options:
    basis: str
    tokens: str
    claim: float | None
    allow_different: bool
    resamples: int
    seed: int
    confidence: float


def _pick(rows: list[dict[str, Any]], selection: Selection, label: str) -> list[dict[str, Any]]:
    chosen = [r for r in rows if selection.matches(r)]
    if not chosen:
        raise QueryError(
            f"selection {label} {selection.text!r} matches no stored run ({len(rows)} runs; "
            f"vendors: {', '.join(sorted({str(r['gpu_vendor']) for r in rows})) or '-'}; "
            f"hosts: {', '.join(sorted({r['host'] for r in rows})) or '-'})"
        )
    return chosen


def _why_unpriced(row: dict[str, Any], basis: str) -> str:
    if not row["has_hardware_price"]:
        return f"hardware key {row['hardware_key']!r} is not in the price table"
    if not row["has_site_price"]:
        return f"site key {row['site_key']!r} is not in the price table"
    if not row["has_ops_price"]:
        return f"ops key {row['ops_key']!r} is not in the price table"
    if row["output_tok_s"] is None:
        return "no measured tokens"
    return f"no [rental] row prices hardware {row['hardware_key']!r} as {basis!r}"


def _priced(rows: list[dict[str, Any]], label: str, basis: str, notes: list[str]) -> list[dict[str, Any]]:
    """The rows with a cost; a note for those without one, a QueryError when none has one."""
    kept = [r for r in rows if r["output_tokens_per_usd"] is not None]
    reasons = sorted({_why_unpriced(r, basis) for r in rows if r["output_tokens_per_usd"] is None})
    if not kept:
        raise QueryError(f"selection {label}: no run has a cost on the {basis} basis: {'; '.join(reasons)}")
    if reasons:
        notes.append(f"{len(rows) - len(kept)} run(s) of {label} left out, without a cost: {'; '.join(reasons)}")
    return kept


def _stratum(
    con: duckdb.DuckDBPyConnection,
    level: int,
    a_rows: list[dict[str, Any]],
    b_rows: list[dict[str, Any]],
    opts: _Options,
    rng: np.random.Generator,
) -> tuple[Stratum, np.ndarray]:
    a_samples, b_samples = load_samples(con, a_rows, opts.tokens), load_samples(con, b_rows, opts.tokens)
    a = night_weighted(con, [r["run_id"] for r in a_rows], opts.basis)
    b = night_weighted(con, [r["run_id"] for r in b_rows], opts.basis)
    per_usd, rate = f"{opts.tokens}_tokens_per_usd", f"{opts.tokens}_tok_s"
    a_eff, b_eff = a[per_usd], b[per_usd]
    reps = bootstrap_efficiency(a_samples, opts.resamples, rng) / bootstrap_efficiency(b_samples, opts.resamples, rng)
    lo, hi = percentile_interval(reps, opts.confidence)
    ratio = a_eff / b_eff
    stratum = Stratum(
        concurrency=level,
        a_runs=len(a_rows),
        b_runs=len(b_rows),
        a_nights=_nights(a_rows),
        b_nights=_nights(b_rows),
        a_tokens_per_usd=a_eff,
        b_tokens_per_usd=b_eff,
        a_tok_s=a[rate],
        b_tok_s=b[rate],
        a_usd_month=a["total_usd_month"],
        b_usd_month=b["total_usd_month"],
        ratio=ratio,
        lo=lo,
        hi=hi,
        terms=_terms(a, b, a_eff, b_eff),
        verdict=verdict(opts.claim, lo, hi) if opts.claim is not None else None,
    )
    return stratum, reps


def _options(
    basis: str = "owned",
    tokens: str = "output",
    claim: float | None = None,
    allow_different: bool = False,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> _Options:
    if tokens not in ("output", "total"):
        raise ConfigError(f"tokens must be output or total, got {tokens!r}")
    if not 0 < confidence < 1 or resamples < 100:
        raise ConfigError(f"confidence must lie in (0, 1) and resamples be >= 100, got {confidence}, {resamples}")
    if claim is not None and not (math.isfinite(claim) and claim > 0):
        raise ConfigError(f"--claim must be a positive ratio, got {claim}")
    return _Options(basis, tokens, claim, allow_different, resamples, seed, confidence)


def compare_on(con: duckdb.DuckDBPyConnection, a: str, b: str, **options: Any) -> Comparison:
    """Compare selection ``a`` with ``b`` over an open connection (see the module docstring).

    Options: basis ('owned' or 'rented: <tier>'), tokens ('output' or 'total'), claim (a ratio to judge),
    allow_different, resamples (2000), seed (0), confidence (0.95).
    """
    opts = _options(**options)
    return _compare(con, parse_selection(a, "--a"), parse_selection(b, "--b"), opts)


def compare(
    store: StoreRef, prices: PriceTable, a: str, b: str, snapshot: int | None = None, **options: Any
) -> Comparison:
    """compare_on over the store (at ``snapshot``, default the newest); QueryError when refused or a selection is
    empty, ConfigError on bad input."""
    opts = _options(**options)  # bad arguments fail before the store is opened
    sel_a, sel_b = parse_selection(a, "--a"), parse_selection(b, "--b")
    con = connect(store, prices, snapshot=snapshot)
    try:
        freeze_views(con)
        return replace(_compare(con, sel_a, sel_b, opts), snapshot=describe_snapshot(con))
    finally:
        con.close()


def _compare(con: duckdb.DuckDBPyConnection, sel_a: Selection, sel_b: Selection, opts: _Options) -> Comparison:
    rows = load_runs(con, opts.basis)
    a_rows, b_rows = _pick(rows, sel_a, "A"), _pick(rows, sel_b, "B")
    both = {r["run_id"] for r in a_rows} & {r["run_id"] for r in b_rows}
    if both:
        raise QueryError(f"selections A and B share {len(both)} run(s), e.g. {sorted(both)[0]}: make them disjoint")
    a_levels, b_levels = {r["concurrency"] for r in a_rows}, {r["concurrency"] for r in b_rows}
    levels = sorted(a_levels & b_levels)
    if not levels:
        raise QueryError(
            f"no concurrency level in common: A has {sorted(a_levels)}, B has {sorted(b_levels)}; "
            "runs are compared at equal concurrency"
        )
    a_rows = [r for r in a_rows if r["concurrency"] in levels]
    b_rows = [r for r in b_rows if r["concurrency"] in levels]
    diffs = comparison_differences(a_rows, b_rows)
    if diffs and not opts.allow_different:
        raise QueryError(
            "refused: the selections differ in what was measured: "
            + "; ".join(diffs)
            + " (compare like with like, or pass --allow-different to compare anyway)"
        )
    notes = [f"concurrency {c} only in A: not compared" for c in sorted(a_levels - b_levels)]
    notes += [f"concurrency {c} only in B: not compared" for c in sorted(b_levels - a_levels)]
    a_rows, b_rows = _priced(a_rows, "A", opts.basis, notes), _priced(b_rows, "B", opts.basis, notes)
    powered = [{"measured" if r["energy_valid"] else "price-table estimate" for r in rows} for rows in (a_rows, b_rows)]
    if opts.basis == "owned" and powered[0] != powered[1]:
        notes.append(f"power basis differs: A {' + '.join(sorted(powered[0]))}, B {' + '.join(sorted(powered[1]))} "
                     "(measured device watts leave out the rest of the host; the estimate is all-in)")  # fmt: skip
    levels = sorted({r["concurrency"] for r in a_rows} & {r["concurrency"] for r in b_rows})
    if not levels:
        raise QueryError("no concurrency level in common among the runs with a cost")
    rng = np.random.default_rng(opts.seed)
    strata, reps = [], []
    for level in levels:
        stratum, rep = _stratum(
            con,
            level,
            [r for r in a_rows if r["concurrency"] == level],
            [r for r in b_rows if r["concurrency"] == level],
            opts,
            rng,
        )
        strata.append(stratum)
        reps.append(rep)
        if min(stratum.a_runs, stratum.b_runs) == 1:
            notes.append(f"concurrency {level}: one run on a side, so its CI reflects request-level noise only")
    pooled, pooled_verdict = _pooled(strata, reps, opts)
    return Comparison(
        sel_a,
        sel_b,
        opts.basis,
        opts.tokens,
        opts.confidence,
        opts.resamples,
        opts.seed,
        opts.claim,
        tuple(strata),
        pooled,
        pooled_verdict,
        tuple(diffs),
        tuple(notes),
        _describe(a_rows),
        _describe(b_rows),
    )


def _pooled(
    strata: list[Stratum], reps: list[np.ndarray], opts: _Options
) -> tuple[tuple[float, float, float] | None, str | None]:
    """Geometric mean of the ratios over concurrency levels (each level weighs the same), with its CI."""
    if len(strata) < 2:
        return None, None
    ratio = math.exp(float(np.mean([math.log(s.ratio) for s in strata])))
    lo, hi = percentile_interval(np.exp(np.log(np.vstack(reps)).mean(axis=0)), opts.confidence)
    return (ratio, lo, hi), (verdict(opts.claim, lo, hi) if opts.claim is not None else None)


def percentile_interval(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval: the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of the replicates."""
    lo, hi = quantile(replicates, (1 - confidence) / 2), quantile(replicates, (1 + confidence) / 2)
    assert lo is not None and hi is not None, "there are at least 100 replicates"
    return lo, hi
