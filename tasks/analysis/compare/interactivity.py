"""interactivity: two sides compared at equal interactivity (tok/s per user), the frame vendor claims are made in.

Each side's frontier (frontier.py) is read at each target: tok/s per GPU and cost per 1M output tokens on the
chosen basis; the ratio is A / B of tokens per USD (= $/1M of B / $/1M of A: "A is R times as cost-efficient").
A target outside either side's measured range of Pareto points gives no ratio and a reason naming both ranges;
a side with fewer than two Pareto points has no frontier. The interval is a percentile bootstrap whose replicates
rebuild both frontiers (frontier.replicate_levels); a replicate whose rebuilt frontier does not reach the target
is left out, and the share of replicates left is reported (``covered``).

The crossover: over the overlap of the two ranges, where the ratio crosses 1, with a percentile interval of the
crossing nearest it in each replicate that has one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

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
    """The comparison at one interactivity target; ratio None (and reason set) when refused."""

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

    @property
    def no_clear_winner(self) -> bool:
        return self.ci_low is not None and self.ci_high is not None and self.ci_low <= 1 <= self.ci_high


@dataclass(frozen=True)
class FrontierSide:
    """A side's levels as points (Pareto flagged), its measured range and its curve with its bootstrap band."""

    name: str
    levels: tuple[Level, ...]
    low: float | None  # the Pareto points' interactivity range (None: no frontier)
    high: float | None
    gpu_counts: tuple[int, ...]
    curve_x: tuple[float, ...] = ()
    curve_y: tuple[float, ...] = ()
    band_low: tuple[float, ...] = ()
    band_high: tuple[float, ...] = ()
    curve_usd_per_m: tuple[float, ...] = ()  # cost per 1M output tokens along the curve

    def range_text(self) -> str:
        return "no frontier" if self.low is None else f"{self.low:.1f}-{self.high:.1f} tok/s/user"


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


def _side(name: str, points: Sequence[RunPoint], q: float) -> tuple[FrontierSide, Frontier | None]:
    levels = level_points(points, q)
    arrays = [
        np.array(v, dtype=float)
        for v in zip(*((lv.interactivity, lv.tok_s_per_gpu, lv.usd_per_gpu_s) for lv in levels), strict=True)
    ]
    front = build(*arrays) if levels else None
    gpus = tuple(sorted({p.gpus for p in points}))
    side = FrontierSide(name, tuple(levels), front.low if front else None, front.high if front else None, gpus)
    return side, front


def _reason(target: float, a: FrontierSide, b: FrontierSide) -> str | None:
    """Why a target gets no ratio (None: it gets one)."""
    for label, side in (("A", a), ("B", b)):
        if side.low is None:
            pareto = sum(lv.pareto for lv in side.levels)
            return (
                f"{label} ({side.name}) has no frontier: {pareto} Pareto point(s), a frontier needs 2 "
                "(measure more concurrency levels)"
            )
    outside = [(label, s) for label, s in (("A", a), ("B", b)) if not s.low <= target <= s.high]  # type: ignore[operator]
    if not outside:
        return None
    label, side = outside[0]
    other_label, other = ("B", b) if label == "A" else ("A", a)
    return (
        f"{target:g} tok/s/user is outside {label}'s measured range {side.range_text()} "
        f"({other_label}'s: {other.range_text()}); tcobench does not extrapolate"
    )


_Curves = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # x, y, k (replicates x points, padded), size


def _replicate_curves(points: Sequence[RunPoint], q: float, resamples: int, rng: np.random.Generator) -> _Curves:
    """Each replicate's rebuilt frontier (frontier.build of its levels' replicates), all replicates at once: x, y, k
    (replicates x levels + 1, the first ``size`` of a row its curve's points, NaN after) and size (0: the replicate
    has no frontier). The same points as ``build`` row by row: the Pareto points of the levels with both figures,
    sorted by interactivity (stable), the last of equal ones kept, and the lowest measured interactivity put
    first, flat, when it lies below them."""
    draws = night_draws((p.night for p in points), resamples, rng)
    reps = replicate_levels(points, q, resamples, rng, draws)
    return _frontiers(np.stack(list(reps.values())) if reps else np.empty((0, 3, resamples)))


def _frontiers(stacked: np.ndarray) -> _Curves:
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


def _eval(curves: _Curves, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each replicate's curve at xs: (tok/s per GPU, USD per GPU-second), replicates x len(xs); NaN where it does
    not reach (or the replicate has no frontier)."""
    cx, cy, ck, size = curves
    y, k = np.full((len(size), len(xs)), np.nan), np.full((len(size), len(xs)), np.nan)
    for points in np.unique(size[size >= 2]):  # the curves of one size at once (frontier.pchip_batch)
        members = np.flatnonzero(size == points)
        both = np.stack([cy[members, :points], ck[members, :points]], axis=2)
        values = pchip_batch(cx[members, :points], both, xs)
        y[members], k[members] = values[:, :, 0], values[:, :, 1]
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
) -> FrontierComparison:
    """A and B at each target (None: 3 spread over the overlap of their ranges, where both have a frontier)."""
    a, a_front = _side(a_name, a_points, q)
    b, b_front = _side(b_name, b_points, q)
    notes = [
        f"{label} mixes GPU counts {', '.join(map(str, s.gpu_counts))}: tok/s is divided by each run's own"
        for label, s in (("A", a), ("B", b))
        if len(s.gpu_counts) > 1
    ]
    overlap = None
    if a_front and b_front and max(a_front.low, b_front.low) < min(a_front.high, b_front.high):
        overlap = (max(a_front.low, b_front.low), min(a_front.high, b_front.high))
    chosen = targets is not None
    wanted = tuple(targets) if targets is not None else (spread_targets(*overlap) if overlap else ())
    if not wanted and a_front is None and b_front is None:  # no replicate would be read: none is drawn
        return FrontierComparison(q, confidence, a, b, (), chosen, None, claim, tuple(notes))
    rng = np.random.default_rng(seed)
    a_curves, b_curves = _replicate_curves(a_points, q, resamples, rng), _replicate_curves(b_points, q, resamples, rng)
    # every x any replicate is read at, read once per curve: the targets, the crossover grid, both bands' grids
    grid = np.linspace(*overlap, _GRID) if overlap else np.array([])
    bands = [np.linspace(f.low, f.high, _BAND) if f else np.array([]) for f in (a_front, b_front)]
    xs = np.concatenate([np.array(wanted, dtype=float), grid, *bands])
    a_reps, b_reps = _eval(a_curves, xs), _eval(b_curves, xs)
    cut = np.cumsum([len(wanted), len(grid), len(bands[0])])
    ratio_reps = a_reps[0][:, : cut[0]] / a_reps[1][:, : cut[0]] / (b_reps[0][:, : cut[0]] / b_reps[1][:, : cut[0]])
    rows = []
    for i, target in enumerate(wanted):
        reason = _reason(target, a, b)
        if reason is not None or a_front is None or b_front is None:
            rows.append(TargetRow(target, None, None, None, None, None, None, None, reason))
            continue
        (ay,), (ak,) = a_front.at(np.array([target]))
        (by,), (bk,) = b_front.at(np.array([target]))
        finite = ratio_reps[:, i][np.isfinite(ratio_reps[:, i])]
        lo, hi = percentile_interval(finite, confidence) if len(finite) else (math.nan, math.nan)
        ratio = float((ay / ak) / (by / bk))
        rows.append(
            TargetRow(
                target,
                float(ay),
                float(by),
                float(1e6 * ak / ay),
                float(1e6 * bk / by),
                ratio,
                lo,
                hi,
                None,
                len(finite) / resamples,
                verdict(claim, lo, hi).value if claim is not None else None,
            )
        )
    a = _with_band(a, a_front, bands[0], a_reps[0][:, cut[1] : cut[2]], confidence)
    b = _with_band(b, b_front, bands[1], b_reps[0][:, cut[2] :], confidence)
    on_grid = (
        a_reps[0][:, cut[0] : cut[1]]
        / a_reps[1][:, cut[0] : cut[1]]
        / (b_reps[0][:, cut[0] : cut[1]] / b_reps[1][:, cut[0] : cut[1]])
    )
    cross = _crossover(a_front, b_front, on_grid, grid, overlap, confidence) if overlap else None
    return FrontierComparison(q, confidence, a, b, tuple(rows), chosen, cross, claim, tuple(notes))


def _with_band(
    side: FrontierSide, front: Frontier | None, xs: np.ndarray, reps: np.ndarray, confidence: float
) -> FrontierSide:
    """The side with its interpolated curve over ``xs``, its cost along it, and the bootstrap band of tok/s/GPU
    (``reps``: the replicates' tok/s/GPU at xs) for the report."""
    if front is None:
        return side
    y, k = front.at(xs)
    bands = [
        percentile_interval(reps[:, j], confidence) if np.isfinite(reps[:, j]).any() else (math.nan, math.nan)
        for j in range(len(xs))
    ]
    return FrontierSide(
        side.name,
        side.levels,
        side.low,
        side.high,
        side.gpu_counts,
        tuple(map(float, xs)),
        tuple(map(float, y)),
        tuple(b[0] for b in bands),
        tuple(b[1] for b in bands),
        tuple(map(float, 1e6 * k / y)),
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
    a_front: Frontier | None,
    b_front: Frontier | None,
    reps: np.ndarray,
    xs: np.ndarray,
    overlap: tuple[float, float],
    confidence: float,
) -> Crossover | None:
    """The crossover over the grid ``xs`` spanning the overlap; ``reps``: the replicates' ratios on that grid."""
    if a_front is None or b_front is None:
        return None
    ay, ak = a_front.at(xs)
    by, bk = b_front.at(xs)
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
