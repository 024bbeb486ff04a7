"""plan: a capacity plan for a recorded trace (`tcobench plan`): how many GPUs (and whole hosts) of each platform
serve the trace's per-minute output token rate at one interactivity, the headroom at its busiest minute, and what
the fleet costs per month on every cost basis, each figure with the frontier bootstrap's CI.

Each platform deploys best's configuration (best.py: the cheapest per token at the target on the chosen basis among
those that meet the SLO), read off its own frontier, never extrapolated. The trace's rates come from table macro
trace_profile (profile_trace), the fleet and its cost from table macro capacity_plan over the TCO's views; the
replicates are the same as best's. The verdict: A's monthly cost over B's on the chosen basis. A platform with
replays of the trace that met the target is sized from them instead (macro replay_capacity; ``source`` says so).
Design notes: docs/dev/architecture/analysis.md#tasks-compare-plan.
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
from tcobench.schemas import PlanOptions, PriceTable, TraceConfig, TraceStatsRecord
from tcobench.tasks.analysis.compare.best import (
    BEST_FROZEN,
    BEST_VIEWS,
    BestResult,
    PlatformBest,
    best_on,
    options_document,
)
from tcobench.tasks.analysis.compare.bootstrap import percentile_interval
from tcobench.tasks.analysis.compare.candidates import load_selected
from tcobench.tasks.analysis.compare.selection import parse_selection
from tcobench.tasks.store.query import connect, describe_snapshot
from tcobench.tasks.store.rows import IDS, id_list, listed
from tcobench.tasks.store.store import StoreRef
from tcobench.tasks.workload.keys import replay_set_key, sha256_json
from tcobench.tasks.workload.profile_trace import profile_trace

__all__ = [
    "FROM_FRONTIER",
    "FROM_REPLAYS",
    "PLAN_VIEWS",
    "REPLAY_NO_CI",
    "BasisCost",
    "Figure",
    "PlanResult",
    "PlatformPlan",
    "plan",
    "plan_document",
    "plan_on",
]

PLAN_VIEWS = (*BEST_VIEWS, "capacity_plan", "replay_sets", "replay_capacity")
_PLAN_SQL = (
    f"SELECT * FROM capacity_plan({IDS}, {listed('fleets')}, CAST({listed('per_gpu')} AS DOUBLE[]), "
    f"{listed('draw_fleets')}, $need, $peak)"
)
_REPLAY_SETS_SQL = "SELECT * FROM replay_sets()"
_REPLAY_SQL = (
    f"SELECT * FROM replay_capacity({IDS}, {listed('hashes')}, $target, CAST($ttft AS DOUBLE), "
    "CAST($tpot AS DOUBLE), $peak)"
)
_REPLAY_QUANTILE = 0.5  # replay_capacity judges a replay's interactivity at its median TPOT
FROM_FRONTIER = "frontier"  # PlatformPlan.source: read off the configuration's frontier (with the bootstrap's CI)
FROM_REPLAYS = "replayed runs"  # sized from replays of the trace itself (macro replay_capacity)
REPLAY_NO_CI = (
    "no CI: a replay is one measurement of the whole trace at one time scale, which met the target or did not; "
    "tcobench draws no replicates of it"
)


@dataclass(frozen=True)
class Figure:
    """A figure of the plan: the frontier's value and the bootstrap's percentile interval (None: no replicate)."""

    value: float
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class BasisCost:
    """The fleet's monthly cost on one cost basis."""

    basis: str
    replica_usd_month: float  # one instance's hardware per month (view cost_basis.total_usd_month, averaged)
    usd_month: Figure


@dataclass(frozen=True)
class PlatformPlan:
    """One platform's fleet for the trace; ``reason`` set (and no fleet) when no configuration can be deployed."""

    side: str
    selection: str
    name: str
    config: str | None  # the deployed configuration's label
    config_id: str | None
    tok_s_per_gpu: Figure | None
    replica_gpus: int | None
    host_gpus: int | None
    replicas: Figure | None
    gpus: Figure | None
    hosts: Figure | None
    headroom_at_peak: Figure | None
    costs: tuple[BasisCost, ...] = ()
    reason: str | None = None
    source: str = FROM_FRONTIER  # FROM_FRONTIER or FROM_REPLAYS: where the throughput per GPU came from
    time_scale: float | None = None  # FROM_REPLAYS: the time scale of the replay the capacity point is
    ci_note: str | None = None  # why the figures have no interval (REPLAY_NO_CI)

    def cost(self, basis: str) -> BasisCost | None:
        return next((c for c in self.costs if c.basis == basis), None)


@dataclass(frozen=True)
class PlanResult:
    options: PlanOptions
    profile: TraceStatsRecord
    need_tok_s: float  # the output tok/s the fleet is sized for (the per-minute rate at options.at, / 60)
    peak_tok_s: float
    platforms: tuple[PlatformPlan, ...]
    ratio: Figure | None  # A's monthly cost over B's on options.basis
    snapshot: str = ""
    notes: tuple[str, ...] = ()


def _rates(profile: TraceStatsRecord, options: PlanOptions) -> tuple[float, float]:
    """(output tok/s to serve, output tok/s of the busiest minute); a ConfigError when the trace records no output
    length."""
    per_minute = getattr(profile, f"output_rate_{options.at}")
    if per_minute is None or profile.output_rate_peak is None or not profile.output_rate_peak > 0:
        raise ConfigError(
            f"trace {profile.path}: no output lengths recorded (format {profile.format}); a plan needs them "
            "(mooncake output_length, azure GeneratedTokens, tcobench output_tokens)"
        )
    return per_minute / 60.0, profile.output_rate_peak / 60.0


def _figure(values: dict[int, float | None], confidence: float) -> Figure | None:
    """Draw 0's value with the percentile interval of the other draws (None: draw 0 has none)."""
    value = values.get(0)
    if value is None or not math.isfinite(value):
        return None
    reps = np.array([v for d, v in values.items() if d > 0 and v is not None], dtype=float)
    reps = reps[np.isfinite(reps)]
    lo, hi = percentile_interval(reps, confidence) if len(reps) else (None, None)
    return Figure(float(value), lo, hi)


def _undeployable(found: PlatformBest, o: PlanOptions) -> PlatformPlan | None:
    """The side's plan without a fleet (and why) when it has no configuration to deploy at the target; None when it
    has one."""
    deploy = found.deploy
    if deploy is not None and deploy.tok_s_per_gpu is not None:
        return None
    why = (
        f"no configuration meets the SLO at {o.interactivity:g} tok/s/user"
        if any(c.usd_per_m is not None for c in found.candidates)
        else "outside its frontier ("
        + ", ".join(f"{c.label}: {c.reason}" for c in found.candidates)
        + "); tcobench does not extrapolate"
    )
    return PlatformPlan(
        found.side, found.selection, found.name, None, None, None, None, None, None, None, None, None, reason=why
    )


@dataclass(frozen=True)
class _Fleet:
    """A configuration to size: of ``found``'s side, its (key, label), its runs and each draw's tok/s per GPU;
    ``replay``: the time scale of the replay it was measured by (the source is then FROM_REPLAYS, one draw, no CI)."""

    found: PlatformBest
    config: tuple[str, str]
    runs: Sequence[str]
    per_gpu: Sequence[float]
    replay: float | None = None


def _deployed(found: PlatformBest) -> _Fleet:
    """The fleet of the side's configuration to deploy (best's), at its frontier's figure and replicates."""
    deploy = found.deploy
    assert deploy is not None and deploy.tok_s_per_gpu is not None
    return _Fleet(found, (deploy.key, deploy.label), deploy.runs, (deploy.tok_s_per_gpu, *deploy.replicates))


def _fleets(
    con: duckdb.DuckDBPyConnection, wanted: Sequence[_Fleet], need: float, peak: float, o: PlanOptions
) -> list[tuple[PlatformPlan, dict[str, dict[int, float]]]]:
    """Each configuration's fleet at each draw's tok/s per GPU, and per basis each draw's monthly cost: all of them
    in one call of table macro capacity_plan (the TCO's views computed once)."""
    if not wanted:
        return []
    params = {
        "ids": id_list(run for f in wanted for run in f.runs),
        "fleets": id_list(str(i) for i, f in enumerate(wanted) for _ in f.runs),
        "per_gpu": id_list(repr(v) for f in wanted for v in f.per_gpu),  # 'nan' is NaN
        "draw_fleets": id_list(str(i) for i, f in enumerate(wanted) for _ in f.per_gpu),
        "need": need,
        "peak": peak,
    }
    rows: list[list[tuple[Any, ...]]] = [[] for _ in wanted]
    for fleet, *row in con.execute(_PLAN_SQL, params).fetchall():
        rows[int(fleet)].append(tuple(row))
    return [_fleet(f, mine, o) for f, mine in zip(wanted, rows, strict=True)]


def _fleet(
    wanted: _Fleet, rows: Sequence[tuple[Any, ...]], o: PlanOptions
) -> tuple[PlatformPlan, dict[str, dict[int, float]]]:
    """The configuration's plan from its rows of table macro capacity_plan, and per basis each draw's monthly
    cost."""
    found, config, replay = wanted.found, wanted.config, wanted.replay
    names = ("tok_s_per_gpu", "replicas", "gpus", "hosts", "headroom_at_peak")
    by_basis: dict[str, dict[str, dict[int, float | None]]] = defaultdict(lambda: defaultdict(dict))
    shape: dict[str, Any] = {}
    prices: dict[str, float] = {}
    for basis, draw, per_gpu, replica_gpus, host_gpus, replicas, gpus, hosts, _, headroom, replica, usd in rows:
        for name, value in zip(names, (per_gpu, replicas, gpus, hosts, headroom), strict=True):
            by_basis[basis][name][draw] = value
        by_basis[basis]["usd_month"][draw] = usd
        shape = {"replica_gpus": replica_gpus, "host_gpus": host_gpus}
        prices[basis] = replica
    if not rows:
        raise QueryError(f"{found.side}: the runs of {config[1]} have no price on any basis")
    first = by_basis[next(iter(by_basis))]
    fig = {name: _figure(first[name], o.confidence) for name in names}
    costs = tuple(
        BasisCost(basis, prices[basis], cost)
        for basis in sorted(by_basis, key=lambda b: (b != str(o.basis), b))
        if (cost := _figure(by_basis[basis]["usd_month"], o.confidence)) is not None
    )
    made = PlatformPlan(
        found.side,
        found.selection,
        found.name,
        config[1],
        config[0],
        fig["tok_s_per_gpu"],
        shape.get("replica_gpus"),
        shape.get("host_gpus"),
        fig["replicas"],
        fig["gpus"],
        fig["hosts"],
        fig["headroom_at_peak"],
        costs,
        source=FROM_FRONTIER if replay is None else FROM_REPLAYS,
        time_scale=replay,
        ci_note=None if replay is None else REPLAY_NO_CI,
    )
    return made, {b: {d: v for d, v in by_basis[b]["usd_month"].items() if v is not None} for b in by_basis}


def _ratio(a: dict[int, float], b: dict[int, float], confidence: float) -> Figure | None:
    """A's monthly cost over B's: draw 0's, with the interval of the draws both have."""
    if not a.get(0) or not b.get(0):
        return None
    reps = np.array([a[d] / b[d] for d in a if d > 0 and d in b and b[d] > 0], dtype=float)
    lo, hi = percentile_interval(reps, confidence) if len(reps) else (None, None)
    return Figure(a[0] / b[0], lo, hi)


@dataclass(frozen=True)
class _Replayed:
    """A configuration's replays of the trace (a row of table macro replay_capacity)."""

    config: str
    runs: tuple[str, ...]
    replays: int
    met: int
    replica_gpus: int
    time_scale: float | None
    tok_s_per_gpu: float | None


def _replayed(
    con: duckdb.DuckDBPyConnection, profile: TraceStatsRecord, found: BestResult, peak: float, o: PlanOptions
) -> dict[str, list[_Replayed]]:
    """Per side, its configurations' replays of the whole trace file (runs.prompt_set_hash of the file's sha256, no
    window, the run's seed: tasks/workload/keys.replay_set_key); the platforms' runs are read only when the store
    holds such a replay."""
    stored = con.execute(_REPLAY_SETS_SQL).fetchall()
    hashes = sorted({h for h, seed in stored if h == sha256_json(replay_set_key(profile.sha256, None, seed))})
    if not hashes:
        return {}
    selections = {p.side: parse_selection(p.selection, f"--{p.side.lower()}") for p in found.platforms}
    runs = load_selected(con, o.basis, *selections.values())
    made: dict[str, list[_Replayed]] = {}
    for p in found.platforms:
        ids = [r["run_id"] for r in runs if selections[p.side].matches(r)]
        params = {
            "ids": id_list(ids),
            "hashes": id_list(hashes),
            "target": o.interactivity,
            "ttft": o.slo_ttft_ms,
            "tpot": o.slo_tpot_ms,
            "peak": peak,
        }
        made[p.side] = [
            _Replayed(c, tuple(r), n, m, g, t, y) for c, r, n, m, g, t, y in con.execute(_REPLAY_SQL, params).fetchall()
        ]
    return made


def _from_replays(
    con: duckdb.DuckDBPyConnection,
    found: PlatformBest,
    replayed: Sequence[_Replayed],
    need: float,
    peak: float,
    o: PlanOptions,
    notes: list[str],
) -> tuple[PlatformPlan, dict[str, dict[int, float]]] | None:
    """The side's fleet from its replays of the trace: of the configurations with a capacity point, the one whose
    fleet costs least per month on the chosen basis; None (and a note) when no replay met the target."""
    if not replayed:
        return None
    labels = {c.key: c.label for c in found.candidates}
    wanted = [
        _Fleet(found, (r.config, labels.get(r.config, r.config)), r.runs, (r.tok_s_per_gpu,), r.time_scale)
        for r in replayed
        if r.tok_s_per_gpu is not None and r.time_scale is not None
    ]
    fleets = _fleets(con, wanted, need, peak, o)
    if not fleets:
        slo = "" if o.slo_ttft_ms is None and o.slo_tpot_ms is None else " within the SLO"
        n = sum(r.replays for r in replayed)
        notes.append(
            f"{found.side}: {n} replayed run(s) of this trace, none met {o.interactivity:g} tok/s/user{slo} (or a "
            "slower replay of the same configuration did not): sized from the frontier"
        )
        return None
    basis = str(o.basis)

    def monthly(fleet: tuple[PlatformPlan, dict[str, dict[int, float]]]) -> tuple[bool, float]:
        cost = fleet[1].get(basis, {}).get(0)
        return cost is None, cost or 0.0

    chosen = min(fleets, key=monthly)
    plan_, _ = chosen
    notes.append(
        f"{found.side}: sized from replayed runs: {plan_.config} met {o.interactivity:g} tok/s/user replaying the "
        f"trace at time scale {plan_.time_scale:g} on {plan_.replica_gpus} GPU(s); {REPLAY_NO_CI}"
    )
    return chosen


def plan_on(
    con: duckdb.DuckDBPyConnection, profile: TraceStatsRecord, a: str, b: str | None, options: PlanOptions
) -> PlanResult:
    """``plan`` over an open connection and a trace's profile."""
    need, peak = _rates(profile, options)
    found = best_on(con, a, b, options)
    notes = list(found.notes)
    replayed = _replayed(con, profile, found, peak, options)
    if replayed and options.interactivity_quantile != _REPLAY_QUANTILE:
        notes.append(
            f"replayed runs of this trace are judged at their median TPOT (run_summary.interactivity); with "
            f"--interactivity-quantile {options.interactivity_quantile:g} they are not used: sized from the frontier"
        )
        replayed = {}
    from_replays = [
        _from_replays(con, p, replayed.get(p.side, ()), need, peak, options, notes) for p in found.platforms
    ]
    if all(r is None for r in from_replays) and not any(
        c.usd_per_m is not None for p in found.platforms for c in p.candidates
    ):
        ranges = "; ".join(
            f"{p.side}: " + ", ".join(f"{c.label} {c.reason}" for c in p.candidates) for p in found.platforms
        )
        raise QueryError(
            f"--interactivity {options.interactivity:g} tok/s/user is outside every configuration's frontier "
            f"({ranges}){' and no replay of the trace met it' if replayed else ''}; tcobench does not extrapolate, "
            "so it cannot plan this traffic there"
        )
    # the sides sized from their frontiers, in one call of capacity_plan
    empty = [
        _undeployable(p, options) if r is None else None for p, r in zip(found.platforms, from_replays, strict=True)
    ]
    todo = [
        _deployed(p) for p, r, e in zip(found.platforms, from_replays, empty, strict=True) if r is None and e is None
    ]
    sized = iter(_fleets(con, todo, need, peak, options))
    made = [
        r if r is not None else (e, {}) if e is not None else next(sized)
        for r, e in zip(from_replays, empty, strict=True)
    ]
    ratio = None
    basis = str(options.basis)
    if len(made) == 2 and basis in made[0][1] and basis in made[1][1]:
        ratio = _ratio(made[0][1][basis], made[1][1][basis], options.confidence)
    return PlanResult(options, profile, need, peak, tuple(p for p, _ in made), ratio, notes=tuple(notes))


def plan(
    store: StoreRef,
    prices: PriceTable,
    trace: TraceConfig,
    a: str,
    b: str | None,
    options: PlanOptions,
    snapshot: int | None = None,
) -> PlanResult:
    """The capacity plan of the trace on each selection (module docstring): a ConfigError at the trace's first bad
    line (before the store is read) or on bad input, a QueryError when the target is outside every frontier."""
    if not (math.isfinite(options.interactivity) and options.interactivity > 0):
        raise ConfigError(f"--interactivity {options.interactivity}: must be a positive number of tok/s per user")
    profile = profile_trace(trace)
    con = connect(store, prices, snapshot=snapshot, needs=PLAN_VIEWS, freeze=BEST_FROZEN)
    with contextlib.closing(con):
        found = plan_on(con, profile, a, b, options)
        return PlanResult(
            found.options,
            found.profile,
            found.need_tok_s,
            found.peak_tok_s,
            found.platforms,
            found.ratio,
            describe_snapshot(con),
            found.notes,
        )


def _fig(f: Figure | None) -> dict[str, float | None] | None:
    return None if f is None else {"value": f.value, "ci_low": f.ci_low, "ci_high": f.ci_high}


def plan_document(result: PlanResult) -> dict[str, Any]:
    """The plan as one JSON-ready document (`tcobench plan --format json`)."""
    o = result.options
    return {
        "snapshot": result.snapshot,
        "trace": {
            "path": result.profile.path,
            "sha256": result.profile.sha256,
            "format": result.profile.format,
            "requests": result.profile.requests,
            "minutes": result.profile.minutes,
            "output_rate_mean": result.profile.output_rate_mean,
            "output_rate_p95": result.profile.output_rate_p95,
            "output_rate_peak": result.profile.output_rate_peak,
        },
        "at": str(o.at),
        "need_tok_s": result.need_tok_s,
        "peak_tok_s": result.peak_tok_s,
        **options_document(o),
        "platforms": [
            {
                "side": p.side,
                "selection": p.selection,
                "name": p.name,
                "config": p.config,
                "config_id": p.config_id,
                "reason": p.reason,
                "source": p.source,
                "time_scale": p.time_scale,
                "ci_note": p.ci_note,
                "tok_s_per_gpu": _fig(p.tok_s_per_gpu),
                "replica_gpus": p.replica_gpus,
                "host_gpus": p.host_gpus,
                "replicas": _fig(p.replicas),
                "gpus": _fig(p.gpus),
                "hosts": _fig(p.hosts),
                "headroom_at_peak": _fig(p.headroom_at_peak),
                "costs": [
                    {"basis": c.basis, "replica_usd_month": c.replica_usd_month, "usd_month": _fig(c.usd_month)}
                    for c in p.costs
                ],
            }
            for p in result.platforms
        ],
        "ratio": _fig(result.ratio),
        "notes": list(result.notes),
    }
