"""document: a comparison as one JSON document (``compare --format json``) or flat rows (``--format csv``).

The JSON document holds what the table shows: the sides (``a``, ``b``: selection, description, name, measured
range), ``interactivity`` (one object per target: target, a_tok_s_per_gpu, b_tok_s_per_gpu, a_usd_per_m,
b_usd_per_m, ratio, ci_low, ci_high, reason; ratio null and reason set when the target is refused), the
crossover, ``concurrency`` (the per-concurrency rows), the pooled ratio, the verdicts and the notes.
``claim_grade`` is the claim-grade stamp (``{"passed", "rules": [{name, passed, value, required, where}]}``,
claim_grade.py; null when nothing was graded) and ``setup`` every setting whose values differ between the sides.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tcobench.tasks.analysis.compare.comparison import Comparison
    from tcobench.tasks.analysis.compare.interactivity import FrontierComparison, TargetRow

__all__ = ["CSV_COLUMNS", "comparison_document", "comparison_rows", "target_sentence", "unsupported"]

CSV_COLUMNS = (
    "kind",
    "target",
    "concurrency",
    "a_tok_s_per_gpu",
    "b_tok_s_per_gpu",
    "a_tok_s",
    "b_tok_s",
    "a_usd_per_m",
    "b_usd_per_m",
    "ratio",
    "ci_low",
    "ci_high",
    "verdict",
    "reason",
)


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def target_sentence(f: FrontierComparison, row: TargetRow) -> str:
    """'A-name is 0.64x as cost-efficient as B-name at 50 tok/s/user (95% CI 0.60-0.69)', or why not."""
    at = f"at {row.target:g} tok/s/user"
    if row.ratio is None:
        return f"no ratio {at}: {row.reason}"
    ci = f"{f.confidence:.0%} CI {row.ci_low:.2f}-{row.ci_high:.2f}"
    if row.no_clear_winner:
        return f"no clear winner {at}: {f.a.name} vs {f.b.name}, ratio {row.ratio:.2f}x ({ci} straddles 1)"
    return f"{f.a.name} is {row.ratio:.2f}x as cost-efficient as {f.b.name} {at} ({ci})"


def unsupported(c: Comparison) -> list[str]:
    """Where the claim is not supported: a target (or, without a frontier, a level or the pooled ratio) whose
    interval lies below the claim, or a target that has no ratio. Empty without a claim."""
    if c.claim is None:
        return []
    if c.frontier is not None and c.frontier.targets:
        return [
            f"{t.target:g} tok/s/user: "
            + (
                f"no ratio ({t.reason})"
                if t.ratio is None
                else f"measured {t.ratio:.2f}x, CI {t.ci_low:.2f}-{t.ci_high:.2f}"
            )
            for t in c.frontier.targets
            if t.ratio is None or t.verdict == "above"
        ]
    if c.pooled is not None:
        ratio, lo, hi = c.pooled
        return [f"all levels: measured {ratio:.2f}x, CI {lo:.2f}-{hi:.2f}"] if c.pooled_verdict == "above" else []
    return [
        f"concurrency {s.concurrency}: measured {s.ratio:.2f}x, CI {s.lo:.2f}-{s.hi:.2f}"
        for s in c.strata
        if s.verdict == "above"
    ]


def _target(row: TargetRow) -> dict[str, Any]:
    return {
        "target": row.target,
        "a_tok_s_per_gpu": _num(row.a_tok_s_per_gpu),
        "b_tok_s_per_gpu": _num(row.b_tok_s_per_gpu),
        "a_usd_per_m": _num(row.a_usd_per_m),
        "b_usd_per_m": _num(row.b_usd_per_m),
        "ratio": _num(row.ratio),
        "ci_low": _num(row.ci_low),
        "ci_high": _num(row.ci_high),
        "reason": row.reason,
        "covered": _num(row.covered),
        "no_clear_winner": row.no_clear_winner,
        "verdict": row.verdict,
    }


def _frontier(f: FrontierComparison | None) -> dict[str, Any]:
    if f is None:
        return {"interactivity": [], "crossover": None, "frontier_sides": None}
    sides = {
        label: {
            "name": s.name,
            "range": None if s.low is None else [s.low, s.high],
            "gpu_counts": list(s.gpu_counts),
            "levels": [
                {
                    "concurrency": lv.concurrency,
                    "interactivity": lv.interactivity,
                    "tok_s_per_gpu": lv.tok_s_per_gpu,
                    "usd_per_m": _num(lv.usd_per_m),
                    "pareto": lv.pareto,
                }
                for lv in s.levels
            ],
        }
        for label, s in (("a", f.a), ("b", f.b))
    }
    cross = f.crossover
    return {
        "interactivity": [_target(t) for t in f.targets],
        "interactivity_quantile": f.quantile,
        "targets_chosen": f.chosen,
        "crossover": None
        if cross is None
        else {
            "at": cross.at,
            "ci_low": cross.ci_low,
            "ci_high": cross.ci_high,
            "covered": cross.covered,
            "a_cheaper": [list(r) for r in cross.a_cheaper],
            "b_cheaper": [list(r) for r in cross.b_cheaper],
        },
        "frontier_sides": sides,
        "verdicts": [target_sentence(f, t) for t in f.targets],
    }


def comparison_document(c: Comparison) -> dict[str, Any]:
    """The whole comparison as JSON-ready data (module docstring)."""
    front = _frontier(c.frontier)
    return {
        "snapshot": c.snapshot,
        "basis": str(c.basis),
        "tokens": c.tokens,
        "confidence": c.confidence,
        "resamples": c.resamples,
        "seed": c.seed,
        "claim": c.claim,
        "a": {"selection": c.a.text, "description": c.a_desc, "name": c.frontier.a.name if c.frontier else None},
        "b": {"selection": c.b.text, "description": c.b_desc, "name": c.frontier.b.name if c.frontier else None},
        **front,
        "concurrency": [
            {
                "concurrency": s.concurrency,
                "a_runs": s.a_runs,
                "b_runs": s.b_runs,
                "a_nights": s.a_nights,
                "b_nights": s.b_nights,
                "a_tok_s": s.a_tok_s,
                "b_tok_s": s.b_tok_s,
                "a_usd_per_m": s.a_usd_per_m,
                "b_usd_per_m": s.b_usd_per_m,
                "ratio": s.ratio,
                "ci_low": s.lo,
                "ci_high": s.hi,
                "verdict": s.verdict.value if s.verdict else None,
            }
            for s in c.strata
        ],
        "pooled": None
        if c.pooled is None
        else {
            "ratio": c.pooled[0],
            "ci_low": c.pooled[1],
            "ci_high": c.pooled[2],
            "verdict": c.pooled_verdict.value if c.pooled_verdict else None,
        },
        "unsupported": unsupported(c),
        "differences": list(c.differences),
        "notes": list(c.notes),
        "claim_grade": c.claim_grade.as_dict() if c.claim_grade is not None else None,
        "setup": [{"setting": d.setting, "a": list(d.a), "b": list(d.b)} for d in c.setup],
    }


def comparison_rows(c: Comparison) -> list[dict[str, Any]]:
    """The document's rows flat (CSV_COLUMNS): one per interactivity target, then one per concurrency level."""
    rows: list[dict[str, Any]] = []
    for t in c.frontier.targets if c.frontier else ():
        rows.append(
            {
                "kind": "interactivity",
                "target": t.target,
                "concurrency": None,
                "a_tok_s_per_gpu": _num(t.a_tok_s_per_gpu),
                "b_tok_s_per_gpu": _num(t.b_tok_s_per_gpu),
                "a_tok_s": None,
                "b_tok_s": None,
                "a_usd_per_m": _num(t.a_usd_per_m),
                "b_usd_per_m": _num(t.b_usd_per_m),
                "ratio": _num(t.ratio),
                "ci_low": _num(t.ci_low),
                "ci_high": _num(t.ci_high),
                "verdict": t.verdict,
                "reason": t.reason,
            }
        )
    for s in c.strata:
        rows.append(
            {
                "kind": "concurrency",
                "target": None,
                "concurrency": s.concurrency,
                "a_tok_s_per_gpu": None,
                "b_tok_s_per_gpu": None,
                "a_tok_s": s.a_tok_s,
                "b_tok_s": s.b_tok_s,
                "a_usd_per_m": s.a_usd_per_m,
                "b_usd_per_m": s.b_usd_per_m,
                "ratio": s.ratio,
                "ci_low": s.lo,
                "ci_high": s.hi,
                "verdict": s.verdict.value if s.verdict else None,
                "reason": None,
            }
        )
    return rows
