"""comparison: the cost efficiency of two selections of runs, per concurrency level, with a verdict on a claim.

Per concurrency level present in both selections, or at equal interactivity; settings that shape the measurement
must match (or ``allow_different``), and so must the achieved shape within ``shape_tolerance``. Point figures are
night-weighted means of view ``cost_basis``; the interval comes from bootstrap.py.

Design notes: docs/dev/architecture/analysis.md#tasks-compare-comparison.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import get_args

import duckdb
import numpy as np

from tcobench.errors import ConfigError, QueryError
from tcobench.schemas import CompareOptions, CostBasis, PriceTable
from tcobench.schemas.units import usd_per_m, usd_per_m_term
from tcobench.tasks.analysis.compare.bootstrap import (
    NightDraws,
    RunSample,
    TokenCount,
    Verdict,
    bootstrap_efficiency,
    night_draws,
    percentile_interval,
    verdict,
)
from tcobench.tasks.analysis.compare.candidates import (
    CANDIDATE_MACROS,
    CandidateRun,
    CostTermName,
    SideFigures,
    any_slo,
    comparison_differences,
    goodput_of,
    left_out_runs,
    load_selected,
    night_weighted_sides,
    priced,
    samples_of,
    shape_differences,
)
from tcobench.tasks.analysis.compare.claim_grade import CLAIM_MACROS, ClaimGrade, claim_grade, claim_thresholds
from tcobench.tasks.analysis.compare.frontier import FRONTIER_MACROS
from tcobench.tasks.analysis.compare.interactivity import FrontierComparison, check_quantile
from tcobench.tasks.analysis.compare.selection import Selection, parse_selection, pick
from tcobench.tasks.analysis.compare.setup_table import SetupDifference, setup_differences
from tcobench.tasks.analysis.compare.sides import config_key, config_labels, frontier_comparison
from tcobench.tasks.analysis.history import HISTORY_MACROS, detect_changes
from tcobench.tasks.analysis.operations import (
    OPERATIONS_VIEWS,
    Adaptation,
    Operations,
    operations_of,
    with_measured_adaptation,
)
from tcobench.tasks.store.query import FROZEN_VIEWS, connect, describe_snapshot, register_prices
from tcobench.tasks.store.rows import IDS, collection_paused, id_list
from tcobench.tasks.store.store import StoreRef
from tcobench.tasks.workload.accuracy import parse_accuracy_name

__all__ = [
    "Comparison",
    "CostTerm",
    "FlaggedRun",
    "Stratum",
    "Verdict",
    "compare",
    "compare_on",
    "compare_views",
    "compare_with_operations",
    "token_count",
    "verdict",
]

_TERMS: tuple[CostTermName, ...] = get_args(CostTermName)


def token_count(text: str) -> TokenCount:
    """'output' or 'total'; a ConfigError otherwise."""
    if text == "output":
        return "output"
    if text == "total":
        return "total"
    raise ConfigError(f"tokens must be output or total, got {text!r}")


@dataclass(frozen=True)
class CostTerm:
    """One cost term of a stratum, per 1M tokens, on each side."""

    term: CostTermName
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
    verdict: Verdict | None
    a_good_fraction: float = math.nan  # night-weighted fraction of requests within the SLO (NaN: no SLO)
    b_good_fraction: float = math.nan
    a_good_usd_per_m: float = math.nan  # cost per 1M tokens delivered within the SLO (NaN: none)
    b_good_usd_per_m: float = math.nan
    # beside the terms, never in the total or the ratio (docs/cost-model.md#downtime, #carbon); NaN: none
    a_downtime_usd_per_m: float = math.nan  # the downtime term per 1M tokens (NaN: not enough history, or no rate)
    b_downtime_usd_per_m: float = math.nan
    a_gco2e_per_m_output_tokens: float = math.nan  # carbon (NaN: energy not measured, or no grid intensity)
    b_gco2e_per_m_output_tokens: float = math.nan
    # the serving configurations compared (sides.config_key), and their names where a side has several (None: one
    # configuration a side, the level says it all)
    a_config_id: str = ""
    b_config_id: str = ""
    a_config: str | None = None  # e.g. "vllm 0.32.0, TP=1, 1 GPU"
    b_config: str | None = None

    @property
    def pair(self) -> str | None:
        """ "A's configuration vs B's" where a side has several, else None."""
        return f"{self.a_config} vs {self.b_config}" if self.a_config and self.b_config else None

    @property
    def where(self) -> str:
        """'concurrency 4', or 'concurrency 4 (A's configuration vs B's)' where a side has several."""
        return f"concurrency {self.concurrency}" + (f" ({self.pair})" if self.pair else "")

    @property
    def a_usd_per_m(self) -> float:
        return usd_per_m(self.a_tokens_per_usd)

    @property
    def b_usd_per_m(self) -> float:
        return usd_per_m(self.b_tokens_per_usd)

    def driver(self) -> CostTerm:
        """The cost term whose per-1M-token difference is the largest."""
        return max(self.terms, key=lambda t: abs(t.b_minus_a))


@dataclass(frozen=True)
class FlaggedRun:
    """A run of a side that `tcobench history` flags: what changed against the runs before it in its series."""

    side: str  # "A" or "B"
    run_id: str
    batch_id: str
    date: str
    series: str
    changes: tuple[str, ...]  # "decode_tok_s -25.0% (worse)"
    worse: bool  # at least one change goes the bad way (a regression)
    excluded: bool


@dataclass(frozen=True)
class Comparison:
    a: Selection
    b: Selection
    basis: CostBasis
    tokens: TokenCount
    confidence: float
    resamples: int
    seed: int
    claim: float | None
    strata: tuple[Stratum, ...]
    pooled: tuple[float, float, float] | None  # geometric mean over strata: ratio, lo, hi
    pooled_verdict: Verdict | None
    differences: tuple[str, ...]  # non-empty only when compared despite differences
    notes: tuple[str, ...] = field(default_factory=tuple)
    a_desc: str = ""
    b_desc: str = ""
    snapshot: str = ""  # which store snapshot was read (query.describe_snapshot)
    flagged: tuple[FlaggedRun, ...] = field(default_factory=tuple)
    claim_grade: ClaimGrade | None = None  # the claim-grade rules over the compared runs (claim_grade.py)
    setup: tuple[SetupDifference, ...] = ()  # every setting whose values differ between the sides (setup_table.py)
    frontier: FrontierComparison | None = None  # at equal interactivity (interactivity.py); None: not computed
    a_hosts: tuple[str, ...] = ()  # the hosts of each side's compared runs (the CLI's operations lines read them)
    b_hosts: tuple[str, ...] = ()


def _terms(a: SideFigures, b: SideFigures, a_eff: float, b_eff: float) -> tuple[CostTerm, ...]:
    """Per-1M-token share of each monthly term: cost per 1M x term / total (night-weighted), as in platform_cost."""

    def split(side: SideFigures, eff: float, term: CostTermName) -> float:
        return usd_per_m_term(eff, side.term_usd_month(term), side.total_usd_month)

    return tuple(CostTerm(t, split(a, a_eff, t), split(b, b_eff, t)) for t in _TERMS)


def _nights(rows: Sequence[CandidateRun]) -> int:
    """Nights are nightly batches (runs.batch_id), not dates."""
    return len({r["batch_id"] for r in rows})


def _dates(rows: Sequence[CandidateRun]) -> int:
    return len({r["date"] for r in rows})


def _gpu(run: CandidateRun) -> str | None:
    """'vendor model', marked '(declared)' when only the inventory says so."""
    if run["gpu_name"] is None and run["gpu_vendor"] is None:
        return None
    name = " ".join(str(v) for v in (run["gpu_vendor"], run["gpu_name"]) if v)
    return name + (" (declared)" if run["gpu_source"] == "declared" else "")


def _hosts(rows: Sequence[CandidateRun]) -> tuple[str, ...]:
    return tuple(sorted({r["host"] for r in rows}))


def _describe(rows: Sequence[CandidateRun]) -> str:
    def values(read: Callable[[CandidateRun], str | None]) -> str:
        return ", ".join(sorted({v for r in rows if (v := read(r)) is not None})) or "-"

    return (
        f"{len(rows)} run(s) over {_nights(rows)} night(s) (nightly batches) on {_dates(rows)} UTC date(s); "
        f"hosts {values(lambda r: r['host'])}; "
        f"GPUs {values(_gpu)}; engines {values(lambda r: r['engine_label'] or r['engine_name'])}; "
        f"hardware {values(lambda r: r['hardware_key'])}; "
        f"driver {values(lambda r: r['driver_version'])}"
    )


_LevelSide = tuple[SideFigures, np.ndarray, tuple[float, float]]
_SideKey = tuple[str, tuple[str, ...]]  # a side ("A" or "B") and its runs at one level (one configuration)


def _side_key(side: str, rows: Sequence[CandidateRun]) -> _SideKey:
    return side, tuple(r["run_id"] for r in rows)


def _side_figures(
    con: duckdb.DuckDBPyConnection, pairs: Sequence[tuple[int, list[CandidateRun], list[CandidateRun], object]]
) -> dict[_SideKey, SideFigures]:
    """The night-weighted figures of every side of every pair (``_pairs``), in one query
    (candidates.night_weighted_sides)."""
    sides: dict[_SideKey, list[CandidateRun]] = {}
    for _, a_level, b_level, _ in pairs:
        sides.setdefault(_side_key("A", a_level), a_level)
        sides.setdefault(_side_key("B", b_level), b_level)
    return dict(zip(sides, night_weighted_sides(con, list(sides.values())), strict=True))


def _level_side(
    con: duckdb.DuckDBPyConnection,
    side: str,
    rows: list[CandidateRun],
    opts: CompareOptions,
    rng: np.random.Generator,
    draws: NightDraws,
    known: dict[str, RunSample],
    judged: bool,
    memo: dict[_SideKey, _LevelSide],
    figures: Mapping[_SideKey, SideFigures],
) -> _LevelSide:
    """One side's runs at one level (one configuration): night-weighted figures (``figures``: every side's, read at
    once by ``_side_figures``), bootstrap replicates of its tokens per USD, goodput (fraction, USD per 1M; NaN when
    nothing is judged). Computed on first use, in the order the pairs ask (so a side with one configuration draws
    exactly as before), then taken from ``memo``."""
    key = _side_key(side, rows)
    found = memo.get(key)
    if found is None:
        counted = token_count(opts.tokens)
        weighted = figures[key]
        reps = bootstrap_efficiency(samples_of(con, rows, counted, known), opts.resamples, rng, draws)
        good = goodput_of(con, [r["run_id"] for r in rows], opts.basis) if judged else (math.nan, math.nan)
        found = memo[key] = (weighted, reps, good)
    return found


def _stratum(
    con: duckdb.DuckDBPyConnection,
    level: int,
    a_rows: list[CandidateRun],
    b_rows: list[CandidateRun],
    opts: CompareOptions,
    rng: np.random.Generator,
    draws: tuple[NightDraws, NightDraws],
    known: dict[str, RunSample],
    judged: bool,
    memo: dict[_SideKey, _LevelSide],
    figures: Mapping[_SideKey, SideFigures],
) -> tuple[Stratum, np.ndarray]:
    """A level's comparison. ``known``: the runs' samples (candidates.samples_of), loaded for every level at once;
    ``judged``: whether any compared run has an SLO (else no level's goodput is read); ``memo``: each side's figures
    of a configuration at a level, computed once however many pairs it is in (a side with several configurations);
    ``figures``: every side's night-weighted figures (``_side_figures``)."""
    counted = token_count(opts.tokens)
    a, a_reps, a_good = _level_side(con, "A", a_rows, opts, rng, draws[0], known, judged, memo, figures)
    b, b_reps, b_good = _level_side(con, "B", b_rows, opts, rng, draws[1], known, judged, memo, figures)
    a_eff, b_eff = a.tokens_per_usd(counted), b.tokens_per_usd(counted)
    reps = a_reps / b_reps
    lo, hi = percentile_interval(reps, opts.confidence)
    stratum = Stratum(
        concurrency=level,
        a_runs=len(a_rows),
        b_runs=len(b_rows),
        a_nights=_nights(a_rows),
        b_nights=_nights(b_rows),
        a_tokens_per_usd=a_eff,
        b_tokens_per_usd=b_eff,
        a_tok_s=a.tok_s(counted),
        b_tok_s=b.tok_s(counted),
        a_usd_month=a.total_usd_month,
        b_usd_month=b.total_usd_month,
        ratio=a_eff / b_eff,
        lo=lo,
        hi=hi,
        terms=_terms(a, b, a_eff, b_eff),
        verdict=verdict(opts.claim, lo, hi) if opts.claim is not None else None,
        a_good_fraction=a_good[0],
        b_good_fraction=b_good[0],
        a_good_usd_per_m=a_good[1],
        b_good_usd_per_m=b_good[1],
        a_downtime_usd_per_m=usd_per_m_term(a_eff, a.downtime_usd_month, a.total_usd_month),
        b_downtime_usd_per_m=usd_per_m_term(b_eff, b.downtime_usd_month, b.total_usd_month),
        a_gco2e_per_m_output_tokens=a.gco2e_per_m_output_tokens,
        b_gco2e_per_m_output_tokens=b.gco2e_per_m_output_tokens,
    )
    return stratum, reps


def _checked(options: CompareOptions) -> CompareOptions:
    """``options`` when every value is valid; a ConfigError naming the first bad one otherwise."""
    o = options
    counted = token_count(o.tokens)
    if not 0 < o.confidence < 1 or o.resamples < 100:
        raise ConfigError(f"confidence must lie in (0, 1) and resamples be >= 100, got {o.confidence}, {o.resamples}")
    if o.claim is not None and not (math.isfinite(o.claim) and o.claim > 0):
        raise ConfigError(f"--claim must be a positive ratio, got {o.claim}")
    if not (math.isfinite(o.shape_tolerance) and o.shape_tolerance >= 0):
        raise ConfigError(f"--shape-tolerance must be a fraction >= 0, got {o.shape_tolerance}")
    for target in o.interactivity or ():
        if not (math.isfinite(target) and target > 0):
            raise ConfigError(f"--interactivity target {target}: must be a positive number of tok/s per user")
    if o.interactivity is not None and counted != "output":
        raise ConfigError("--tokens total with --interactivity: the frontier prices output tokens (valid: output)")
    claim_thresholds(o.claim_rules)
    check_quantile(o.interactivity_quantile)
    return o


_DEFAULT = CompareOptions()
# a store of at most this many runs: compare_with_operations freezes the per-run views as they are defined (connect's
# ``freeze``), which saves binding and planning their trees again in every query; over more runs computing every run's
# figures costs more than it saves (docs/dev/performance.md#compare-no-freeze, #freeze-as-defined)
FREEZE_MAX_RUNS = 512
# what it freezes there: FROZEN_VIEWS, and first view tco_scenarios, which cost_basis and tco both read: computed once,
# not once for each, and those two bind a table, not its tree (docs/dev/performance.md#freeze-scenarios)
COMPARE_FROZEN = ("tco_scenarios", *FROZEN_VIEWS)


def compare_on(con: duckdb.DuckDBPyConnection, a: str, b: str, options: CompareOptions = _DEFAULT) -> Comparison:
    """Compare selection ``a`` with ``b`` over an open connection (see the module docstring)."""
    return _compare(con, parse_selection(a, "--a"), parse_selection(b, "--b"), _checked(options))


# the views and macros compare's queries (and tasks/analysis/history.py's, for the flagged runs) read; connect
# defines these and what they build on only (faster to connect than every view: docs/dev/performance.md#view-binding).
# A rented basis reads view tco too (macro candidate_runs); an owned one reads its columns from cost_basis (tco is
# not computed there; the macro names it, so it is bound). The frontier's points come from view frontier_points,
# not frontier (its pareto flag, unread). View goodput is read by macro side_goodput alone, defined when called
# (candidates.CANDIDATE_MACROS_WHEN_CALLED)
COMPARE_VIEWS = (
    "cost_basis",
    "night_weighted",
    "night_weighted_mean",
    "request_metrics",
    "run_statistics",
    "run_summary",
    "run_shape",
    "slo_targets",
    "trend_runs",
    "trend_series",
    "shape_mismatches",
    "run_setups",
    *FRONTIER_MACROS,
    *HISTORY_MACROS,
    *CANDIDATE_MACROS,
    *CLAIM_MACROS,
)


def compare_views(basis: CostBasis) -> tuple[str, ...]:
    """The views a comparison on ``basis`` reads (COMPARE_VIEWS, and tco off the owned basis)."""
    return COMPARE_VIEWS if basis.owned else (*COMPARE_VIEWS, "tco")


def compare(
    store: StoreRef,
    prices: PriceTable,
    a: str,
    b: str,
    options: CompareOptions = _DEFAULT,
    snapshot: int | None = None,
) -> Comparison:
    """compare_on over the store (at ``snapshot``, default the newest); QueryError when refused or a selection is
    empty, ConfigError on bad input."""
    opts = _checked(options)  # bad arguments fail before the store is opened
    sel_a, sel_b = parse_selection(a, "--a"), parse_selection(b, "--b")
    with collection_paused():
        con = connect(store, prices, snapshot=snapshot, needs=compare_views(opts.basis))
        try:
            return _compare_store(con, sel_a, sel_b, opts)
        finally:
            con.close()


def compare_with_operations(
    store: StoreRef,
    prices: PriceTable,
    a: str,
    b: str,
    options: CompareOptions = _DEFAULT,
    snapshot: int | None = None,
    adaptation: Adaptation = "assumed",
) -> tuple[Comparison, Operations]:
    """compare, and the operations views' rows that `tcobench compare` shows beside it (``operations_of``), over one
    connection: the store is opened, checked and its views defined once. ``adaptation`` 'measured': the comparison
    prices each platform's measured adaptation days (``with_measured_adaptation``), as compare over such a price
    table does."""
    opts = _checked(options)  # bad arguments fail before the store is opened
    sel_a, sel_b = parse_selection(a, "--a"), parse_selection(b, "--b")
    with collection_paused():
        con = connect(
            store,
            prices,
            snapshot=snapshot,
            needs={*compare_views(opts.basis), *OPERATIONS_VIEWS},
            freeze=COMPARE_FROZEN if adaptation != "measured" else (),
            freeze_max_runs=FREEZE_MAX_RUNS,
        )
        try:
            ops = operations_of(con)
            if adaptation == "measured":
                register_prices(con, with_measured_adaptation(prices, ops.adaptation))
            return _compare_store(con, sel_a, sel_b, opts), ops
        finally:
            con.close()


def _compare_store(
    con: duckdb.DuckDBPyConnection, sel_a: Selection, sel_b: Selection, opts: CompareOptions
) -> Comparison:
    """The comparison over a connection made by ``connect``, naming the snapshot it read."""
    # no freeze_views: the connection reads one snapshot already, and compare's queries read only the dates its
    # selections allow, so computing every run's tco and cost_basis first cost more than it saved
    # (docs/dev/performance.md#compare-no-freeze); on a small store compare_with_operations' connection freezes them
    # as they are defined (FREEZE_MAX_RUNS)
    with contextlib.closing(con.cursor()) as frontier_con:
        return replace(_compare(con, sel_a, sel_b, opts, frontier_con), snapshot=describe_snapshot(con))


def _sides(
    rows: list[CandidateRun],
    sel_a: Selection,
    sel_b: Selection,
    opts: CompareOptions,
    need_levels: bool = True,
    left_out: Callable[[], Sequence[Mapping[str, object]]] | None = None,
) -> tuple[list[CandidateRun], list[CandidateRun], list[str], list[str]]:
    """A's and B's runs at the concurrency levels both have, the refused differences and the notes so far; with
    ``need_levels`` False, no level in common gives no runs and a note (the sides are compared on a frontier).
    ``left_out``: the stored runs ``rows`` leaves out, for the message of a side that matches none (pick)."""
    a_rows, b_rows = pick(rows, sel_a, "A", left_out), pick(rows, sel_b, "B", left_out)
    both = {r["run_id"] for r in a_rows} & {r["run_id"] for r in b_rows}
    if both:
        raise QueryError(f"selections A and B share {len(both)} run(s), e.g. {sorted(both)[0]}: make them disjoint")
    a_levels, b_levels = {r["concurrency"] for r in a_rows}, {r["concurrency"] for r in b_rows}
    levels = a_levels & b_levels
    if not levels and not need_levels:
        return (
            [],
            [],
            [],
            [
                f"no concurrency level in common (A {sorted(a_levels)}, B {sorted(b_levels)}): "
                "compared at equal interactivity only"
            ],
        )
    if not levels:
        raise QueryError(
            f"no concurrency level in common: A has {sorted(a_levels)}, B has {sorted(b_levels)}; "
            "runs are compared at equal concurrency"
        )
    a_rows = [r for r in a_rows if r["concurrency"] in levels]
    b_rows = [r for r in b_rows if r["concurrency"] in levels]
    diffs = comparison_differences(a_rows, b_rows)
    shapes = shape_differences(a_rows, b_rows, opts.shape_tolerance)
    if diffs and not opts.allow_different:
        raise QueryError(
            "refused: the selections differ in what was measured: "
            + "; ".join(diffs)
            + " (compare like with like, or pass --allow-different to compare anyway)"
        )
    if shapes and not opts.allow_different:
        raise QueryError(
            f"refused: the achieved workload shapes differ by more than {opts.shape_tolerance:.0%}: "
            + "; ".join(shapes)
            + " (the servers counted different prompt or answer lengths; pass --shape-tolerance or "
            "--allow-different to compare anyway)"
        )
    diffs += shapes
    notes = [f"concurrency {c} only in A: not compared" for c in sorted(a_levels - b_levels)]
    notes += [f"concurrency {c} only in B: not compared" for c in sorted(b_levels - a_levels)]
    a_rows, b_rows = priced(a_rows, "A", opts.basis, notes), priced(b_rows, "B", opts.basis, notes)
    powered = [{"measured" if r["energy_valid"] else "price-table estimate" for r in rows} for rows in (a_rows, b_rows)]
    if opts.basis.owned and powered[0] != powered[1]:
        notes.append(
            f"power basis differs: A {' + '.join(sorted(powered[0]))}, B {' + '.join(sorted(powered[1]))} "
            "(measured device watts leave out the rest of the host; the estimate is all-in)"
        )
    notes += _saturation_notes(a_rows, b_rows)
    notes += _source_notes(a_rows, b_rows)
    return a_rows, b_rows, diffs, notes


def _source_notes(a_rows: Sequence[CandidateRun], b_rows: Sequence[CandidateRun]) -> list[str]:
    """One note when the compared runs mix imported (`tcobench import`) and measured ones: where each comes from."""
    sources = {side: {r["source"] or "measured" for r in rows} for side, rows in (("A", a_rows), ("B", b_rows))}
    every = set().union(*sources.values())
    if "measured" not in every or len(every) == 1:
        return []
    said = "; ".join(f"{side} {' + '.join(sorted(found))}" for side, found in sources.items())
    return [
        f"mixes imported and measured runs ({said}): imported figures are the other tool's own timings, with no "
        "telemetry and nothing tcobench checked about the setup (see the claim-grade stamp)"
    ]


def _saturation_notes(a_rows: list[CandidateRun], b_rows: list[CandidateRun]) -> list[str]:
    """A warning per side with runs whose client was saturated: their rates and latencies understate the engine."""
    notes = []
    for side, rows in (("A", a_rows), ("B", b_rows)):
        flagged = [r for r in rows if r["client_saturated"]]
        if flagged:
            levels = ", ".join(str(c) for c in sorted({r["concurrency"] for r in flagged}))
            notes.append(
                f"WARNING: client saturated in {len(flagged)} of {side}'s {len(rows)} runs (concurrency "
                f"{levels}): the load generator was a limit there, so its figures understate the engine; "
                "re-measure with more --client-procs"
            )
    return notes


def _flagged(con: duckdb.DuckDBPyConnection, sides: dict[str, list[CandidateRun]], exclude: bool) -> list[FlaggedRun]:
    """The runs of each side that `tcobench history` (default rules) flags, marked excluded when ``exclude``."""
    wanted = {r["run_id"]: (side, r) for side, rows in sides.items() for r in rows}
    found = []
    for series in detect_changes(con, runs=list(wanted), costs=False, flagged_only=True):  # their series only
        for point in series.points:
            if point.run_id not in wanted or not point.flagged:
                continue
            side, row = wanted[point.run_id]
            changes = tuple(
                f"{c.metric} {c.change_pct:+.1f}% ({'better' if c.better else 'worse'})"
                for c in point.changes
                if c.flagged
            )
            worse = any(c.flagged and not c.better for c in point.changes)
            found.append(
                FlaggedRun(side, point.run_id, row["batch_id"], row["date"], series.key, changes, worse, exclude)
            )
    return sorted(found, key=lambda f: (f.side, f.date, f.run_id))


def _shape_notes(con: duckdb.DuckDBPyConnection, sides: dict[str, list[CandidateRun]]) -> list[str]:
    """Each side's asked-vs-served shape mismatches (view run_shape), one note per side and cause, with its runs."""
    side_of = {r["run_id"]: side for side, rows in sides.items() for r in rows}
    if not side_of:
        return []
    found = con.execute(f"SELECT * FROM shape_mismatches(ids := {IDS})", {"ids": id_list(side_of)}).fetchall()
    grouped: dict[tuple[str, str], list[str]] = {}
    for run_id, note in found:
        grouped.setdefault((side_of[run_id], str(note)), []).append(run_id[:8])
    return [
        f"shape_mismatch on {side} ({len(ids)} run(s): {', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''}): {note}"
        for (side, note), ids in sorted(grouped.items())
    ]


def _without_flagged(
    rows: list[CandidateRun], flagged: Sequence[FlaggedRun], side: str, notes: list[str]
) -> list[CandidateRun]:
    """The rows less the flagged runs of this side; a QueryError when nothing is left."""
    gone = {f.run_id for f in flagged if f.side == side}
    kept = [r for r in rows if r["run_id"] not in gone]
    if gone and not kept:
        raise QueryError(f"selection {side}: every run is flagged by `tcobench history`; nothing left to compare")
    if gone:
        notes.append(f"{len(gone)} flagged run(s) of {side} left out (--exclude-flagged)")
    return kept


def _compare(
    con: duckdb.DuckDBPyConnection,
    sel_a: Selection,
    sel_b: Selection,
    opts: CompareOptions,
    frontier_con: duckdb.DuckDBPyConnection | None = None,
) -> Comparison:
    """The comparison over ``con``. ``frontier_con``: a cursor of ``con`` on which the comparison at equal
    interactivity is made on a second thread while this one compares per concurrency level (the two draw from
    streams of their own: the same numbers either way); None: one after the other."""
    loaded = load_selected(con, opts.basis, sel_a, sel_b)
    scored = [r for r in loaded if parse_accuracy_name(r["workload"])]  # accuracy runs: judged, not priced
    runs = [r for r in loaded if not parse_accuracy_name(r["workload"])]
    if frontier_con is None or not opts.frontier:
        front = _frontier(con, runs, sel_a, sel_b, opts)
        return _joined(_at_levels(con, runs, scored, sel_a, sel_b, opts), front, sel_a, sel_b, opts)
    with ThreadPoolExecutor(1, thread_name_prefix="tcobench-frontier") as pool:
        pending = pool.submit(_frontier, frontier_con, runs, sel_a, sel_b, opts)
        try:
            levels = _at_levels(con, runs, scored, sel_a, sel_b, opts)
        except Exception:
            pending.result()  # the frontier's refusal first, as when it is made first
            raise
        except BaseException:  # interrupted: stop the frontier's query too, then go
            frontier_con.interrupt()
            with contextlib.suppress(Exception):
                pending.result()
            raise
        return _joined(levels, pending.result(), sel_a, sel_b, opts)


# the comparison per concurrency level (None: no level in common, compared at equal interactivity only), its
# notes before the frontier's and after them
_Levels = tuple[Comparison | None, list[str], list[str]]
_Front = tuple[FrontierComparison | None, tuple[list[CandidateRun], list[CandidateRun]]]


def _joined(levels: _Levels, front: _Front, sel_a: Selection, sel_b: Selection, opts: CompareOptions) -> Comparison:
    """The comparison per level and the one at equal interactivity (``_frontier``) as one."""
    (found, notes, later), (frontier, (front_a, front_b)) = levels, front
    front_notes = frontier.notes if frontier else ()
    if found is None:  # no level in common: the frontier alone
        return Comparison(
            sel_a,
            sel_b,
            opts.basis,
            token_count(opts.tokens),
            opts.confidence,
            opts.resamples,
            opts.seed,
            opts.claim,
            (),
            None,
            None,
            (),
            (*notes, *front_notes),
            _describe(front_a),
            _describe(front_b),
            frontier=frontier,
            a_hosts=_hosts(front_a),
            b_hosts=_hosts(front_b),
        )
    return replace(found, notes=(*notes, *front_notes, *later), frontier=frontier)


def _at_levels(
    con: duckdb.DuckDBPyConnection,
    runs: list[CandidateRun],
    scored: list[CandidateRun],
    sel_a: Selection,
    sel_b: Selection,
    opts: CompareOptions,
) -> _Levels:
    """The comparison per concurrency level (``_Levels``), without the frontier's part."""
    a_rows, b_rows, diffs, notes = _sides(
        runs, sel_a, sel_b, opts, need_levels=opts.interactivity is None, left_out=lambda: left_out_runs(con)
    )
    if not a_rows:  # no level in common: the frontier alone
        return None, notes, []
    flagged = _flagged(con, {"A": a_rows, "B": b_rows}, opts.exclude_flagged)
    if opts.exclude_flagged:
        a_rows, b_rows = _without_flagged(a_rows, flagged, "A", notes), _without_flagged(b_rows, flagged, "B", notes)
    levels = sorted({r["concurrency"] for r in a_rows} & {r["concurrency"] for r in b_rows})
    if not levels:
        raise QueryError("no concurrency level in common among the runs with a cost")
    rng = np.random.default_rng(opts.seed)
    # nights drawn once per side for every level: a bad night hits all its levels (bootstrap.py)
    draws = (
        night_draws((r["batch_id"] for r in a_rows), opts.resamples, rng),
        night_draws((r["batch_id"] for r in b_rows), opts.resamples, rng),
    )
    known: dict[str, RunSample] = {}
    samples_of(con, [*a_rows, *b_rows], token_count(opts.tokens), known)  # every level's requests in one query
    judged = any_slo(con, [r["run_id"] for r in (*a_rows, *b_rows)])
    strata, reps = [], []
    memo: dict[_SideKey, _LevelSide] = {}
    pairs = _pairs(levels, a_rows, b_rows, notes)
    figures = _side_figures(con, pairs)
    for level, a_level, b_level, names in pairs:
        stratum, rep = _stratum(con, level, a_level, b_level, opts, rng, draws, known, judged, memo, figures)
        stratum = replace(
            stratum,
            a_config_id=config_key(a_level[0]),
            b_config_id=config_key(b_level[0]),
            a_config=names[0],
            b_config=names[1],
        )
        strata.append(stratum)
        reps.append(rep)
        if min(stratum.a_runs, stratum.b_runs) == 1:
            notes.append(f"{stratum.where}: one run on a side, so its CI reflects request-level noise only")
    pooled, pooled_verdict = _pooled(strata, reps, opts)
    later = _shape_notes(con, {"A": a_rows, "B": b_rows})
    found = Comparison(
        sel_a,
        sel_b,
        opts.basis,
        token_count(opts.tokens),
        opts.confidence,
        opts.resamples,
        opts.seed,
        opts.claim,
        tuple(strata),
        pooled,
        pooled_verdict,
        tuple(diffs),
        (),
        _describe(a_rows),
        _describe(b_rows),
        flagged=tuple(flagged),
        claim_grade=claim_grade(
            con,
            a_rows,
            b_rows,
            claim_thresholds(opts.claim_rules),
            diffs,
            {
                "A": [r["run_id"] for r in scored if sel_a.matches(r)],
                "B": [r["run_id"] for r in scored if sel_b.matches(r)],
            },
        ),
        setup=setup_differences(con, [r["run_id"] for r in a_rows], [r["run_id"] for r in b_rows]),
        a_hosts=_hosts(a_rows),
        b_hosts=_hosts(b_rows),
    )
    return found, notes, later


def _pairs(
    levels: Sequence[int], a_rows: list[CandidateRun], b_rows: list[CandidateRun], notes: list[str]
) -> list[tuple[int, list[CandidateRun], list[CandidateRun], tuple[str | None, str | None]]]:
    """Like with like at equal concurrency: per level, one stratum per pair of serving configurations (A's, B's)
    that both have runs there (sides.config_key), never the runs of several configurations averaged together. With
    one configuration a side it is the level itself (no pair named). A level where a side has runs of several
    configurations gives one stratum per pair, and a note."""
    labels = {**config_labels(a_rows), **config_labels(b_rows)}
    several = len({config_key(r) for r in a_rows}) > 1 or len({config_key(r) for r in b_rows}) > 1
    found: list[tuple[int, list[CandidateRun], list[CandidateRun], tuple[str | None, str | None]]] = []
    for level in levels:
        sides = []
        for rows in (a_rows, b_rows):
            by_config: dict[str, list[CandidateRun]] = {}
            for r in rows:
                if r["concurrency"] == level:
                    by_config.setdefault(config_key(r), []).append(r)
            sides.append(by_config)
        for a_key in sorted(sides[0]):
            for b_key in sorted(sides[1]):
                names: tuple[str | None, str | None] = (labels[a_key], labels[b_key]) if several else (None, None)
                found.append((level, sides[0][a_key], sides[1][b_key], names))
    if several:
        notes.append(
            "a side has several serving configurations: each row of the per-concurrency table pairs one of A's with "
            "one of B's at a level both measured; runs of different configurations are never averaged together"
        )
    return found


def _frontier(
    con: duckdb.DuckDBPyConnection, runs: list[CandidateRun], sel_a: Selection, sel_b: Selection, opts: CompareOptions
) -> tuple[FrontierComparison | None, tuple[list[CandidateRun], list[CandidateRun]]]:
    """The comparison at equal interactivity (sides.py) and its sides' runs; without targets asked for, a side
    that cannot make a frontier gives None (the per-concurrency comparison stands alone), with them an error."""
    if not opts.frontier:
        return None, ([], [])
    try:
        found, a_rows, b_rows = frontier_comparison(
            con,
            runs,
            sel_a,
            sel_b,
            opts.basis,
            opts.interactivity,
            opts.allow_different,
            q=opts.interactivity_quantile,
            resamples=opts.resamples,
            seed=opts.seed,
            confidence=opts.confidence,
            claim=opts.claim,
        )
    except QueryError:
        if opts.interactivity is not None:
            raise
        return None, ([], [])
    return found, (a_rows, b_rows)


def _pooled(
    strata: list[Stratum], reps: list[np.ndarray], opts: CompareOptions
) -> tuple[tuple[float, float, float] | None, Verdict | None]:
    """Geometric mean of the ratios over concurrency levels (each level weighs the same), with its CI: per
    replicate the geometric mean of the levels' replicates, which share their draw of nights (whole nights)."""
    if len(strata) < 2:
        return None, None
    ratio = math.exp(float(np.mean([math.log(s.ratio) for s in strata])))
    lo, hi = percentile_interval(np.exp(np.log(np.vstack(reps)).mean(axis=0)), opts.confidence)
    return (ratio, lo, hi), (verdict(opts.claim, lo, hi) if opts.claim is not None else None)
