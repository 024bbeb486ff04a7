"""interactivity: two sides compared at equal interactivity (tok/s per user), the frame vendor claims are made in.

A side is a set of serving configurations, each with its own frontier (frontier.py); configurations are never
averaged together. At each target a side is read at its envelope: the configuration with the most tokens per USD
there. The ratio is A / B of tokens per USD; a target no configuration of a side reaches gets no ratio, and the
bootstrap rebuilds every configuration's frontier and the envelope in each replicate (the winner's share is
reported). The crossover: where the envelopes' ratio crosses 1.

Design notes: docs/dev/architecture/analysis.md#tasks-compare-interactivity.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from tcobench.errors import ConfigError
from tcobench.tasks.analysis.compare.bootstrap import night_draws, percentile_interval, verdict
from tcobench.tasks.analysis.compare.frontier import (
    Frontier,
    Level,
    RunPoint,
    build,
    level_points,
    pchip_batch,
    replicate_levels,
)

__all__ = [
    "ConfigCurve",
    "Curves",
    "config_curves",
    "curves_at",
    "replicate_curves",
    "Crossover",
    "FrontierComparison",
    "FrontierSide",
    "TargetRow",
    "check_quantile",
    "compare_frontiers",
    "parse_targets",
    "spread_targets",
]

_GRID = 200  # points over the overlap where the ratio's sign is read for the crossover
_BAND = 40  # points along a side's curve where the report draws it and its band


@dataclass(frozen=True)
class TargetRow:
    """The comparison at one interactivity target; ratio None (and reason set) when refused. Each side is read at its
    envelope: the configuration with the lowest cost per token there (``a_config``, ``b_config``: its label;
    ``*_config_share``: the share of bootstrap replicates in which it was also the best)."""

    target: float
    a_tok_s_per_gpu: float | None
    b_tok_s_per_gpu: float | None
    a_usd_per_m: float | None
    b_usd_per_m: float | None
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    reason: str | None
    covered: float | None = None  # share of bootstrap replicates in which both rebuilt frontiers reach the target
    verdict: str | None = None  # the claim against the interval: inside | above | below (comparison.Verdict)
    a_config: str | None = None  # the winning configuration's label on each side
    b_config: str | None = None
    a_config_id: str | None = None  # its key: "<hardware_key> <config_id>"
    b_config_id: str | None = None
    a_config_share: float | None = None  # share of the replicates reaching the target in which it won
    b_config_share: float | None = None

    @property
    def no_clear_winner(self) -> bool:
        return self.ci_low is not None and self.ci_high is not None and self.ci_low <= 1 <= self.ci_high


@dataclass(frozen=True)
class ConfigCurve:
    """One serving configuration of a side: its levels as points (Pareto flagged within the configuration), its
    measured range and its curve with its bootstrap band."""

    key: str  # "<hardware_key> <config_id>" (RunPoint.config)
    label: str  # how a verdict names it, e.g. "vllm 0.32.0, TP=4, max_num_seqs 256, 4 GPUs"
    levels: tuple[Level, ...]
    low: float | None  # the Pareto points' interactivity range (None: no frontier)
    high: float | None
    gpu_counts: tuple[int, ...]
    curve_x: tuple[float, ...] = ()
    curve_y: tuple[float, ...] = ()
    band_low: tuple[float, ...] = ()
    band_high: tuple[float, ...] = ()
    curve_usd_per_m: tuple[float, ...] = ()

    @property
    def config_id(self) -> str:
        return self.key.rsplit(" ", 1)[-1]

    @property
    def span(self) -> tuple[float, float] | None:
        """(low, high), or None without a frontier."""
        return None if self.low is None or self.high is None else (self.low, self.high)

    def range_text(self) -> str:
        return "no frontier" if self.low is None else f"{self.low:.1f}-{self.high:.1f} tok/s/user"

    def covers(self, target: float) -> bool:
        return self.low is not None and self.high is not None and self.low <= target <= self.high


@dataclass(frozen=True)
class FrontierSide:
    """A side: its serving configurations' curves and its envelope over them (at each interactivity, the
    configuration with the lowest cost per token). ``levels``: every configuration's levels (Level.config says
    whose); ``low``/``high``: the lowest and highest interactivity any configuration covers (None: no configuration
    has a frontier); the curve and band: the envelope's, ``curve_config`` naming the winner at each of its points."""

    name: str
    levels: tuple[Level, ...]
    low: float | None
    high: float | None
    gpu_counts: tuple[int, ...]
    curve_x: tuple[float, ...] = ()
    curve_y: tuple[float, ...] = ()
    band_low: tuple[float, ...] = ()
    band_high: tuple[float, ...] = ()
    curve_usd_per_m: tuple[float, ...] = ()  # cost per 1M output tokens along the curve
    configs: tuple[ConfigCurve, ...] = ()
    curve_config: tuple[str, ...] = ()  # the envelope's winning configuration (ConfigCurve.key) at each curve_x

    @property
    def span(self) -> tuple[float, float] | None:
        """(low, high), or None without a frontier."""
        return None if self.low is None or self.high is None else (self.low, self.high)

    def covers(self, target: float) -> bool:
        """Whether some configuration's frontier reaches the target."""
        return any(c.covers(target) for c in self.configs)

    def ranges(self) -> tuple[tuple[float, float], ...]:
        """The interactivity ranges its configurations cover, overlapping ones merged, ascending."""
        merged: list[list[float]] = []
        for low, high in sorted((c.low, c.high) for c in self.configs if c.low is not None and c.high is not None):
            if merged and low <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], high)
            else:
                merged.append([low, high])
        return tuple((lo, hi) for lo, hi in merged)

    def range_text(self) -> str:
        spans = self.ranges()
        return "no frontier" if not spans else ", ".join(f"{lo:.1f}-{hi:.1f}" for lo, hi in spans) + " tok/s/user"

    def config(self, key: str | None) -> ConfigCurve | None:
        return next((c for c in self.configs if c.key == key), None)


@dataclass(frozen=True)
class Crossover:
    """Where A's cost per token crosses B's, over the overlap of both ranges."""

    at: float | None  # the crossing (tok/s/user) nearest the overlap's middle; None: the curves do not cross
    ci_low: float | None
    ci_high: float | None
    covered: float | None  # share of replicates with a crossing
    a_cheaper: tuple[tuple[float, float], ...]  # interactivity ranges where A costs less per token
    b_cheaper: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class FrontierComparison:
    quantile: float
    confidence: float
    a: FrontierSide
    b: FrontierSide
    targets: tuple[TargetRow, ...]
    chosen: bool  # the targets were asked for (else: spread over the overlap)
    crossover: Crossover | None
    claim: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def parse_targets(text: str) -> tuple[float, ...]:
    """'20,50,100' -> (20.0, 50.0, 100.0); a one-line ConfigError naming the bad value otherwise."""
    found = []
    for part in [p.strip() for p in text.split(",")]:
        try:
            value = float(part)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            raise ConfigError(
                f"--interactivity {text!r}: {part!r} is not a target (valid: positive numbers in "
                "tok/s per user, comma-separated, e.g. 20,50,100)"
            )
        found.append(value)
    return tuple(found)


def check_quantile(q: float) -> float:
    """``q`` when it lies in (0, 1); a one-line ConfigError naming it otherwise."""
    if not (math.isfinite(q) and 0 < q < 1):
        raise ConfigError(f"--interactivity-quantile {q}: must lie in (0, 1), e.g. 0.5 (median TPOT) or 0.9")
    return q


def spread_targets(low: float, high: float, count: int = 3) -> tuple[float, ...]:
    """``count`` targets spread over [low, high] at its quarters (ends left out: the bootstrap is thin there)."""
    return tuple(round(low + (high - low) * (i + 1) / (count + 1), 1) for i in range(count))


def config_curves(
    name: str, points: Sequence[RunPoint], q: float, labels: Mapping[str, str]
) -> tuple[FrontierSide, list[tuple[ConfigCurve, Frontier | None, list[RunPoint]]]]:
    """The side and, per serving configuration (in order of key), its curve, its frontier and its points."""
    by_config: dict[str, list[RunPoint]] = defaultdict(list)
    for p in points:
        by_config[p.config].append(p)
    found = []
    for key in sorted(by_config):
        members = by_config[key]
        levels = [replace(lv, config=key) for lv in level_points(members, q)]
        arrays = [
            np.array(v, dtype=float)
            for v in zip(*((lv.interactivity, lv.tok_s_per_gpu, lv.usd_per_gpu_s) for lv in levels), strict=True)
        ]
        front = build(*arrays) if levels else None
        gpus = tuple(sorted({p.gpus for p in members}))
        curve = ConfigCurve(
            key, labels.get(key, key), tuple(levels), front.low if front else None, front.high if front else None, gpus
        )
        found.append((curve, front, members))
    lows = [c.low for c, _, _ in found if c.low is not None]
    highs = [c.high for c, _, _ in found if c.high is not None]
    side = FrontierSide(
        name,
        tuple(lv for c, _, _ in found for lv in c.levels),
        min(lows) if lows else None,
        max(highs) if highs else None,
        tuple(sorted({p.gpus for p in points})),
        configs=tuple(c for c, _, _ in found),
    )
    return side, found


def _reason(target: float, a: FrontierSide, b: FrontierSide) -> str | None:
    """Why a target gets no ratio (None: it gets one): a side none of whose configurations has a frontier, or none
    of whose configurations reaches the target."""
    for label, side in (("A", a), ("B", b)):
        if side.low is None:
            pareto = max((sum(lv.pareto for lv in c.levels) for c in side.configs), default=0)
            if len(side.configs) > 1:
                return (
                    f"{label} ({side.name}) has no frontier: none of its {len(side.configs)} serving configurations "
                    f"has 2 Pareto points (at most {pareto}; measure more concurrency levels)"
                )
            return (
                f"{label} ({side.name}) has no frontier: {pareto} Pareto point(s), a frontier needs 2 "
                "(measure more concurrency levels)"
            )
    outside = [(label, s) for label, s in (("A", a), ("B", b)) if not s.covers(target)]
    if not outside:
        return None
    label, side = outside[0]
    other_label, other = ("B", b) if label == "A" else ("A", a)
    every = " of any configuration" if len(side.configs) > 1 else ""
    return (
        f"{target:g} tok/s/user is outside {label}'s measured range{every} {side.range_text()} "
        f"({other_label}'s: {other.range_text()}); tcobench does not extrapolate"
    )


Curves = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # x, y, k (replicates x points, padded), size


def replicate_curves(
    configs: Sequence[Sequence[RunPoint]], q: float, resamples: int, rng: np.random.Generator
) -> list[Curves]:
    """Each configuration's replicates of its rebuilt frontier (frontier.build of its levels' replicates), all
    replicates at once: x, y, k (replicates x levels + 1, the first ``size`` of a row its curve's points, NaN after)
    and size (0: the replicate has no frontier). The side's nights are drawn once for all its configurations (a bad
    night hits every configuration measured on it), then each configuration's levels in turn. The same points as
    ``build`` row by row: the Pareto points of the levels with both figures, sorted by interactivity (stable), the
    last of equal ones kept, and the lowest measured interactivity put first, flat, when it lies below them."""
    draws = night_draws((p.night for points in configs for p in points), resamples, rng)
    found = []
    for points in configs:
        reps = replicate_levels(points, q, resamples, rng, draws)
        found.append(_frontiers(np.stack(list(reps.values())) if reps else np.empty((0, 3, resamples))))
    return found


def _frontiers(stacked: np.ndarray) -> Curves:
    """``_replicate_curves`` of the levels' replicates ``stacked`` (levels x 3 x replicates)."""
    x, y, k = (stacked[:, i, :].T for i in range(3))  # replicates x levels
    ok = np.isfinite(x) & np.isfinite(y)
    beats = (x[:, None, :] > x[:, :, None]) & (y[:, None, :] > y[:, :, None]) & ok[:, None, :]
    dominated = beats.any(axis=2)
    keep = ~dominated & ok  # frontier.pareto_mask of each replicate's levels with both figures
    key = np.where(keep, x, np.inf)  # the Pareto points first, sorted, then the others (inf)
    order = np.argsort(key, axis=1, kind="stable")
    sx, sy, sk = (np.take_along_axis(v, order, axis=1) for v in (key, y, k))
    kept = keep.sum(axis=1)
    column = np.arange(x.shape[1])
    distinct = np.concatenate([sx[:, 1:] > sx[:, :-1], np.ones((len(sx), 1), dtype=bool)], axis=1)
    distinct &= column[None, :] < kept[:, None]  # of equal interactivity, the last (the higher throughput)
    count = distinct.sum(axis=1)
    order = np.argsort(~distinct, axis=1, kind="stable")  # the distinct points first, in their order
    cx, cy, ck = (np.take_along_axis(v, order, axis=1) for v in (sx, sy, sk))
    lowest = np.where(ok, x, np.inf).min(axis=1, initial=np.inf)
    first = cx[:, 0] if x.shape[1] else np.full(len(x), np.inf)
    before = (count >= 2) & (lowest < first)  # the lowest measured interactivity, flat at the first Pareto point
    size = np.where(count >= 2, count + before, 0)
    shift = before.astype(np.int64)
    out = [np.full((len(x), x.shape[1] + 1), np.nan) for _ in range(3)]
    rows, cols = np.nonzero(column[None, :] < count[:, None])
    for target, source in zip(out, (cx, cy, ck), strict=True):
        target[rows, cols + shift[rows]] = source[rows, cols]
    out[0][before, 0], out[1][before, 0], out[2][before, 0] = lowest[before], cy[before, 0], ck[before, 0]
    return out[0], out[1], out[2], size


def curves_at(curves: Curves, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each replicate's curve at xs: (tok/s per GPU, USD per GPU-second), replicates x len(xs); NaN where it does
    not reach (or the replicate has no frontier)."""
    cx, cy, ck, size = curves
    y, k = np.full((len(size), len(xs)), np.nan), np.full((len(size), len(xs)), np.nan)
    # the curves of one size at once (frontier.pchip_batch), by size; not np.unique, which imports numpy.ma (a
    # fixed cost of a small store's compare: docs/dev/performance.md#small-store)
    for points in sorted(set(size[size >= 2].tolist())):
        members = np.flatnonzero(size == points)
        # only the xs some of these curves reach: elsewhere every one of them is NaN (pchip_batch reads each x on
        # its own, so the values are the same)
        reached = np.flatnonzero((xs >= cx[members, 0].min()) & (xs <= cx[members, points - 1].max()))
        if not len(reached):
            continue
        both = np.stack([cy[members, :points], ck[members, :points]], axis=2)
        values = pchip_batch(cx[members, :points], both, xs[reached])
        y[np.ix_(members, reached)], k[np.ix_(members, reached)] = values[:, :, 0], values[:, :, 1]
    return y, k


def compare_frontiers(
    a_points: Sequence[RunPoint],
    b_points: Sequence[RunPoint],
    a_name: str,
    b_name: str,
    targets: Sequence[float] | None,
    *,
    q: float = 0.5,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    claim: float | None = None,
    labels: Mapping[str, str] | None = None,
) -> FrontierComparison:
    """A and B at each target (None: 3 spread over the overlap of their ranges, where both have a frontier), each
    side at its envelope: per target, its serving configuration with the lowest cost per token there (``labels``:
    each configuration's name by its key, RunPoint.config). Configurations are never averaged together: each has its
    own curve, and every bootstrap replicate rebuilds every curve and picks the envelope again."""
    names = dict(labels or {})
    a, a_found = config_curves(a_name, a_points, q, names)
    b, b_found = config_curves(b_name, b_points, q, names)
    notes = [
        f"{label}{f' ({c.label})' if len(s.configs) > 1 else ''} mixes GPU counts "
        f"{', '.join(map(str, c.gpu_counts))}: tok/s is divided by each run's own"
        for label, s in (("A", a), ("B", b))
        for c in s.configs
        if len(c.gpu_counts) > 1
    ]
    notes += [
        f"{label} has {len(s.configs)} serving configurations ({'; '.join(c.label for c in s.configs)}): it is read "
        "at its envelope, the configuration with the lowest cost per token at each target; configurations are never "
        "averaged together"
        for label, s in (("A", a), ("B", b))
        if len(s.configs) > 1
    ]
    overlap = None
    if a.span is not None and b.span is not None and max(a.span[0], b.span[0]) < min(a.span[1], b.span[1]):
        overlap = (max(a.span[0], b.span[0]), min(a.span[1], b.span[1]))
    chosen = targets is not None
    wanted = tuple(targets) if targets is not None else (spread_targets(*overlap) if overlap else ())
    if not wanted and a.low is None and b.low is None:  # no replicate would be read: none is drawn
        return FrontierComparison(q, confidence, a, b, (), chosen, None, claim, tuple(notes))
    rng = np.random.default_rng(seed)
    a_curves = replicate_curves([points for _, _, points in a_found], q, resamples, rng)
    b_curves = replicate_curves([points for _, _, points in b_found], q, resamples, rng)
    # every x any replicate is read at, read once per curve: the targets, the crossover grid, both envelopes' band
    # grids, then each configuration's band grid
    grid = np.linspace(*overlap, _GRID) if overlap else np.array([])
    bands = [np.linspace(*s.span, _BAND) if s.span is not None else np.array([]) for s in (a, b)]
    own = [np.linspace(*c.span, _BAND) if c.span is not None else np.array([]) for c in (*a.configs, *b.configs)]
    # every configuration is read at the targets, the crossover grid and both envelopes' band grids, and at its own
    # band grid (not at the other configurations': many configurations would otherwise cost their square)
    xs = np.concatenate([np.array(wanted, dtype=float), grid, *bands])
    cut = np.cumsum([len(wanted), len(grid), len(bands[0]), len(bands[1])])
    a_env = _Envelope.of(a_found, a_curves, xs, own[: len(a_found)])
    b_env = _Envelope.of(b_found, b_curves, xs, own[len(a_found) :])
    ratio_reps = a_env.eff[:, : cut[0]] / b_env.eff[:, : cut[0]]
    rows = []
    for i, target in enumerate(wanted):
        reason = _reason(target, a, b)
        if reason is not None:
            rows.append(TargetRow(target, None, None, None, None, None, None, None, reason))
            continue
        (ay, ak, a_key), (by, bk, b_key) = a_env.at(target), b_env.at(target)
        finite = ratio_reps[:, i][np.isfinite(ratio_reps[:, i])]
        lo, hi = percentile_interval(finite, confidence) if len(finite) else (math.nan, math.nan)
        ratio = float((ay / ak) / (by / bk))
        rows.append(
            TargetRow(
                target,
                ay,
                by,
                1e6 * ak / ay,
                1e6 * bk / by,
                ratio,
                lo,
                hi,
                None,
                len(finite) / resamples,
                verdict(claim, lo, hi).value if claim is not None else None,
                names.get(a_key, a_key),
                names.get(b_key, b_key),
                a_key,
                b_key,
                a_env.share(i, a_key),
                b_env.share(i, b_key),
            )
        )
    a = _with_bands(a, a_env, bands[0], slice(cut[1], cut[2]), confidence)
    b = _with_bands(b, b_env, bands[1], slice(cut[2], cut[3]), confidence)
    on_grid = a_env.eff[:, cut[0] : cut[1]] / b_env.eff[:, cut[0] : cut[1]]
    cross = _crossover(a_env, b_env, on_grid, grid, overlap, confidence) if overlap else None
    return FrontierComparison(q, confidence, a, b, tuple(rows), chosen, cross, claim, tuple(notes))


@dataclass(frozen=True)
class _Envelope:
    """A side's configurations read at xs: each configuration's frontier (point estimate) and, per replicate, its
    rebuilt curve's tok/s/GPU and USD per GPU-second; the envelope picks, per x (and per replicate), the
    configuration with the most tokens per USD."""

    keys: tuple[str, ...]
    fronts: tuple[Frontier | None, ...]
    y: np.ndarray  # configurations x replicates x xs: tok/s per GPU (NaN where the rebuilt curve does not reach)
    k: np.ndarray  # the same, USD per GPU-second
    eff: np.ndarray  # replicates x xs: the envelope's tokens per USD-second (y / k of the best configuration)
    best: np.ndarray  # replicates x xs: the best configuration's index (-1: none reaches)
    xs: np.ndarray
    own: tuple[tuple[np.ndarray, np.ndarray], ...] = ()  # per configuration: its own band grid, replicates x it (y)

    @classmethod
    def of(
        cls,
        found: Sequence[tuple[ConfigCurve, Frontier | None, list[RunPoint]]],
        curves: Sequence[Curves],
        xs: np.ndarray,
        own: Sequence[np.ndarray] = (),
    ) -> _Envelope:
        """``own``: each configuration's own band grid, read on its curve alone (``_Envelope.own``)."""
        evaluated = [curves_at(c, np.concatenate([xs, own[i]]) if own else xs) for i, c in enumerate(curves)]
        mine = tuple((own[i], v[0][:, len(xs) :]) for i, v in enumerate(evaluated)) if own else ()
        evaluated = [(v[0][:, : len(xs)], v[1][:, : len(xs)]) for v in evaluated]
        y = np.stack([v[0] for v in evaluated]) if evaluated else np.empty((0, 0, len(xs)))
        k = np.stack([v[1] for v in evaluated]) if evaluated else np.empty((0, 0, len(xs)))
        with np.errstate(invalid="ignore", divide="ignore"):
            per = y / k
        ok = np.isfinite(per)
        best = np.where(ok.any(axis=0), np.argmax(np.where(ok, per, -np.inf), axis=0), -1) if len(per) else None
        if best is None:
            empty = np.full((0, len(xs)), np.nan)
            return cls((), (), y, k, empty, empty.astype(int), xs, mine)
        eff = np.where(best >= 0, np.take_along_axis(per, np.maximum(best, 0)[None], axis=0)[0], np.nan)
        return cls(tuple(c.key for c, _, _ in found), tuple(f for _, f, _ in found), y, k, eff, best, xs, mine)

    def point(self, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The point estimate at xs: (tok/s per GPU, USD per GPU-second, the best configuration's index, -1: none)."""
        ys = np.full((len(self.keys), len(xs)), np.nan)
        ks = np.full((len(self.keys), len(xs)), np.nan)
        for i, front in enumerate(self.fronts):
            if front is not None:
                ys[i], ks[i] = front.at(xs)
        with np.errstate(invalid="ignore", divide="ignore"):
            per = ys / ks
        ok = np.isfinite(per)
        if not len(per):
            return np.full(len(xs), np.nan), np.full(len(xs), np.nan), np.full(len(xs), -1)
        best = np.where(ok.any(axis=0), np.argmax(np.where(ok, per, -np.inf), axis=0), -1)
        at = np.maximum(best, 0)[None]
        y = np.where(best >= 0, np.take_along_axis(ys, at, axis=0)[0], np.nan)
        k = np.where(best >= 0, np.take_along_axis(ks, at, axis=0)[0], np.nan)
        return y, k, best

    def at(self, target: float) -> tuple[float, float, str]:
        """(tok/s per GPU, USD per GPU-second, the winning configuration's key) at a target some configuration
        reaches."""
        (y,), (k,), (best,) = self.point(np.array([target]))
        return float(y), float(k), self.keys[int(best)]

    def share(self, column: int, key: str) -> float | None:
        """The share of the replicates that reach xs[column] in which configuration ``key`` is the best there."""
        reached = self.best[:, column] >= 0
        if not reached.any():
            return None
        return float((self.best[reached, column] == self.keys.index(key)).mean())

    def replicate_y(self, columns: slice) -> np.ndarray:
        """Replicates x xs[columns]: the envelope's tok/s per GPU (the best configuration's)."""
        best = self.best[:, columns]
        y = np.take_along_axis(self.y[:, :, columns], np.maximum(best, 0)[None], axis=0)[0]
        return np.where(best >= 0, y, np.nan)


def _band(reps: np.ndarray, confidence: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per column of ``reps`` (replicates x points): its percentile interval (NaN where no replicate has a value)."""
    bands = [
        percentile_interval(reps[:, j], confidence) if np.isfinite(reps[:, j]).any() else (math.nan, math.nan)
        for j in range(reps.shape[1])
    ]
    return tuple(b[0] for b in bands), tuple(b[1] for b in bands)


def _with_bands(side: FrontierSide, env: _Envelope, xs: np.ndarray, columns: slice, confidence: float) -> FrontierSide:
    """The side with its envelope's curve over ``xs`` (env.xs[columns]), the winner at each point, the cost along it
    and its bootstrap band of tok/s/GPU, and each configuration's own curve and band (over its own grid, env.own[i])
    for the report."""
    if side.low is None:
        return side
    configs = []
    for i, curve in enumerate(side.configs):
        front = env.fronts[i]
        if front is None:
            configs.append(curve)
            continue
        own, replicates = env.own[i]
        y, k = front.at(own)
        low, high = _band(replicates, confidence)
        configs.append(
            replace(
                curve,
                curve_x=tuple(map(float, own)),
                curve_y=tuple(map(float, y)),
                band_low=low,
                band_high=high,
                curve_usd_per_m=tuple(map(float, 1e6 * k / y)),
            )
        )
    y, k, best = env.point(xs)
    low, high = _band(env.replicate_y(columns), confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        cost = 1e6 * k / y
    return replace(
        side,
        curve_x=tuple(map(float, xs)),
        curve_y=tuple(map(float, y)),
        band_low=low,
        band_high=high,
        curve_usd_per_m=tuple(map(float, cost)),
        configs=tuple(configs),
        curve_config=tuple(env.keys[int(b)] if b >= 0 else "" for b in best),
    )


def _crossings(xs: np.ndarray, log_ratio: np.ndarray) -> list[float]:
    """Where a sampled log ratio changes sign, by linear interpolation between grid points."""
    found = []
    for j in range(len(xs) - 1):
        u, v = log_ratio[j], log_ratio[j + 1]
        if np.isfinite(u) and np.isfinite(v) and (u == 0 or u * v < 0):
            found.append(float(xs[j] if u == 0 else xs[j] + (xs[j + 1] - xs[j]) * u / (u - v)))
    return found


def _segments(xs: np.ndarray, mask: np.ndarray) -> tuple[tuple[float, float], ...]:
    found, start = [], None
    for j, on in enumerate(mask):
        if on and start is None:
            start = j
        if start is not None and (not on or j == len(mask) - 1):
            end = j if on else j - 1
            found.append((round(float(xs[start]), 1), round(float(xs[end]), 1)))
            start = None
    return tuple(found)


def _crossover(
    a_env: _Envelope,
    b_env: _Envelope,
    reps: np.ndarray,
    xs: np.ndarray,
    overlap: tuple[float, float],
    confidence: float,
) -> Crossover | None:
    """The crossover of the two envelopes over the grid ``xs`` spanning the overlap; ``reps``: the replicates' ratios
    on that grid."""
    ay, ak, _ = a_env.point(xs)
    by, bk, _ = b_env.point(xs)
    with np.errstate(invalid="ignore", divide="ignore"):
        log_ratio = np.log((ay / ak) / (by / bk))
    found = _crossings(xs, log_ratio)
    a_cheaper, b_cheaper = _segments(xs, log_ratio > 0), _segments(xs, log_ratio < 0)
    if not found:
        return Crossover(None, None, None, None, a_cheaper, b_cheaper)
    middle = (overlap[0] + overlap[1]) / 2
    at = min(found, key=lambda c: abs(c - middle))
    with np.errstate(invalid="ignore", divide="ignore"):
        u, v = np.log(reps[:, :-1]), np.log(reps[:, 1:])
        crossing = np.where((u * v < 0) | (u == 0), xs[:-1] + (xs[1:] - xs[:-1]) * u / (u - v), np.nan)
    has = np.isfinite(crossing).any(axis=1)
    distance = np.where(np.isfinite(crossing), np.abs(crossing - at), np.inf)
    nearest = crossing[has, np.argmin(distance[has], axis=1)] if has.any() else np.array([])
    lo, hi = percentile_interval(nearest, confidence) if len(nearest) else (None, None)
    return Crossover(at, lo, hi, float(has.mean()), a_cheaper, b_cheaper)
