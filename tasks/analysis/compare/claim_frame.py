"""claim_frame: the one rule that judges a claim ("A is N times as cost-efficient as B") against a comparison.

The claim's frame is its targets: the interactivity targets when they were asked for (``--interactivity``), else
the concurrency levels both sides share. Each target of the frame is supported when the claimed ratio is at most the
upper end of the measured interval (the claim lies inside it, or below it: the measured advantage is at least the
claimed one), and not supported when the claim lies above the interval or the target got no ratio (refused). The
other frame is shown as context, labelled as such; it never decides. compare's words, its JSON (``claim`` and
``unsupported``), the report's headline and ``--fail-if-unsupported``'s exit status 5 all read ``judge``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tcobench.tasks.analysis.compare.bootstrap import Verdict

if TYPE_CHECKING:
    from tcobench.tasks.analysis.compare.comparison import Comparison

__all__ = ["ClaimJudgement", "ClaimTarget", "Frame", "judge", "target_words"]

Frame = Literal["interactivity", "concurrency"]


def target_words(
    claim: float,
    verdict: Verdict | None,
    ratio: float | None,
    lo: float | None,
    hi: float | None,
    pct: str,
    reason: str | None = None,
) -> str:
    """How a verdict on one target reads, without a legend: 'supported: the measured advantage 5.72x is at least the
    claimed 5x (95% CI 5.71-5.73)'; a refused target (no ratio) is not supported, with why."""
    if verdict is None or ratio is None or lo is None or hi is None:
        return f"not supported: no measured ratio ({reason or 'refused'})"
    ci = f"{pct} CI {lo:.2f}-{hi:.2f}"
    if verdict is Verdict.above:
        return f"not supported: the measured advantage {ratio:.2f}x is smaller than the claimed {claim:g}x ({ci})"
    if verdict is Verdict.below:
        return f"supported: the measured advantage {ratio:.2f}x is at least the claimed {claim:g}x ({ci})"
    return f"supported: the claimed {claim:g}x lies inside the {ci} of the measured {ratio:.2f}x"


@dataclass(frozen=True)
class ClaimTarget:
    """One target of the claim's frame and the verdict there."""

    where: str  # "42 tok/s/user" or "concurrency 4"
    target: float | None  # the interactivity target (tok/s per user), or None on the concurrency frame
    concurrency: int | None  # the level, or None on the interactivity frame
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: Verdict | None  # None: refused (no ratio)
    reason: str | None  # why it was refused
    words: str

    @property
    def supported(self) -> bool:
        return self.verdict is not None and self.verdict is not Verdict.above

    def unsupported_text(self) -> str:
        """'42 tok/s/user: measured 1.58x, CI 1.47-1.69' or '20 tok/s/user: no ratio (...)'."""
        if self.ratio is None:
            return f"{self.where}: no ratio ({self.reason})"
        return f"{self.where}: measured {self.ratio:.2f}x, CI {self.ci_low:.2f}-{self.ci_high:.2f}"


@dataclass(frozen=True)
class ClaimJudgement:
    """A claim judged in its frame, and the other frame's figures as context."""

    claim: float
    frame: Frame
    targets: tuple[ClaimTarget, ...]
    context: str | None  # the other frame in one line, labelled "(not the claim's frame)"; None: nothing there

    @property
    def supported(self) -> bool:
        return bool(self.targets) and all(t.supported for t in self.targets)

    @property
    def unsupported(self) -> tuple[ClaimTarget, ...]:
        return tuple(t for t in self.targets if not t.supported)

    def summary(self) -> str:
        """One line: whether the claim holds at every target of its frame."""
        said = f"the claim 'A is {self.claim:g}x as cost-efficient as B'"
        frame = "interactivity targets" if self.frame == "interactivity" else "concurrency levels"
        where = ", ".join(t.where for t in self.targets)
        if self.supported:
            return f"{said} is supported at every one of its {frame} ({where})"
        bad = self.unsupported
        return f"{said} is not supported at {len(bad)} of its {len(self.targets)} {frame}: " + ", ".join(
            t.where for t in bad
        )


def _interactivity_targets(c: Comparison, pct: str) -> tuple[ClaimTarget, ...]:
    assert c.frontier is not None and c.claim is not None
    found = []
    for t in c.frontier.targets:
        verdict = Verdict(t.verdict) if t.verdict is not None and t.ratio is not None else None
        words = target_words(c.claim, verdict, t.ratio, t.ci_low, t.ci_high, pct, t.reason)
        found.append(
            ClaimTarget(
                f"{t.target:g} tok/s/user", t.target, None, t.ratio, t.ci_low, t.ci_high, verdict, t.reason, words
            )
        )
    return tuple(found)


def _level_targets(c: Comparison, pct: str) -> tuple[ClaimTarget, ...]:
    assert c.claim is not None
    return tuple(
        ClaimTarget(
            s.where,
            None,
            s.concurrency,
            s.ratio,
            s.lo,
            s.hi,
            s.verdict,
            None,
            target_words(c.claim, s.verdict, s.ratio, s.lo, s.hi, pct),
        )
        for s in c.strata
    )


def _concurrency_context(c: Comparison, pct: str) -> str | None:
    if c.pooled is not None:
        ratio, lo, hi = c.pooled
        return (
            f"at equal concurrency (not the claim's frame): {ratio:.2f}x ({pct} CI {lo:.2f}-{hi:.2f}) over all levels "
            "(geometric mean)"
        )
    if c.strata:
        s = c.strata[0]
        ci = f"{pct} CI {s.lo:.2f}-{s.hi:.2f}"
        return f"at equal concurrency (not the claim's frame): {s.ratio:.2f}x ({ci}) at {s.where}"
    return None


def _interactivity_context(c: Comparison, pct: str) -> str | None:
    rows = [t for t in (c.frontier.targets if c.frontier is not None else ()) if t.ratio is not None]
    if not rows:
        return None
    return "at equal interactivity (not the claim's frame): " + "; ".join(
        f"{t.ratio:.2f}x ({pct} CI {t.ci_low:.2f}-{t.ci_high:.2f}) at {t.target:g} tok/s/user" for t in rows
    )


def judge(c: Comparison) -> ClaimJudgement | None:
    """The claim of ``c`` judged in its frame (module docstring); None without a claim."""
    if c.claim is None:
        return None
    pct = f"{c.confidence:.0%}"
    if c.frontier is not None and c.frontier.chosen:
        return ClaimJudgement(c.claim, "interactivity", _interactivity_targets(c, pct), _concurrency_context(c, pct))
    return ClaimJudgement(c.claim, "concurrency", _level_targets(c, pct), _interactivity_context(c, pct))
