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

from tcobench.tasks.analysis.compare.claim_frame import ClaimJudgement, judge

if TYPE_CHECKING:
    from tcobench.tasks.analysis.compare.comparison import Comparison
    from tcobench.tasks.analysis.compare.interactivity import FrontierComparison, TargetRow

__all__ = ["CSV_COLUMNS", "comparison_document", "comparison_rows", "named", "target_sentence", "unsupported"]

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
    "a_config",
    "b_config",
    "in_claim_frame",
    "supported",
)


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def named(side: str, config: str | None) -> str:
    """A side's name with its winning configuration: 'NVIDIA H200 (gpu-nv-01, declared; vllm 0.32.0, TP=4, 4 GPUs)'."""
    if not config:
        return side
    return f"{side[:-1]}; {config})" if side.endswith(")") else f"{side} ({config})"


def target_sentence(f: FrontierComparison, row: TargetRow) -> str:
    """'A-name (its configuration) is 0.64x as cost-efficient as B-name (its configuration) at 50 tok/s/user (95% CI
    0.60-0.69)', or why not."""
    at = f"at {row.target:g} tok/s/user"
    if row.ratio is None:
        return f"no ratio {at}: {row.reason}"
    ci = f"{f.confidence:.0%} CI {row.ci_low:.2f}-{row.ci_high:.2f}"
    a, b = named(f.a.name, row.a_config), named(f.b.name, row.b_config)
    if row.no_clear_winner:
        return f"no clear winner {at}: {a} vs {b}, ratio {row.ratio:.2f}x ({ci} straddles 1)"
    return f"{a} is {row.ratio:.2f}x as cost-efficient as {b} {at} ({ci})"


def unsupported(c: Comparison) -> list[str]:
    """The targets of the claim's frame where it is not supported (claim_frame.judge): its interval lies below the
    claim, or the target has no ratio. Empty without a claim."""
    found = judge(c)
    return [] if found is None else [t.unsupported_text() for t in found.unsupported]


def _claim(c: Comparison) -> dict[str, Any] | None:
    found = judge(c)
    if found is None:
        return None
    return {
        "ratio": found.claim,
        "frame": found.frame,
        "supported": found.supported,
        "summary": found.summary(),
        "targets": [
            {
                "where": t.where,
                "target": t.target,
                "concurrency": t.concurrency,
                "ratio": _num(t.ratio),
                "ci_low": _num(t.ci_low),
                "ci_high": _num(t.ci_high),
                "supported": t.supported,
                "verdict": t.verdict.value if t.verdict is not None else None,
                "reason": t.reason,
                "words": t.words,
            }
            for t in found.targets
        ],
        "context": found.context,
    }


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
        "a_config": row.a_config,
        "b_config": row.b_config,
        "a_config_id": row.a_config_id,
        "b_config_id": row.b_config_id,
        "a_config_share": _num(row.a_config_share),
        "b_config_share": _num(row.b_config_share),
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
                    "config_id": lv.config,
                }
                for lv in s.levels
            ],
            "configs": [
                {
                    "config_id": cfg.key,
                    "label": cfg.label,
                    "range": None if cfg.low is None else [cfg.low, cfg.high],
                    "gpu_counts": list(cfg.gpu_counts),
                }
                for cfg in s.configs
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
                "a_downtime_usd_per_m": _num(s.a_downtime_usd_per_m),
                "b_downtime_usd_per_m": _num(s.b_downtime_usd_per_m),
                "a_gco2e_per_m_output_tokens": _num(s.a_gco2e_per_m_output_tokens),
                "b_gco2e_per_m_output_tokens": _num(s.b_gco2e_per_m_output_tokens),
                "a_config_id": s.a_config_id,
                "b_config_id": s.b_config_id,
                "pair": s.pair,
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
        "claim_verdict": _claim(c),
        "unsupported": unsupported(c),
        "differences": list(c.differences),
        "notes": list(c.notes),
        "claim_grade": c.claim_grade.as_dict() if c.claim_grade is not None else None,
        "setup": [{"setting": d.setting, "a": list(d.a), "b": list(d.b)} for d in c.setup],
    }


def _frame_of(found: ClaimJudgement | None, frame: str, key: float | str) -> dict[str, Any]:
    """A row's in_claim_frame and supported columns (claim_frame.judge; None without a claim or outside the frame)."""
    if found is None or found.frame != frame:
        return {"in_claim_frame": False if found is not None else None, "supported": None}
    mine = [t for t in found.targets if (t.target if frame == "interactivity" else t.where) == key]
    return {"in_claim_frame": True, "supported": mine[0].supported if mine else None}


def comparison_rows(c: Comparison) -> list[dict[str, Any]]:
    """The document's rows flat (CSV_COLUMNS): one per interactivity target, then one per concurrency level."""
    rows: list[dict[str, Any]] = []
    found = judge(c)
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
                "a_config": t.a_config,
                "b_config": t.b_config,
                **_frame_of(found, "interactivity", t.target),
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
                "a_config": s.a_config_id,
                "b_config": s.b_config_id,
                **_frame_of(found, "concurrency", s.where),
            }
        )
    return rows
