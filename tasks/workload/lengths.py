"""draw_length: one token length from a ``LengthDist``, a pure function of (distribution, seed, key).

Each draw seeds its own ``random.Random`` from a text key (Python hashes a str seed with SHA-512, the same in
every process and on every platform), so request i's lengths never depend on which worker or process built
requests before it, and a later multi-process load generator can rebuild any request from (seed, index) alone.

- fixed      value
- uniform    randint(min, max)
- normal     round(gauss(mean, stddev)), clamped to [min, max]
- lognormal  round(lognormvariate(mu, sigma)) with sigma^2 = ln(1 + stddev^2 / mean^2), mu = ln(mean) - sigma^2 / 2
             (so the length itself has that mean and standard deviation), clamped to [min, max]
"""

from __future__ import annotations

import math
import random

from tcobench.schemas import LengthDist, LengthKind

__all__ = ["draw_length", "rng_for"]


def rng_for(*key: object) -> random.Random:
    """A generator seeded from ``key`` (e.g. seed, run key, phase, index, purpose): same key, same numbers."""
    return random.Random(":".join(str(part) for part in key))


def draw_length(dist: LengthDist, *key: object) -> int:
    """A length in tokens, within [dist.lower, dist.upper]."""
    if dist.kind is LengthKind.fixed:
        return dist.lower
    rng = rng_for(*key)
    if dist.kind is LengthKind.uniform:
        return rng.randint(dist.lower, dist.upper)
    mean, sd = float(dist.mean or 0.0), float(dist.stddev or 0.0)
    if dist.kind is LengthKind.normal:
        value = rng.gauss(mean, sd)
    else:
        sigma2 = math.log1p((sd / mean) ** 2)
        value = rng.lognormvariate(math.log(mean) - sigma2 / 2, math.sqrt(sigma2))
    return min(dist.upper, max(dist.lower, round(value)))
