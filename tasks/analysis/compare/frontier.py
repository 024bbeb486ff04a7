"""frontier: a platform's throughput per GPU against interactivity, its Pareto points and their interpolation.

A run is a point: interactivity x = 1000 / TPOT quantile (ms; the median by default) in tok/s per user, and
output tok/s / GPUs (view frontier, from run_summary) in tok/s per GPU. A side's points are its concurrency
levels: each level's figures are night-weighted means over its runs (the mean over nights of each night's mean,
the rule of macro night_weighted_mean that compare uses), so repeated nights do not make a zig-zag of lucky and
unlucky runs. A level is a Pareto point when no other level of the side has both a higher interactivity and a
higher throughput. The frontier is scipy's PchipInterpolator (monotone piecewise-cubic, docs/decisions/0005)
through the Pareto points sorted by interactivity, and never extrapolates: a target outside the measured range
has no value (NaN). One Pareto point is not a frontier (``build`` gives None).

Design notes: docs/architecture.md#tasks-compare-frontier.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np
from scipy.interpolate import PchipInterpolator

from tcobench.schemas import CostBasis

from ...store.rows import IDS, id_list
from ..quantile import quantile, quantile_rows
from .bootstrap import NORMAL_FROM_REQUESTS, NightDraws

__all__ = [
    "Frontier",
    "Level",
    "RunPoint",
    "build",
    "level_points",
    "load_points",
    "pareto_mask",
    "pchip_batch",
    "replicate_levels",
]

_DRAW_CELLS = 4_000_000  # request indices drawn at once per run (replicates are drawn in chunks of this many)
_BATCH_RUNS = 256  # runs whose replicates are computed at once (their draws, a few MB, stay small)


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

    @functools.cached_property
    def _curve(self) -> PchipInterpolator:
        """One interpolant of both columns (tok/s per GPU, USD per GPU-second): each is PCHIP of its own."""
        return PchipInterpolator(self.x, np.column_stack([self.y, self.k]), extrapolate=False)

    def at(self, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(tok/s per GPU, USD per GPU-second) at each target; NaN outside [low, high] (never extrapolated)."""
        inside = (targets >= self.low) & (targets <= self.high)
        clipped = np.clip(targets, self.low, self.high)  # the ends exactly, not a rounding step outside
        both = self._curve(clipped)
        return np.where(inside, both[:, 0], np.nan), np.where(inside, both[:, 1], np.nan)


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
        d = np.concatenate([_edge(h[:, :1], h[:, 1:2], slope[:, :1], slope[:, 1:2]), np.where(flat, 0.0, inner),
                            _edge(h[:, -1:], h[:, -2:-1], slope[:, -1:], slope[:, -2:-1])], axis=1)  # fmt: skip
    idx = np.clip((x[:, :, None] <= targets[None, None, :]).sum(axis=1) - 1, 0, x.shape[1] - 2)  # curves x targets
    rows = np.arange(x.shape[0])[:, None]
    x0, width = x[rows, idx], h[rows, idx, 0]
    t = ((targets[None, :] - x0) / width)[:, :, None]
    y0, y1, d0, d1 = y[rows, idx], y[rows, idx + 1], d[rows, idx], d[rows, idx + 1]
    w = width[:, :, None]
    value = (2 * t**3 - 3 * t**2 + 1) * y0 + (t**3 - 2 * t**2 + t) * w * d0 + (3 * t**2 - 2 * t**3) * y1
    value += (t**3 - t**2) * w * d1
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


def _night_mean(values: dict[str, list[float]]) -> float:
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
        x = _night_mean({n: [float(per_user[i]) for i in ps] for n, ps in nights.items()})
        y = _night_mean({n: [points[i].tok_s_per_gpu for i in ps] for n, ps in nights.items()})
        k = _night_mean({n: [points[i].usd_per_gpu_s for i in ps] for n, ps in nights.items()})
        found.append(Level(level, x, y, k))
    if not found:
        return found
    mask = pareto_mask(np.array([f.interactivity for f in found]), np.array([f.tok_s_per_gpu for f in found]))
    return [Level(f.concurrency, f.interactivity, f.tok_s_per_gpu, f.usd_per_gpu_s, bool(m))
            for f, m in zip(found, mask, strict=True)]  # fmt: skip


def _run_replicates(p: RunPoint, q: float, resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A run's replicates of (interactivity, tok/s/GPU), its requests drawn with replacement (bootstrap.py); from
    NORMAL_FROM_REQUESTS requests on, by their large-sample forms (``_approximate_replicates``)."""
    n = len(p.tpot_ms)
    if n < 2:
        return np.full(resamples, p.interactivity(q)), np.full(resamples, p.tok_s_per_gpu)
    if n >= NORMAL_FROM_REQUESTS:
        return _approximate_replicates(p, q, resamples, rng)
    rate = p.tokens.sum() / p.e2e_s.sum()
    xs, ys = [], []
    step = max(1, _DRAW_CELLS // n)
    for start in range(0, resamples, step):
        idx = rng.integers(0, n, size=(min(step, resamples - start), n))
        xs.append(1000.0 / quantile_rows(p.tpot_ms[idx], q))
        ys.append(p.tok_s_per_gpu * (p.tokens[idx].sum(axis=1) / p.e2e_s[idx].sum(axis=1)) / rate)
    return np.concatenate(xs), np.concatenate(ys)


def _approximate_replicates(
    p: RunPoint, q: float, resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A run's replicates without drawing its n requests one by one (n >= NORMAL_FROM_REQUESTS; drawing costs n
    random numbers per replicate, a year's headline pair billions). The q-quantile of n draws from the run's TPOTs
    is the run's empirical quantile function at U ~ Beta(h + 1, n - h), h = (n - 1) q (the order statistic of n
    uniforms at that rank); the throughput's ratio estimator is its normal approximation, as bootstrap.py draws
    it (rate* / rate = 1 + sd z). The two are drawn independently: at this many requests, the run-to-run and
    night-to-night spread the bootstrap also draws outweighs their correlation within a run."""
    u, z = _approximate_draws(len(p.tpot_ms), q, resamples, rng)
    x, y = _approximate_rows([p], u[None, :], z[None, :])
    return x[0], y[0]


def _approximate_draws(n: int, q: float, resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A large run's random numbers, in the stream's order: its Beta(h + 1, n - h) draws (h = (n - 1) q), then
    its standard normal ones (``_approximate_replicates``)."""
    h = (n - 1) * q
    u = rng.beta(h + 1, n - h, size=resamples)
    return u, rng.standard_normal(resamples)


def _replicates_of(points: Sequence[RunPoint], q: float, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``_run_replicates`` of each point in turn, from one stream, with its cost rate: points x 3 x resamples of
    (interactivity, tok/s/GPU, USD per GPU-second). The random numbers are drawn run by run in the stream's order
    (``_approximate_draws`` for a large run, as ``_approximate_replicates`` draws them); the large runs' arithmetic
    comes after, for the runs of one request count at once (``_approximate_rows``): a call per run on a few small
    arrays cost most of a comparison's replicates."""
    found = np.empty((len(points), 3, resamples))
    for start in range(0, len(points), _BATCH_RUNS):
        chunk = points[start : start + _BATCH_RUNS]
        large: dict[int, list[int]] = defaultdict(list)
        u, z = np.empty((len(chunk), resamples)), np.empty((len(chunk), resamples))
        for i, p in enumerate(chunk):
            n = len(p.tpot_ms)
            if n >= NORMAL_FROM_REQUESTS:
                u[i], z[i] = _approximate_draws(n, q, resamples, rng)
                large[n].append(i)
            else:
                found[start + i, 0], found[start + i, 1] = _run_replicates(p, q, resamples, rng)
            found[start + i, 2] = p.usd_per_gpu_s
        for rows in large.values():
            at = [start + i for i in rows]
            found[at, 0], found[at, 1] = _approximate_rows([chunk[i] for i in rows], u[rows], z[rows])
    return found


def _approximate_rows(points: Sequence[RunPoint], u: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_approximate_replicates`` of runs of one request count n, given their draws: u (runs x resamples, the
    Beta draws) and z (the normal ones)."""
    n = len(points[0].tpot_ms)
    ordered = np.sort(np.stack([p.tpot_ms for p in points]), axis=1)
    tpot = np.take_along_axis(ordered, np.clip(np.ceil(u * n).astype(np.int64) - 1, 0, n - 1), axis=1)
    tokens, e2e = np.stack([p.tokens for p in points]), np.stack([p.e2e_s for p in points])
    rate = tokens.sum(axis=1) / e2e.sum(axis=1)
    residual = tokens - rate[:, None] * e2e
    squares = np.array([r @ r for r in residual])  # a dot per run: a batched sum would add in another order
    sd = np.sqrt(squares / n / n) / (rate * e2e.mean(axis=1))
    per_gpu = np.array([p.tok_s_per_gpu for p in points])
    return 1000.0 / tpot, per_gpu[:, None] * (1.0 + sd[:, None] * z)


def replicate_levels(
    points: Sequence[RunPoint], q: float, resamples: int, rng: np.random.Generator, draws: NightDraws
) -> dict[int, np.ndarray]:
    """Per level: a 3 x resamples array of replicates of (interactivity, tok/s/GPU, USD per GPU-second); NaN in a
    replicate that drew none of the level's nights. ``draws``: the side's nights drawn (bootstrap.night_draws)."""
    ordered = sorted(points, key=lambda p: p.run_id)
    reps = _replicates_of(ordered, q, resamples, rng)
    row = {p.run_id: i for i, p in enumerate(ordered)}
    by_level: dict[int, dict[str, list[RunPoint]]] = defaultdict(lambda: defaultdict(list))
    for p in sorted(points, key=lambda p: (p.concurrency, p.night, p.run_id)):
        by_level[p.concurrency][p.night].append(p)
    cols = np.arange(resamples)
    found = {}
    for level, nights in sorted(by_level.items()):
        total, weight = np.zeros((3, resamples)), np.zeros(resamples)
        for night, members in sorted(nights.items()):
            count = draws[night]
            if len(members) == 1:  # the mean of one drawn run is its replicate; drawing 1 of 1 takes no numbers
                total += count * reps[row[members[0].run_id]]
            else:
                matrix = reps[[row[m.run_id] for m in members]]  # members x 3 x resamples
                pick = rng.integers(0, len(members), size=(len(members), resamples))
                total += count * matrix[pick, :, cols].transpose(0, 2, 1).mean(axis=0)
            weight += count
        with np.errstate(invalid="ignore", divide="ignore"):
            found[level] = np.where(weight > 0, total / np.where(weight > 0, weight, 1), np.nan)
    return found


def load_points(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[tuple[str, str, int]],
    basis: CostBasis,
    dates: tuple[str, str] | None = None,
) -> list[RunPoint]:
    """A RunPoint per (run_id, night, concurrency) priced on ``basis``: its tok/s/GPU, GPUs and cost from view
    frontier_points (the one place the frontier's inputs come from; view frontier adds the pareto flag, which
    needs every run of the store's platforms), its requests with a TPOT from request_metrics.
    A run without a price on the basis or without a throughput is left out."""
    ids = [run_id for run_id, _, _ in runs]
    rows = con.execute(
        "SELECT run_id, gpus_counted, output_tok_s_per_gpu, usd_per_gpu_s, steady, steady_start_ns, steady_end_ns "
        f"FROM frontier_points WHERE basis = $basis AND run_id IN (SELECT unnest({IDS}))",
        {"basis": str(basis), "ids": id_list(ids)},
    ).fetchall()
    figures = {row[0]: row[1:5] for row in rows}
    requests = _requests_of(con, ids, dates, {row[0]: (row[5], row[6]) for row in rows if row[4]})
    empty = np.array([])
    found = []
    for run_id, night, level in runs:
        gpus, per_gpu, per_gpu_s, steady = figures.get(run_id, (None, None, None, False))
        if per_gpu is None or not per_gpu_s:
            continue
        tpot, tokens, e2e = requests.get(run_id, (empty, empty, empty))
        found.append(RunPoint(run_id, night, level, int(gpus), float(per_gpu), float(per_gpu_s), tpot, tokens, e2e,
                              bool(steady)))  # fmt: skip
    return found


def _requests_of(
    con: duckdb.DuckDBPyConnection,
    ids: list[str],
    dates: tuple[str, str] | None,
    windows: dict[str, tuple[int, int]],
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per run: its ok requests with a TPOT: TPOT (ms), output tokens, e2e (s), in scan order; of a run with a steady
    state (``windows``: its steady_start_ns, steady_end_ns from view frontier_points, read by load_points), only
    those that decoded in it (macro in_steady), as its steady figures count them. The windows are bound as text (as the
    ids are, rows.id_list), not read from the view again: that view over the whole store cost more than the
    requests themselves. Each request comes back with its run's position in ``ids``, not the run's id: a text per
    request cost more to read and to group than the figures."""
    query = (
        f"WITH w AS (SELECT unnest({IDS}) AS run_id, unnest(range($count)) AS idx, "
        "unnest(list_transform(string_split($lo, ','), v -> NULLIF(v, '')::BIGINT)) AS lo, "
        "unnest(list_transform(string_split($hi, ','), v -> NULLIF(v, '')::BIGINT)) AS hi) "
        "SELECT w.idx, m.tpot_ns / 1e6 AS tpot_ms, m.output_tokens AS tokens, m.e2e_ns / 1e9 AS e2e_s "
        "FROM request_metrics AS m JOIN w ON w.run_id = m.run_id "
        "WHERE m.ok AND m.tpot_ns > 0 AND m.output_tokens IS NOT NULL AND m.e2e_ns > 0 "
        "AND (w.lo IS NULL OR in_steady(m.start_ns + m.ttft_ns, m.decode_ns, w.lo, w.hi))"
        + (" AND m.date BETWEEN $first AND $last" if dates is not None else "")
    )  # fmt: skip
    params: dict[str, object] = {
        "ids": id_list(ids),
        "count": len(ids),
        "lo": ",".join(str(windows[i][0]) if i in windows else "" for i in ids),  # "": no steady state (NULL)
        "hi": ",".join(str(windows[i][1]) if i in windows else "" for i in ids),
    }
    params.update({"first": dates[0], "last": dates[1]} if dates is not None else {})
    table = con.execute(query, params).fetch_arrow_table()
    if not table.num_rows:
        return {}
    code = table.column("idx").to_numpy()
    order = np.argsort(code, kind="stable")
    bounds = np.searchsorted(code[order], np.arange(len(ids) + 1))
    tpot, tokens, secs = (table.column(c).to_numpy().astype(float)[order] for c in ("tpot_ms", "tokens", "e2e_s"))
    spans = [slice(bounds[i], bounds[i + 1]) for i in range(len(ids))]
    return {run_id: (tpot[span], tokens[span], secs[span])
            for run_id, span in zip(ids, spans, strict=True) if span.stop > span.start}  # fmt: skip
