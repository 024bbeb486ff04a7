"""frontier: a platform's throughput per GPU against interactivity, its Pareto points and their interpolation.

A run is a point: interactivity x = 1000 / TPOT quantile (ms; the median by default) in tok/s per user, and
output tok/s / GPUs (view frontier, from run_summary) in tok/s per GPU. A side's points are its concurrency
levels: each level's figures are night-weighted means over its runs (the mean over nights of each night's mean,
the rule of macro night_weighted_mean that compare uses), so repeated nights do not make a zig-zag of lucky and
unlucky runs. A level is a Pareto point when no other level of the side has both a higher interactivity and a
higher throughput. The frontier is scipy's PchipInterpolator (monotone piecewise-cubic, docs/dev/decisions/0005)
through the Pareto points sorted by interactivity, and never extrapolates: a target outside the measured range
has no value (NaN). One Pareto point is not a frontier (``build`` gives None).

Design notes: docs/dev/architecture/analysis.md#tasks-compare-frontier.
"""

from __future__ import annotations

import functools
import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from tcobench.schemas import CostBasis
from tcobench.tasks.analysis.compare.bootstrap import NORMAL_FROM_REQUESTS, NightDraws
from tcobench.tasks.analysis.incomplete_beta import betainc  # scipy.special's, without importing scipy
from tcobench.tasks.analysis.pchip import pchip  # scipy.interpolate's PchipInterpolator, to the bit, without scipy
from tcobench.tasks.analysis.quantile import interpolate, quantile, quantile_positions, quantile_rows
from tcobench.tasks.store.arrays import filled_flags, list_parts
from tcobench.tasks.store.rows import IDS, id_list

__all__ = [
    "FRONTIER_MACROS",
    "Frontier",
    "Level",
    "RunPoint",
    "build",
    "level_points",
    "load_points",
    "night_mean",
    "pareto_mask",
    "pchip_batch",
    "replicate_levels",
]

# the views and macros a side's frontier and its replicates read (load_points, _requests_of and the bootstrap's
# run_moments and run_requests): compare's and best's
FRONTIER_MACROS = (
    "frontier_points",
    "frontier_requests",
    "frontier_run_points",
    "frontier_run_requests",
    "run_moments",
    "run_requests",
    "in_steady",
)

_DRAW_CELLS = 1 << 18  # request indices drawn at once (_drawn: its arrays stay in the CPU's cache)
_BATCH_RUNS = 256  # runs whose replicates are computed at once (their draws, a few MB, stay small)
_CELL_BITS = 16  # a quantile's order-statistic table has 2 ** _CELL_BITS guide cells (_order_statistic)
_CELLS = 1 << _CELL_BITS
_DOUBLE = 1.0 / (1 << 53)  # numpy's uniform double of a raw 64-bit draw: (raw >> 11) x 2 ** -53


@dataclass(frozen=True)
class RunPoint:
    """One run's inputs to the frontier: where it sits (night, level), its throughput per GPU, its cost rate per
    GPU (USD per GPU-second) and its ok requests that have a TPOT (ms), with their output tokens and e2e (s)."""

    run_id: str
    night: str
    concurrency: int
    gpus: int
    tok_s_per_gpu: float
    usd_per_gpu_s: float
    tpot_ms: np.ndarray
    tokens: np.ndarray
    e2e_s: np.ndarray
    steady: bool = False  # its figures and requests are its steady state's (view frontier), else the whole run's
    config: str = ""  # its serving configuration's curve: "<hardware_key> <config_id>" (view frontier_points)
    # what best checks an SLO against (macro frontier_run_points): run_summary.ttft_p90_ms, and the point's
    # frontier_points.interactivity_p90 (tok/s per user; TPOT p90 = 1000 / it); None: not measured
    ttft_p90_ms: float | None = None
    interactivity_p90: float | None = None

    def interactivity(self, q: float) -> float:
        """1000 / the q-quantile of the run's TPOT (ms): tok/s per user."""
        found = quantile(self.tpot_ms, q)
        return 1000.0 / found if found else float("nan")


@dataclass(frozen=True)
class Level:
    """A side's concurrency level as a point: night-weighted interactivity, tok/s/GPU and cost rate per GPU."""

    concurrency: int
    interactivity: float
    tok_s_per_gpu: float
    usd_per_gpu_s: float
    pareto: bool = False
    config: str = ""  # the serving configuration whose level it is (RunPoint.config)

    @property
    def usd_per_m(self) -> float:
        return 1e6 * self.usd_per_gpu_s / self.tok_s_per_gpu


def pareto_mask(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """True where no other point has both a higher x and a higher y."""
    dominated = ((x[None, :] > x[:, None]) & (y[None, :] > y[:, None])).any(axis=1)
    result: np.ndarray = ~dominated & np.isfinite(x) & np.isfinite(y)
    return result


@dataclass(frozen=True)
class Frontier:
    """The interpolated frontier through a side's Pareto points (x ascending, no duplicate x)."""

    x: np.ndarray  # interactivity, tok/s per user
    y: np.ndarray  # tok/s per GPU
    k: np.ndarray  # USD per GPU-second

    @property
    def low(self) -> float:
        return float(self.x[0])

    @property
    def high(self) -> float:
        return float(self.x[-1])

    def at(self, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(tok/s per GPU, USD per GPU-second) at each target; NaN outside [low, high] (never extrapolated). Both
        columns by PCHIP, each of its own."""
        both = pchip(self.x, np.column_stack([self.y, self.k]), targets)
        return both[:, 0], both[:, 1]


def _edge(h0: np.ndarray, h1: np.ndarray, m0: np.ndarray, m1: np.ndarray) -> np.ndarray:
    """PCHIP's end slope (scipy's PchipInterpolator._edge_case): the three-point estimate, kept shape-preserving."""
    d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    d = np.where(np.sign(d) != np.sign(m0), 0.0, d)
    return np.where((np.sign(m0) != np.sign(m1)) & (np.abs(d) > 3 * np.abs(m0)), 3 * m0, d)


def pchip_batch(x: np.ndarray, y: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Many PCHIP curves of the same number of points at once: x (curves x m, ascending), y (curves x m x columns)
    -> values at ``targets`` (curves x targets x columns), NaN outside each curve's [x first, x last]. The same
    Fritsch-Carlson slopes as scipy's PchipInterpolator (Frontier.at, the estimate;
    tests/unit/tasks/analysis/test_frontier.py checks the two agree): building one scipy object per bootstrap
    replicate and side cost most of a comparison."""
    h = np.diff(x, axis=1)[:, :, None]  # curves x (m-1) x 1
    slope = np.diff(y, axis=1) / h
    d = np.repeat(slope[:, :1], x.shape[1], axis=1)  # two points: the line's slope at both ends
    if x.shape[1] > 2:
        s0, s1, h0, h1 = slope[:, :-1], slope[:, 1:], h[:, :-1], h[:, 1:]
        w1, w2 = 2 * h1 + h0, h1 + 2 * h0
        flat = (np.sign(s0) != np.sign(s1)) | (s0 == 0) | (s1 == 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = (w1 + w2) / (w1 / s0 + w2 / s1)
        d = np.concatenate(
            [
                _edge(h[:, :1], h[:, 1:2], slope[:, :1], slope[:, 1:2]),
                np.where(flat, 0.0, inner),
                _edge(h[:, -1:], h[:, -2:-1], slope[:, -1:], slope[:, -2:-1]),
            ],
            axis=1,
        )
    m = x.shape[1]
    idx = np.clip((x[:, :, None] <= targets[None, None, :]).sum(axis=1) - 1, 0, m - 2)  # curves x targets
    # each curve's segment at each target, gathered from the flattened arrays (np.take: faster than indexing
    # rows and segments together, the same values)
    rows = np.arange(x.shape[0])[:, None]
    at, segment = rows * m + idx, rows * (m - 1) + idx
    x0, width = np.take(x.ravel(), at), np.take(h.ravel(), segment)
    t = ((targets[None, :] - x0) / width)[:, :, None]
    ys, ds = y.reshape(-1, y.shape[2]), d.reshape(-1, d.shape[2])
    y0, y1, d0, d1 = (np.take(v, i, axis=0) for v, i in ((ys, at), (ys, at + 1), (ds, at), (ds, at + 1)))
    w = width[:, :, None]
    t2 = t * t
    t3 = t2 * t
    value = (2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + t) * w * d0 + (3 * t2 - 2 * t3) * y1
    value += (t3 - t2) * w * d1
    inside = (targets[None, :] >= x[:, :1]) & (targets[None, :] <= x[:, -1:])
    result: np.ndarray = np.where(inside[:, :, None], value, np.nan)
    return result


def build(x: np.ndarray, y: np.ndarray, k: np.ndarray) -> Frontier | None:
    """The frontier through the Pareto points of (x, y) (with their cost rates k); None with fewer than two.

    Below the lowest Pareto point's interactivity, down to the lowest measured one (a dominated point's), the
    frontier is flat at that Pareto point: running it serves every user at least that fast, at its throughput.
    That is a measured operating point, not an extrapolation, and it keeps a replicate whose lowest level falls
    behind the next one (a saturated engine) from losing the range that level measured."""
    keep = pareto_mask(x, y)
    px, py, pk = x[keep], y[keep], k[keep]
    order = np.argsort(px, kind="stable")
    px, py, pk = px[order], py[order], pk[order]
    if len(px) > 1:  # equal interactivity: keep the higher throughput (the last of a run of equal x after sorting)
        distinct = np.append(np.diff(px) > 0, True)
        px, py, pk = px[distinct], py[distinct], pk[distinct]
    if len(px) < 2:
        return None
    lowest = float(np.min(x[np.isfinite(x) & np.isfinite(y)]))
    if lowest < px[0]:
        px, py, pk = np.append(lowest, px), np.append(py[0], py), np.append(pk[0], pk)
    return Frontier(px, py, pk)


def night_mean(values: dict[str, list[float]]) -> float:
    """The mean over nights of each night's mean (macro night_weighted_mean's rule). A night of one run is that
    run's figure (numpy's mean of one value is the value itself), taken without a call per night."""
    return float(np.mean([v[0] if len(v) == 1 else np.mean(v) for v in values.values()]))


def _interactivities(points: Sequence[RunPoint], q: float) -> np.ndarray:
    """``RunPoint.interactivity`` of each point, the runs of one request count at once (``quantile_rows`` is
    ``quantile`` row by row: the same order statistics, the same interpolation)."""
    found = np.full(len(points), np.nan)
    by_count: dict[int, list[int]] = defaultdict(list)
    for i, p in enumerate(points):
        by_count[len(p.tpot_ms)].append(i)
    for n, members in by_count.items():
        if n:
            tpot = quantile_rows(np.stack([points[i].tpot_ms for i in members]), q)
            with np.errstate(divide="ignore"):
                found[members] = np.where(tpot != 0, 1000.0 / tpot, np.nan)  # no TPOT quantile: NaN
    return found


def level_points(points: Sequence[RunPoint], q: float) -> list[Level]:
    """A side's levels as points (night-weighted means), Pareto flagged, by concurrency."""
    by_level: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, p in enumerate(points):
        by_level[p.concurrency][p.night].append(i)
    per_user = _interactivities(points, q)
    found = []
    for level, nights in sorted(by_level.items()):
        x = night_mean({n: [float(per_user[i]) for i in ps] for n, ps in nights.items()})
        y = night_mean({n: [points[i].tok_s_per_gpu for i in ps] for n, ps in nights.items()})
        k = night_mean({n: [points[i].usd_per_gpu_s for i in ps] for n, ps in nights.items()})
        found.append(Level(level, x, y, k))
    if not found:
        return found
    mask = pareto_mask(np.array([f.interactivity for f in found]), np.array([f.tok_s_per_gpu for f in found]))
    return [
        Level(f.concurrency, f.interactivity, f.tok_s_per_gpu, f.usd_per_gpu_s, bool(m))
        for f, m in zip(found, mask, strict=True)
    ]


def _run_replicates(
    p: RunPoint, q: float, resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, float]:
    """A run's replicates of (interactivity, tok/s/GPU), its requests drawn with replacement (bootstrap.py), and the
    sd of its tok/s/GPU's normal part (0: none). From NORMAL_FROM_REQUESTS requests on, by their large-sample forms:
    the interactivity by ``_large_x``, the tok/s/GPU as its figure with the sd of its normal approximation
    (``_throughput_sd``), which ``replicate_levels`` adds per level; below, drawn (``_drawn``)."""
    n = len(p.tpot_ms)
    if n < 2:
        return np.full(resamples, p.interactivity(q)), np.full(resamples, p.tok_s_per_gpu), 0.0
    if n >= NORMAL_FROM_REQUESTS:
        x = _large_x([p], q, rng.bit_generator.random_raw((1, resamples)))
        return x[0], np.full(resamples, p.tok_s_per_gpu), float(_throughput_sd([p])[0])
    xs, ys = _drawn([p], q, resamples, rng)
    return xs[0], ys[0], 0.0


def _drawn(
    points: Sequence[RunPoint], q: float, resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Replicates (points x resamples) of the interactivity and tok/s/GPU of runs of one request count n (2 <= n <
    NORMAL_FROM_REQUESTS), each run's n requests drawn with replacement in each replicate, run after run from one
    stream: a replicate's interactivity is 1000 / the q-quantile of its drawn TPOTs (quantile.py's rule), its tok/s/GPU
    the run's figure times (sum tokens* / sum e2e*) / (sum tokens / sum e2e) over the drawn requests (a ratio
    estimator of its throughput).

    The request indices of as many whole runs as fit in _DRAW_CELLS are drawn at once: one ``integers`` call of k x
    resamples rows of n is the k calls of resamples rows in turn, to the bit (the generator keeps the unused half of
    a 64-bit draw for its next call). A replicate's two order statistics are the lo-th and hi-th smallest of its
    drawn TPOTs (``_smallest``); its sums add the drawn requests in their drawn order (``_row_sums``).
    tests/unit/tasks/analysis/test_frontier.py checks it against drawing and sorting run after run, to the bit."""
    n = len(points[0].tpot_ms)
    lo, hi, h = (v.item() for v in quantile_positions(np.array([n]), q))
    # each run's requests' (TPOT, tokens, e2e), a run's requests in a row of each (3 x runs x n)
    requests = np.stack([np.stack([getattr(p, name) for p in points]) for name in ("tpot_ms", "tokens", "e2e_s")])
    requests = requests.astype(float)
    per_gpu = np.array([p.tok_s_per_gpu for p in points])
    rate = requests[1].sum(axis=1) / requests[2].sum(axis=1)
    x, y = np.empty((len(points), resamples)), np.empty((len(points), resamples))
    step = max(1, _DRAW_CELLS // (n * resamples))
    for start in range(0, len(points), step):
        runs = slice(start, min(start + step, len(points)))
        drawn = rng.integers(0, n, size=(runs.stop - start, resamples, n))
        drawn += (np.arange(runs.stop - start) * n)[:, None, None]  # the drawn requests' places in the runs' rows
        tpot, tokens, e2e = np.take(requests[:, runs].reshape(3, -1), drawn, axis=1)  # each runs x resamples x n
        low, high = _smallest(tpot, (lo, hi))
        x[runs] = 1000.0 / interpolate(low, high, h, lo)
        y[runs] = per_gpu[runs, None] * (_row_sums(tokens) / _row_sums(e2e)) / rate[runs, None]
    return x, y


def _smallest(values: np.ndarray, ks: Sequence[int]) -> list[np.ndarray]:
    """The k-th smallest (0-based) of each row of ``values`` (its last axis) for each k in ``ks``. A row of fewer
    than 8 values is sorted by compare-exchanges of whole columns (odd-even transposition: a few operations per row
    where sorting row by row pays numpy's cost per row); a longer one by ``np.sort``."""
    n = values.shape[-1]
    if n >= 8:
        ordered = np.sort(values, axis=-1)
        return [ordered[..., k] for k in ks]
    columns = [values[..., j] for j in range(n)]
    for sweep in range(n):
        for j in range(sweep % 2, n - 1, 2):
            columns[j], columns[j + 1] = np.minimum(columns[j], columns[j + 1]), np.maximum(columns[j], columns[j + 1])
    return [columns[k] for k in ks]


def _row_sums(drawn: np.ndarray) -> np.ndarray:
    """The sum of each row of ``drawn`` (its last axis) as numpy sums a row, to the bit. numpy adds a row of fewer
    than 8 values one by one from 0, which adding the columns in turn does at a few operations per row; a longer row
    is summed by numpy (pairwise)."""
    if drawn.shape[-1] >= 8:
        found: np.ndarray = drawn.sum(axis=-1)
        return found
    total = np.zeros(drawn.shape[:-1])
    for column in range(drawn.shape[-1]):
        total += drawn[..., column]
    return total


@functools.lru_cache(maxsize=256)
def _order_statistic(n: int, q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the q-quantile of n requests drawn with replacement from a run's n lands among the run's sorted TPOTs.

    It is the run's empirical quantile function at U ~ Beta(h + 1, n - h), h = (n - 1) q (the order statistic of n
    uniforms at that rank), i.e. the (j + 1)-th smallest TPOT with P(index <= j) = cdf[j] = P(U <= (j + 1) / n), the
    regularised incomplete beta function. An index is drawn by inversion from one uniform V in [0, 1): the number
    of cdf values <= V. ``guide`` gives it for each of _CELLS equal cells of [0, 1) that no step of the cdf falls
    in (``steps`` False); the few others are searched. The same distribution as drawing U itself, at a few
    operations per replicate instead of two gamma variates."""
    h = (n - 1) * q
    cdf = betainc(h + 1, n - h, np.arange(1, n + 1) / n)
    cdf[-1] = 1.0
    edges = np.arange(_CELLS + 1) / _CELLS
    guide = np.searchsorted(cdf, edges[:-1], side="right")
    steps = guide != np.searchsorted(cdf, edges[1:], side="left")
    for table in (cdf, guide, steps):
        table.flags.writeable = False  # shared by every call with this n and q
    return cdf, guide, steps


def _quantile_indices(n: int, q: float, raw: np.ndarray) -> np.ndarray:
    """The order statistic (0-based index among n sorted TPOTs) of the q-quantile of n draws, for each raw 64-bit
    draw in ``raw`` (uint64, ``Generator.bit_generator.random_raw``): its uniform V is the double numpy's
    ``Generator.random`` makes of it, (raw >> 11) x 2 ** -53, whose guide cell is its top _CELL_BITS bits
    (``_order_statistic``); V itself is made only in the cells the table cannot answer."""
    cdf, guide, steps = _order_statistic(n, q)
    cell = (raw >> np.uint64(64 - _CELL_BITS)).view(np.int64)
    idx: np.ndarray = guide[cell]
    odd = steps[cell]
    if odd.any():
        idx[odd] = np.searchsorted(cdf, (raw[odd] >> np.uint64(11)) * _DOUBLE, side="right")
    return idx


def _large_x(points: Sequence[RunPoint], q: float, raw: np.ndarray) -> np.ndarray:
    """Replicates of the interactivity of runs of one request count n >= NORMAL_FROM_REQUESTS without drawing their
    requests one by one (drawing costs n random numbers per replicate, a year's headline pair billions), given raw
    64-bit draws (runs x resamples, for the uniforms): 1000 / the TPOT at the order statistic drawn from the uniforms
    (``_quantile_indices``)."""
    n = len(points[0].tpot_ms)
    per_user = 1000.0 / np.sort(np.stack([p.tpot_ms for p in points]), axis=1)
    found: np.ndarray = np.take_along_axis(per_user, _quantile_indices(n, q, raw), axis=1)
    return found


def _throughput_sd(points: Sequence[RunPoint]) -> np.ndarray:
    """Per run of one request count n, the sd of its resampled tok/s/GPU by the normal approximation of the ratio
    estimator, as bootstrap.py draws it (rate* / rate = 1 + sd z): tok/s/GPU x sd. Its interactivity is drawn
    independently of it: at this many requests, the run-to-run and night-to-night spread the bootstrap also draws
    outweighs their correlation within a run."""
    n = len(points[0].tpot_ms)
    tokens, e2e = np.stack([p.tokens for p in points]), np.stack([p.e2e_s for p in points])
    rate = tokens.sum(axis=1) / e2e.sum(axis=1)
    residual = tokens - rate[:, None] * e2e
    sd = np.sqrt(np.einsum("ij,ij->i", residual, residual) / n / n) / (rate * e2e.mean(axis=1))
    found: np.ndarray = sd * np.array([p.tok_s_per_gpu for p in points])
    return found


def _replicates_of(
    points: Sequence[RunPoint], q: float, resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each point's replicates of (interactivity, tok/s/GPU): points x resamples each, from one stream, and the sd of
    each point's tok/s/GPU's normal part (points; ``_run_replicates``). The large runs come in chunks of _BATCH_RUNS
    in the points' order: the chunk's uniforms, then its runs of one request count at once (``_large_x``); then the
    chunk's other runs in order (``_run_replicates``), a stretch of them of one request count drawn at once
    (``_drawn``: the same numbers as run after run)."""
    x, y = np.empty((len(points), resamples)), np.empty((len(points), resamples))
    noise = np.zeros(len(points))
    for start in range(0, len(points), _BATCH_RUNS):
        chunk = points[start : start + _BATCH_RUNS]
        large: dict[int, list[int]] = defaultdict(list)
        for i, p in enumerate(chunk):
            if len(p.tpot_ms) >= NORMAL_FROM_REQUESTS:
                large[len(p.tpot_ms)].append(i)
        # the chunk's uniforms as raw draws (the same numbers Generator.random would use)
        raw = rng.bit_generator.random_raw((sum(len(rows) for rows in large.values()), resamples))
        at = 0
        for rows in large.values():
            members, where = [chunk[i] for i in rows], [start + i for i in rows]
            x[where] = _large_x(members, q, raw[at : at + len(rows)])
            at += len(rows)
            y[where] = np.array([p.tok_s_per_gpu for p in members])[:, None]
            noise[where] = _throughput_sd(members)
        # then its other runs in order: those of fewer than 2 requests take no numbers; the others draw theirs in
        # turn, each stretch of one request count at once
        for i in [i for i, p in enumerate(chunk) if len(p.tpot_ms) < 2]:
            x[start + i], y[start + i], noise[start + i] = _run_replicates(chunk[i], q, resamples, rng)
        drawn = [i for i, p in enumerate(chunk) if 2 <= len(p.tpot_ms) < NORMAL_FROM_REQUESTS]
        for _, stretch in itertools.groupby(drawn, key=lambda i: len(chunk[i].tpot_ms)):
            rows = list(stretch)
            where = [start + i for i in rows]
            x[where], y[where] = _drawn([chunk[i] for i in rows], q, resamples, rng)
    return x, y, noise


def replicate_levels(
    points: Sequence[RunPoint], q: float, resamples: int, rng: np.random.Generator, draws: NightDraws
) -> dict[int, np.ndarray]:
    """Per level: a 3 x resamples array of replicates of (interactivity, tok/s/GPU, USD per GPU-second); NaN in a
    replicate that drew none of the level's nights. ``draws``: the side's nights drawn (bootstrap.night_draws).
    Level by level (by concurrency): its runs' replicates (``_replicates_of``, the runs by night and run id), then
    per night (in order) with several runs, the runs drawn within it; a night of one run takes no numbers (the mean
    of one drawn run is its replicate), and those nights are weighted in batches. The large runs' normal parts of
    tok/s/GPU are independent normals: their weighted sum in a replicate is one normal whose variance is the sum of
    their weights squared times their variances, drawn last, one per replicate (the same distribution as a normal
    per run and replicate, at a 1,000th of the draws on a side of 1,000 nights:
    docs/dev/decisions/0008-summed-normal-parts.md)."""
    by_level: dict[int, dict[str, list[RunPoint]]] = defaultdict(lambda: defaultdict(list))
    for p in sorted(points, key=lambda p: (p.concurrency, p.night, p.run_id)):
        by_level[p.concurrency][p.night].append(p)
    cols = np.arange(resamples)
    found = {}
    for level, nights in sorted(by_level.items()):
        members = [p for night in sorted(nights) for p in nights[night]]
        x, y, noise = _replicates_of(members, q, resamples, rng)
        k = np.array([p.usd_per_gpu_s for p in members])
        total, weight = np.zeros((3, resamples)), np.zeros(resamples)
        spread = np.zeros(resamples)  # the variance of total[1]'s normal part
        alone: list[tuple[str, int]] = []  # (night, its run's row) of the nights with one run
        first = 0
        for night in sorted(nights):
            size, count = len(nights[night]), draws[night]
            if size == 1:
                alone.append((night, first))
            else:
                pick = rng.integers(0, size, size=(size, resamples))
                if noise[first : first + size].any():  # how often each run is drawn, per replicate (size x resamples)
                    times = (pick[None, :, :] == np.arange(size)[:, None, None]).sum(axis=1)
                    spread += (count / size) ** 2 * np.einsum("i,ir->r", noise[first : first + size] ** 2, times**2)
                pick += first
                total[0] += count * x[pick, cols].mean(axis=0)
                total[1] += count * y[pick, cols].mean(axis=0)
                total[2] += count * k[pick].mean(axis=0)
                weight += count
            first += size
        for start in range(0, len(alone), _BATCH_RUNS):
            batch = alone[start : start + _BATCH_RUNS]
            counts = np.stack([draws[night] for night, _ in batch]).astype(float)  # nights x resamples
            rows = [row for _, row in batch]
            total[0] += np.einsum("ir,ir->r", counts, x[rows])
            total[1] += np.einsum("ir,ir->r", counts, y[rows])
            total[2] += np.einsum("i,ir->r", k[rows], counts)
            weight += counts.sum(axis=0)
            spread += np.einsum("i,ir->r", noise[rows] ** 2, counts * counts)
        if spread.any():
            total[1] += np.sqrt(spread) * rng.standard_normal(resamples)
        with np.errstate(invalid="ignore", divide="ignore"):
            found[level] = np.where(weight > 0, total / np.where(weight > 0, weight, 1), np.nan)
    return found


def load_points(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[tuple[str, str, int]],
    basis: CostBasis,
    dates: tuple[str, str] | None = None,
) -> list[RunPoint]:
    """A RunPoint per (run_id, night, concurrency) priced on ``basis``: its tok/s/GPU, GPUs, cost, configuration
    (hardware and config_id) and SLO figures from view
    frontier_points (the one place the frontier's figures come from; view frontier adds the pareto flag, which
    needs every run of the store's platforms), its requests with a TPOT from view frontier_requests (a row per run,
    cached by the store). ``dates``: the runs' first and last date (the cache is partitioned by month, and a file
    whose dates miss them is not read). A run without a price on the basis or without a throughput is left out."""
    ids = [run_id for run_id, _, _ in runs]
    first, last = dates if dates is not None else (None, None)
    rows = con.execute(
        f"SELECT * FROM frontier_run_points($basis, {IDS}, first_date := $first, last_date := $last)",
        {"basis": str(basis), "ids": id_list(ids), "first": first, "last": last},
    ).fetchall()
    figures = {row[0]: row[1:] for row in rows if row[2] is not None and row[3]}
    requests = _requests_of(con, ids, dates, {run_id for run_id, f in figures.items() if f[3]})
    empty = np.array([])
    found = []
    for run_id, night, level in runs:
        if run_id not in figures:
            continue
        gpus, per_gpu, per_gpu_s, steady, config, ttft, per_user = figures[run_id]
        tpot, tokens, e2e = requests.get(run_id, (empty, empty, empty))
        found.append(
            RunPoint(
                run_id,
                night,
                level,
                int(gpus),
                float(per_gpu),
                float(per_gpu_s),
                tpot,
                tokens,
                e2e,
                bool(steady),
                str(config),
                ttft,
                per_user,
            )
        )
    return found


def _requests_of(
    con: duckdb.DuckDBPyConnection, ids: list[str], dates: tuple[str, str] | None, steady: set[str]
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per run: its ok requests with a TPOT (view frontier_requests, in request order): TPOT (ms), output tokens,
    e2e (s); of a run in ``steady`` (its point is its steady state, view frontier_points), only those that decoded
    in its steady window (macro in_steady), as its steady figures count them. ``dates``: as load_points'. Each row
    comes back with its run's position in ``ids``, not the run's id."""
    if not ids:
        return {}
    first, last = dates if dates is not None else (None, None)
    table = con.execute(
        f"SELECT * FROM frontier_run_requests({IDS}, first_date := $first, last_date := $last)",
        {"ids": id_list(ids), "first": first, "last": last},
    ).fetch_arrow_table()
    parts = [list_parts(table.column(c)) for c in ("tpot_ms", "tokens", "e2e_s", "in_steady")]
    lengths = parts[0][1]
    runs = [ids[i] for i in table.column("idx").to_numpy()]
    # every run's requests at once: a steady run's those that decoded in its window, another run's all
    whole = np.repeat(np.array([run_id not in steady for run_id in runs], dtype=bool), lengths)
    keep = whole | filled_flags(parts[3][0])
    tpot, tokens, secs = (np.asarray(x.to_numpy(zero_copy_only=False), dtype=float)[keep] for x, _ in parts[:3])
    ends = np.concatenate(([0], np.cumsum(keep)))[np.cumsum(lengths)]  # each run's last kept request, + 1
    found = {}
    for row, run_id in enumerate(runs):
        span = slice(int(ends[row - 1]) if row else 0, int(ends[row]))
        if span.stop > span.start:
            found[run_id] = (tpot[span], tokens[span], secs[span])
    return found
