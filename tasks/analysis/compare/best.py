"""best: each platform's serving configurations ranked by cost per token at one interactivity, among those that meet
an SLO, with the bootstrap's CI, and the one to deploy (`tcobench best`).

Each configuration is read off its own frontier (interactivity.py), as compare reads a side's; its TTFT p90 and TPOT
p90 at the target are interpolated between its levels. The CI and each configuration's share of wins come from the
same replicates as compare's. Design notes: docs/dev/architecture/analysis.md#tasks-compare-best.
"""

from __future__ import annotations

import contextlib
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np

from tcobench.errors import ConfigError, QueryError
from tcobench.schemas import BestOptions, PriceTable
from tcobench.schemas.units import usd_per_m
from tcobench.tasks.analysis.compare.bootstrap import percentile_interval
from tcobench.tasks.analysis.compare.candidates import CANDIDATE_MACROS, load_selected, priced
from tcobench.tasks.analysis.compare.frontier import FRONTIER_MACROS, Frontier, RunPoint, night_mean
from tcobench.tasks.analysis.compare.interactivity import (
    ConfigCurve,
    check_quantile,
    config_curves,
    curves_at,
    replicate_curves,
)
from tcobench.tasks.analysis.compare.selection import parse_selection, pick
from tcobench.tasks.analysis.compare.sides import config_labels, side_name, side_points
from tcobench.tasks.store.query import connect, describe_snapshot
from tcobench.tasks.store.store import StoreRef

__all__ = [
    "BEST_FROZEN",
    "BEST_VIEWS",
    "BestResult",
    "Candidate",
    "PlatformBest",
    "best",
    "best_document",
    "best_on",
    "options_document",
]

# the views and macros best reads: compare's for its runs and frontier points
BEST_VIEWS = (
    "cost_basis",
    "run_summary",
    "tco",
    *FRONTIER_MACROS,
    *CANDIDATE_MACROS,
)
# computed once as connect defines it: a platform's availability (over every run of the store) is read by view
# tco_scenarios in each of best's and plan's queries, which otherwise computes it again
# (docs/dev/performance.md#plan-availability)
BEST_FROZEN = ("availability",)


@dataclass(frozen=True)
class Candidate:
    """One serving configuration at the target."""

    key: str  # "<hardware_key> <config_id>"
    label: str
    usd_per_m: float | None  # None: its frontier does not reach the target (reason)
    tok_s_per_gpu: float | None
    ci_low: float | None  # of usd_per_m
    ci_high: float | None
    ttft_p90_ms: float | None
    tpot_p90_ms: float | None
    meets_slo: bool | None  # None: no SLO asked for, or not reached
    slo_note: str | None  # which target it misses
    won: float | None  # share of the replicates reaching the target in which it is the cheapest that meets the SLO
    reason: str | None = None  # why it has no figure at the target
    replicates: tuple[float, ...] = ()  # tok/s per GPU at the target in each bootstrap replicate (NaN: not reached)
    runs: tuple[str, ...] = ()  # the run ids of its frontier's points

    @property
    def eligible(self) -> bool:
        return self.usd_per_m is not None and self.meets_slo is not False


@dataclass(frozen=True)
class PlatformBest:
    """A platform (one selection): its configurations, cheapest eligible first."""

    side: str  # "A" or "B"
    selection: str
    name: str
    candidates: tuple[Candidate, ...]

    @property
    def deploy(self) -> Candidate | None:
        """The configuration to deploy: the cheapest per token at the target among those that meet the SLO."""
        return self.candidates[0] if self.candidates and self.candidates[0].eligible else None


@dataclass(frozen=True)
class BestResult:
    options: BestOptions
    platforms: tuple[PlatformBest, ...]
    ratio: tuple[float, float, float] | None  # A's deployable best over B's: tokens per USD, with its CI
    snapshot: str = ""
    notes: tuple[str, ...] = ()


def _slo_figures(points: Sequence[RunPoint]) -> dict[str, tuple[float | None, float | None]]:
    """Per run: (TTFT p90 ms of the run, TPOT p90 ms of its frontier point: 1000 / interactivity_p90)."""
    return {p.run_id: (p.ttft_p90_ms, 1000.0 / x if (x := p.interactivity_p90) else None) for p in points}


def _at_target(
    curve: ConfigCurve, points: Sequence[RunPoint], figures: dict[str, tuple[float | None, float | None]], target: float
) -> tuple[float | None, float | None]:
    """A configuration's (TTFT p90, TPOT p90) at the target: each level's night-weighted mean, linear in the levels'
    interactivity between the two around the target (the nearest level's outside them)."""
    found = []
    for column in (0, 1):
        by_level: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for p in points:
            value = figures.get(p.run_id, (None, None))[column]
            if value is not None and math.isfinite(value):
                by_level[p.concurrency][p.night].append(value)
        pairs = sorted(
            (lv.interactivity, night_mean(by_level[lv.concurrency]))
            for lv in curve.levels
            if by_level.get(lv.concurrency) and math.isfinite(lv.interactivity)
        )
        found.append(float(np.interp(target, [x for x, _ in pairs], [y for _, y in pairs])) if pairs else None)
    return found[0], found[1]


def _slo(options: BestOptions, ttft: float | None, tpot: float | None) -> tuple[bool | None, str | None]:
    """Whether the figures meet the SLO asked for, and which target they miss (None, None: no SLO)."""
    wanted = [("TTFT p90", ttft, options.slo_ttft_ms, "ms"), ("TPOT p90", tpot, options.slo_tpot_ms, "ms")]
    asked = [(name, value, bound, unit) for name, value, bound, unit in wanted if bound is not None]
    if not asked:
        return None, None
    missed = [
        f"{name} {'unknown' if value is None else f'{value:,.1f} {unit}'} > {bound:g} {unit}"
        for name, value, bound, unit in asked
        if value is None or value > bound
    ]
    return not missed, "; ".join(missed) or None


@dataclass(frozen=True)
class _Side:
    label: str
    selection: str
    name: str
    found: list[tuple[ConfigCurve, Frontier | None, list[RunPoint]]]
    eff: np.ndarray  # configurations x replicates: tokens per USD-second at the target (NaN: not reached)
    tok: np.ndarray  # configurations x replicates: output tok/s per GPU at the target (NaN: not reached)


def _platform(side: _Side, options: BestOptions) -> tuple[PlatformBest, np.ndarray]:
    """The side's ranked candidates, and per replicate the tokens per USD-second of its cheapest eligible one."""
    target = options.interactivity
    figures = _slo_figures([p for _, _, pts in side.found for p in pts])
    rows: list[Candidate] = []
    for i, (curve, front, points) in enumerate(side.found):
        ttft, tpot = _at_target(curve, points, figures, target)
        meets, note = _slo(options, ttft, tpot)
        if front is None or not curve.covers(target):
            why = "no frontier (fewer than 2 Pareto points)" if front is None else f"measured {curve.range_text()}"
            rows.append(Candidate(curve.key, curve.label, None, None, None, None, ttft, tpot, None, None, None, why))
            continue
        (y,), (k,) = front.at(np.array([target]))
        reps = np.array([usd_per_m(x) if x > 0 else math.nan for x in side.eff[i].tolist()])  # per replicate
        finite = reps[np.isfinite(reps)]
        lo, hi = percentile_interval(finite, options.confidence) if len(finite) else (None, None)
        rows.append(
            Candidate(
                curve.key,
                curve.label,
                float(1e6 * k / y),
                float(y),
                lo,
                hi,
                ttft,
                tpot,
                meets,
                note,
                None,
                replicates=tuple(side.tok[i].tolist()),
                runs=tuple(p.run_id for p in points),
            )
        )
    eligible = np.array([c.eligible for c in rows], dtype=bool)
    eff = np.where(eligible[:, None], side.eff, np.nan) if len(rows) else np.empty((0, options.resamples))
    reached = np.isfinite(eff).any(axis=0) if len(rows) else np.zeros(options.resamples, dtype=bool)
    best = np.argmax(np.where(np.isfinite(eff), eff, -np.inf), axis=0) if len(rows) else np.array([], dtype=int)
    ranked = []
    for i, c in enumerate(rows):
        won = float((best[reached] == i).mean()) if c.eligible and reached.any() else None
        ranked.append(_with_won(c, won))
    order = sorted(ranked, key=lambda c: (not c.eligible, c.usd_per_m is None, c.usd_per_m or 0.0, c.label))
    top = np.where(reached, np.take_along_axis(eff, best[None], axis=0)[0], np.nan) if len(rows) else eff
    return PlatformBest(side.label, side.selection, side.name, tuple(order)), top


def _with_won(c: Candidate, won: float | None) -> Candidate:
    return Candidate(
        c.key,
        c.label,
        c.usd_per_m,
        c.tok_s_per_gpu,
        c.ci_low,
        c.ci_high,
        c.ttft_p90_ms,
        c.tpot_p90_ms,
        c.meets_slo,
        c.slo_note,
        won,
        c.reason,
        c.replicates,
        c.runs,
    )


def best_on(con: duckdb.DuckDBPyConnection, a: str, b: str | None, options: BestOptions) -> BestResult:
    """``best`` over an open connection."""
    check_quantile(options.interactivity_quantile)
    if options.resamples < 100 or not 0 < options.confidence < 1:
        raise ConfigError(
            f"resamples must be >= 100 and confidence in (0, 1), got {options.resamples}, {options.confidence}"
        )
    selections = [("A", parse_selection(a, "--a"))] + ([("B", parse_selection(b, "--b"))] if b is not None else [])
    runs = load_selected(con, options.basis, *(sel for _, sel in selections))
    notes: list[str] = []
    chosen = [(label, sel, priced(pick(runs, sel, label), label, options.basis, notes)) for label, sel in selections]
    point_sets = side_points(con, [(rows, label, sel.text) for label, sel, rows in chosen], options.basis)
    rng = np.random.default_rng(options.seed)
    sides = []
    target = np.array([options.interactivity])
    for (label, sel, rows), points in zip(chosen, point_sets, strict=True):
        _, found = config_curves(side_name(rows), points, options.interactivity_quantile, config_labels(rows))
        curves = replicate_curves([pts for _, _, pts in found], options.interactivity_quantile, options.resamples, rng)
        effs, toks = [], []
        for c in curves:
            y, k = curves_at(c, target)
            with np.errstate(invalid="ignore", divide="ignore"):
                effs.append((y / k)[:, 0])
            toks.append(y[:, 0])
        eff = np.stack(effs) if effs else np.empty((0, options.resamples))
        tok = np.stack(toks) if toks else np.empty((0, options.resamples))
        sides.append(_Side(label, sel.text, side_name(rows), list(found), eff, tok))
    made = [_platform(s, options) for s in sides]
    ratio = None
    if len(made) == 2 and all(p.deploy is not None for p, _ in made):
        (pa_, ra), (pb, rb) = made
        assert pa_.deploy is not None and pb.deploy is not None and pa_.deploy.usd_per_m and pb.deploy.usd_per_m
        reps = ra / rb
        finite = reps[np.isfinite(reps)]
        if len(finite):
            lo, hi = percentile_interval(finite, options.confidence)
            ratio = (pb.deploy.usd_per_m / pa_.deploy.usd_per_m, lo, hi)
    return BestResult(options, tuple(p for p, _ in made), ratio, notes=tuple(notes))


def best(
    store: StoreRef, prices: PriceTable, a: str, b: str | None, options: BestOptions, snapshot: int | None = None
) -> BestResult:
    """Each selection's configurations at ``options.interactivity``, ranked (module docstring); QueryError when a
    selection matches nothing or has no TPOT, ConfigError on bad input."""
    if not (math.isfinite(options.interactivity) and options.interactivity > 0):
        raise ConfigError(f"--interactivity {options.interactivity}: must be a positive number of tok/s per user")
    con = connect(store, prices, snapshot=snapshot, needs=BEST_VIEWS, freeze=BEST_FROZEN)
    with contextlib.closing(con):
        found = best_on(con, a, b, options)
        if not any(c.usd_per_m is not None for p in found.platforms for c in p.candidates):
            ranges = "; ".join(
                f"{p.side}: " + ", ".join(f"{c.label} {c.reason}" for c in p.candidates) for p in found.platforms
            )
            raise QueryError(
                f"{options.interactivity:g} tok/s/user is outside every configuration's frontier ({ranges}); "
                "tcobench does not extrapolate"
            )
        return BestResult(found.options, found.platforms, found.ratio, describe_snapshot(con), found.notes)


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def options_document(o: BestOptions) -> dict[str, Any]:
    """The target, SLO, basis and bootstrap settings of a `best` or `plan` document, in that order."""
    return {
        "interactivity": o.interactivity,
        "slo_ttft_ms": o.slo_ttft_ms,
        "slo_tpot_ms": o.slo_tpot_ms,
        "basis": str(o.basis),
        "confidence": o.confidence,
        "resamples": o.resamples,
        "seed": o.seed,
    }


def best_document(result: BestResult) -> dict[str, Any]:
    """The ranking as one JSON-ready document (`tcobench best --format json`)."""
    o = result.options
    return {
        "snapshot": result.snapshot,
        **options_document(o),
        "platforms": [
            {
                "side": p.side,
                "selection": p.selection,
                "name": p.name,
                "deploy": None if p.deploy is None else {"config_id": p.deploy.key, "label": p.deploy.label},
                "configurations": [
                    {
                        "rank": rank,
                        "config_id": c.key,
                        "label": c.label,
                        "usd_per_m": _num(c.usd_per_m),
                        "tok_s_per_gpu": _num(c.tok_s_per_gpu),
                        "ci_low": _num(c.ci_low),
                        "ci_high": _num(c.ci_high),
                        "ttft_p90_ms": _num(c.ttft_p90_ms),
                        "tpot_p90_ms": _num(c.tpot_p90_ms),
                        "meets_slo": c.meets_slo,
                        "slo_note": c.slo_note,
                        "won": _num(c.won),
                        "reason": c.reason,
                    }
                    for rank, c in enumerate(p.candidates, 1)
                ],
            }
            for p in result.platforms
        ],
        "ratio": None
        if result.ratio is None
        else {"ratio": result.ratio[0], "ci_low": result.ratio[1], "ci_high": result.ratio[2]},
        "notes": list(result.notes),
    }
